#!/usr/bin/env bash
# The default command's accuracy over several seeded runs under both TensorFlows, one after the other (never in
# parallel: they would share the cores). Creates .venv-tf1/.venv-tf2 if needed; MNIST is fetched on first use.
#   bash bench/default_runs.sh --data_dir=DIR [--runs=5 --first_seed=1]
# LEGS="tf2" runs one leg only. About 35 minutes on an idle 2-core machine for 5 runs per TensorFlow.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for leg in ${LEGS:-tf1 tf2}; do
  venv=$("$root/scripts/make_venv.sh" "$leg" | tail -n 1)
  echo "=== $leg, $(uptime)"
  (cd "$root" && "$venv/bin/python" -m bench.default_runs "$@")
done
