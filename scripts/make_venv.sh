#!/usr/bin/env bash
# Creates (or reuses) one virtual environment with estimator_tpu installed in it.
#   scripts/make_venv.sh tf1   -> .venv-tf1: Python 3.7 + TensorFlow 1.15.5 (primary)
#   scripts/make_venv.sh tf2   -> .venv-tf2: Python 3.11 + TensorFlow 2.15.1
# Python 3.7 is looked up as `python3.7` on PATH; failing that, through pyenv (PYENV_VERSION=3.7.16 or any
# installed 3.7.x). Set PYTHON=/path/to/python to choose the interpreter yourself.
# Prints the venv's directory on the last line of stdout.
set -euo pipefail
leg=${1:?usage: make_venv.sh tf1|tf2}
root=$(cd "$(dirname "$0")/.." && pwd)

find_python() {  # $1 = major.minor
  local want=$1 candidate
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  if command -v "python$want" >/dev/null 2>&1 && "python$want" -c 'pass' 2>/dev/null; then
    command -v "python$want"; return
  fi
  if command -v pyenv >/dev/null 2>&1; then
    for candidate in $(pyenv versions --bare 2>/dev/null | grep -E "^${want//./\\.}\.[0-9]+$" | sort -t. -k3 -n -r); do
      PYENV_VERSION=$candidate pyenv which "python$want" 2>/dev/null && return
    done
  fi
  echo "error: Python $want not found. Install it (e.g. 'pyenv install $want') or set PYTHON=/path/to/python$want." >&2
  exit 1
}

case "$leg" in
  tf1) version=3.7 ;;
  tf2) version=3.11 ;;
  *) echo "error: unknown leg '$leg'; use tf1 or tf2." >&2; exit 2 ;;
esac
venv="$root/.venv-$leg"
stamp="$venv/.installed-$(cat "$root/setup.py" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  python=$(find_python "$version")
  echo "creating $venv with $python" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade 'pip<24.1' 'setuptools<68' wheel >&2
  "$venv/bin/python" -m pip install --quiet -e "$root[test,tpu,digits]" >&2
  touch "$stamp"
fi
echo "$venv"
