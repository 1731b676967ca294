#!/usr/bin/env bash
# Sets up both environments (if needed) and runs the test suite under each:
#   tf1: Python 3.7 + TensorFlow 1.15.5    tf2: Python 3.11 + TensorFlow 2.15.1
# Extra arguments go to pytest (e.g. `-k flags`). LEGS="tf1" limits the run to one leg.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
status=0
# The gs:// tests' Cloud Storage server runs in its own venv (Python 3.11) under both legs.
"$root/scripts/make_gcs_venv.sh" >/dev/null
for leg in ${LEGS:-tf1 tf2}; do
  venv=$("$root/scripts/make_venv.sh" "$leg" | tail -n 1)
  echo "=== $leg: $("$venv/bin/python" -c 'import sys, tensorflow as tf; print("Python %d.%d, TensorFlow %s" % (sys.version_info[:2] + (tf.__version__,)))' 2>/dev/null)"
  (cd "$root" && "$venv/bin/python" -m pytest tests "$@") || status=1
done
exit $status
