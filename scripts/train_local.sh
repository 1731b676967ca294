#!/usr/bin/env bash
# Sets up the primary environment (Python 3.7 + TensorFlow 1.15.5) if needed, then trains MNIST on the local CPU:
# fetches and prepares the data on first use, trains, evaluates on the 10,000 test images, logs predictions.
# LEG=tf2 uses TensorFlow 2.15 instead. Extra arguments go to mnist_tpu.py (e.g. --train_steps=500).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$("$root/scripts/make_venv.sh" "${LEG:-tf1}" | tail -n 1)
cd "$root"
exec "$venv/bin/python" mnist_tpu.py --use_tpu=false --master='' "$@"
