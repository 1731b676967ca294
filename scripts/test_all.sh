#!/usr/bin/env bash
# Sets up both environments (if needed) and runs the test suite under each:
#   tf1: Python 3.7 + TensorFlow 1.15.5    tf2: Python 3.11 + TensorFlow 2.15.1
# Extra arguments go to pytest (e.g. `-k flags`). LEGS="tf1" limits the run to one leg.
# With two legs, both run at once (each leg keeps about one core busy; on 2 cores the pair takes about as long as
# the slower leg alone, not the sum), each in its own TMPDIR: each leg's output goes to a log printed when it ends.
# SERIAL=1 runs the legs one after the other with live output.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
read -r -a legs <<< "${LEGS:-tf1 tf2}"
# The gs:// tests' Cloud Storage server runs in its own venv (Python 3.11) under both legs.
"$root/scripts/make_gcs_venv.sh" >/dev/null
declare -A venv
for leg in "${legs[@]}"; do
  venv[$leg]=$("$root/scripts/make_venv.sh" "$leg" | tail -n 1)
done

run_leg() {  # $1 = leg; the rest go to pytest
  local leg=$1; shift
  local python=${venv[$leg]}/bin/python
  echo "=== $leg: $("$python" -c 'import sys, tensorflow as tf; print("Python %d.%d, TensorFlow %s" % (sys.version_info[:2] + (tf.__version__,)))' 2>/dev/null)"
  cd "$root" && "$python" -m pytest tests "$@"
}

status=0
if [ "${#legs[@]}" -eq 1 ] || [ "${SERIAL:-0}" = 1 ]; then
  for leg in "${legs[@]}"; do
    (run_leg "$leg" "$@") || status=1
  done
  exit $status
fi

logs=$(mktemp -d "${TMPDIR:-/tmp}/test_all.XXXXXX")
declare -A pid
for leg in "${legs[@]}"; do
  # Each leg its own temporary folder (pytest's tmp_path, the gs:// sandbox, scratch model dirs).
  mkdir -p "$logs/$leg.tmp"
  (export TMPDIR="$logs/$leg.tmp"; run_leg "$leg" "$@") > "$logs/$leg.log" 2>&1 &
  pid[$leg]=$!
  echo "=== $leg: running, output in $logs/$leg.log"
done
for leg in "${legs[@]}"; do
  leg_status=0
  wait "${pid[$leg]}" || leg_status=$?
  cat "$logs/$leg.log"
  echo "=== $leg: exit $leg_status"
  [ "$leg_status" -eq 0 ] || status=1
done
rm -rf "$logs"
exit $status
