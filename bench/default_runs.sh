#!/usr/bin/env bash
# The default command's accuracy over several seeded runs under both TensorFlows, one after the other.
# MNIST is fetched on first use.
#   bash bench/default_runs.sh --data_dir=DIR [--runs=5 --first_seed=1]
# LEGS="tf2" runs one leg only. About 35 minutes on an idle 2-core machine for 5 runs per TensorFlow.
set -euo pipefail
exec bash "$(dirname "$0")/each_tf.sh" bench.default_runs "$@"
