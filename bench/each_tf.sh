#!/usr/bin/env bash
# Runs `python -m MODULE ARGS...` from the project root under each TensorFlow, one after the other (never in
# parallel: they would share the cores and stretch every wall-clock figure). Creates .venv-tf1/.venv-tf2 if needed.
#   bash bench/each_tf.sh MODULE [ARGS...]        LEGS="tf2" runs one leg only.
set -euo pipefail
module=${1:?usage: each_tf.sh MODULE [ARGS...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
for leg in ${LEGS:-tf1 tf2}; do
  venv=$("$root/scripts/make_venv.sh" "$leg" | tail -n 1)
  echo "=== $leg, $(uptime)"
  (cd "$root" && "$venv/bin/python" -m "$module" "$@")
done
