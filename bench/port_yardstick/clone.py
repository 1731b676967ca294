"""Fetches the repositories of programs.json at their commits: DIR/<owner>/<name>, one commit each, no history.

  python -m bench.port_yardstick.clone DIR

The only step of the measurement that needs the network (GitHub); score.py then reads DIR. tensorflow/models is
large, so each repository is fetched at its one commit only (git fetch --depth 1 COMMIT), which GitHub allows.
"""
import json
import os
import subprocess
import sys

from bench.port_yardstick import score


def clone(checkouts, repository, commit):
  folder = os.path.join(checkouts, *repository.split('/'))
  if os.path.isdir(os.path.join(folder, '.git')):
    head = subprocess.run(['git', '-C', folder, 'rev-parse', 'HEAD'], stdout=subprocess.PIPE,
                          universal_newlines=True).stdout.strip()
    if head == commit:
      return folder
  os.makedirs(folder, exist_ok=True)
  for command in (['init', '-q'], ['fetch', '-q', '--depth', '1', 'https://github.com/%s' % repository, commit],
                  ['-c', 'advice.detachedHead=false', 'checkout', '-q', 'FETCH_HEAD']):
    subprocess.run(['git', '-C', folder] + command, check=True)
  return folder


def main(argv=None):
  argv = sys.argv[1:] if argv is None else argv
  if len(argv) != 1:
    raise SystemExit('usage: python -m bench.port_yardstick.clone DIR')
  with open(score.PROGRAMS) as f:
    wanted = sorted(set((p['repository'], p['commit']) for p in json.load(f)))
  for repository, commit in wanted:
    print('%s @ %s -> %s' % (repository, commit[:10], clone(os.path.abspath(argv[0]), repository, commit)))
  return 0


if __name__ == '__main__':
  sys.exit(main())
