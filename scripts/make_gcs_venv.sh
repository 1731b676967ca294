#!/usr/bin/env bash
# Creates (or reuses) .venv-gcs: the Cloud Storage server the gs:// tests run TensorFlow's own GCS client against
# (tests/gcs_server.py, gcp-storage-emulator behind our fixes). It needs Python >= 3.10, so the TF 1.15 leg
# (Python 3.7) cannot host it: both legs start it with this venv's Python. Python 3.11 is looked up as
# `python3.11` on PATH, then through pyenv; GCS_PYTHON=/path/to/python chooses it yourself.
# The tests' sandbox also needs root and these system tools; the script stops, naming them, if one is missing.
# Prints the venv's directory on the last line of stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv-gcs"
pins='gcp-storage-emulator==2026.7.19 google-crc32c==1.9.0'

missing=""
for tool in unshare nsenter mount ip openssl; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ] || [ ! -f /etc/ssl/certs/ca-certificates.crt ]; then
  echo "error: the gs:// tests need${missing:- /etc/ssl/certs/ca-certificates.crt}. Fix: apt-get install -y util-linux iproute2 openssl ca-certificates" >&2
  exit 1
fi

find_python() {
  local candidate
  if [ -n "${GCS_PYTHON:-}" ]; then echo "$GCS_PYTHON"; return; fi
  if command -v python3.11 >/dev/null 2>&1 && python3.11 -c 'pass' 2>/dev/null; then command -v python3.11; return; fi
  if command -v pyenv >/dev/null 2>&1; then
    for candidate in $(pyenv versions --bare 2>/dev/null | grep -E '^3\.11\.[0-9]+$' | sort -t. -k3 -n -r); do
      PYENV_VERSION=$candidate pyenv which python3.11 2>/dev/null && return
    done
  fi
  echo "error: Python 3.11 not found. Fix: install it (e.g. 'pyenv install 3.11') or set GCS_PYTHON=/path/to/python3.11." >&2
  exit 1
}

stamp="$venv/.installed-$(echo "$pins" | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  python=$(find_python)
  echo "creating $venv with $python" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # shellcheck disable=SC2086  # one word per pin
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $pins >&2
  "$venv/bin/python" -c 'import gcp_storage_emulator.server, google_crc32c' >&2
  touch "$stamp"
fi
echo "$venv"
