#!/usr/bin/env bash
# The full benchmark under both TensorFlows, one after the other, then bench/results/summary.md. MNIST is
# fetched on first use.
#   bash bench/run_all.sh [--data_dir=DIR] [more run_benchmarks.py flags]
# LEGS="tf2" runs one leg only. Takes about an hour on an idle 2-core machine; run it on an idle machine, since
# other load stretches every wall-clock figure (the per-CPU-second columns move much less).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/bench/each_tf.sh" bench.run_benchmarks "$@"
summary_args=()  # the summary reads the directory the runs wrote to
for arg in "$@"; do
  case "$arg" in --output_dir=*) summary_args+=("$arg") ;; esac
done
legs=(${LEGS:-tf1 tf2})
venv=$("$root/scripts/make_venv.sh" "${legs[-1]}" | tail -n 1)
(cd "$root" && "$venv/bin/python" -m bench.summarize ${summary_args[@]+"${summary_args[@]}"})
