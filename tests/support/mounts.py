"""Runs a program with one directory changed, in a mount namespace of its own (nothing else sees the change): made
read-only, or a small tmpfs standing for a full disk. Needs root (unshare, mount), which these machines and CI
have; files written there are gone with the namespace, so `run_in_namespace` lists them before it ends.
"""
import subprocess

from support.paths import REPO_ROOT

# $1 becomes a read-only bind mount of itself, then the rest of the arguments run.
READ_ONLY_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
# $1 becomes a tmpfs of $2 bytes (a disk that fills up at once); the rest of the arguments run, then every file left
# there is listed after a marker line.
SMALL_DISK = ('mount -t tmpfs -o size="$2" tmpfs "$1" && dir="$1" && shift 2 && "$@"; status=$?; '
              'echo "%s"; find "$dir" -mindepth 1; exit $status')
LISTING_MARKER = '--- files left on the small disk ---'


def run_in_namespace(script, args, command, timeout=300):
  return subprocess.run(['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sh'] + args
                        + command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        universal_newlines=True, timeout=timeout)


def run_read_only(directory, command):
  """`command` with `directory` read-only."""
  return run_in_namespace(READ_ONLY_MOUNT, [directory], command)


def run_on_small_disk(directory, size_bytes, command):
  """`command` with `directory` on a tmpfs of `size_bytes`; returns (CompletedProcess, files left there)."""
  result = run_in_namespace(SMALL_DISK % LISTING_MARKER, [directory, str(size_bytes)], command)
  output, _, listing = result.stdout.partition(LISTING_MARKER + '\n')
  result.stdout = output
  return result, [line for line in listing.splitlines() if line]
