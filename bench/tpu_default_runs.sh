#!/usr/bin/env bash
# The TPU defaults' accuracy, measured on this CPU (docs/BENCHMARKS.md, "The TPU defaults"): five seeded runs of
# each TPU route with the defaults a TPU run gets, then the same for mnist_tpu.py with --precision=bfloat16.
#   bash bench/tpu_default_runs.sh --data_dir=DIR [--runs=5 --first_seed=1]
# TensorFlow 2.15 only by default (LEGS="tf1 tf2" adds TF 1.15 for mnist_tpu.py; mnist_keras.py is TF 2 only).
# A batch-1,024 run of 2,000 steps took 15-25 minutes here on a shared machine: about 4-6 hours in all.
set -euo pipefail
here="$(dirname "$0")"
LEGS=${LEGS:-tf2} bash "$here/each_tf.sh" bench.default_runs --defaults=tpu "$@"
LEGS=tf2 bash "$here/each_tf.sh" bench.default_runs --defaults=tpu --program=mnist_keras "$@"
LEGS=tf2 bash "$here/each_tf.sh" bench.default_runs --defaults=tpu --label=bfloat16 \
    --extra_args=--precision=bfloat16 "$@"
