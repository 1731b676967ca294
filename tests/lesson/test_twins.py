"""The lesson reads alone: each twin pair differs only where a TPU rule says so, in diffs small enough to read.

mnist.py / mnist_tpu.py and estimator/ / tpu/ are read side by side (`diff A B`): every hunk must carry a
`TPU rule N (name)` tag naming a rule of estimator_tpu/rules.py, and the diffs stay within the sizes the README
promises. In the route files (the programs, estimator/, tpu/, keras/) every line fits 100 columns, so `diff -y`
fits a screen, and every comment is at most three lines.
"""
import difflib
import glob
import io
import os
import re
import subprocess
import tokenize

import pytest

from estimator_tpu import rules
from support.paths import REPO_ROOT

# (before, after, most changed lines as `diff before after | grep -c '^[<>]'` counts them)
TWINS = [
    ('mnist.py', 'mnist_tpu.py', 80),
    ('estimator_tpu/estimator/model_fn.py', 'estimator_tpu/tpu/model_fn.py', 60),
    ('estimator_tpu/estimator/input_fn.py', 'estimator_tpu/tpu/input_fn.py', 60),
]
# The README's line for each diff: `diff BEFORE AFTER   # <what>: N changed lines` (or `N lines`).
README_DIFF_SIZE = re.compile(r'^diff (\S+) (\S+) +#[^:]*: (\d+) (?:changed )?lines\b', re.M)
TAG = re.compile(r'TPU rule (\d+) \(([^)]*)\)')
ROUTE_FILES = ['mnist.py', 'mnist_tpu.py', 'mnist_keras.py'] + sorted(
    os.path.relpath(path, REPO_ROOT) for folder in ('estimator', 'tpu', 'keras')
    for path in glob.glob(os.path.join(REPO_ROOT, 'estimator_tpu', folder, '*.py')))
MAX_COLUMNS = 100
MAX_COMMENT_LINES = 3


def read_lines(path):
  with open(os.path.join(REPO_ROOT, path)) as f:
    return f.read().splitlines()


def hunks(before, after):
  """difflib's hunks of the two files: (lines only in `before`, lines only in `after`) each."""
  a, b = read_lines(before), read_lines(after)
  matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
  return [(a[i1:i2], b[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != 'equal']


@pytest.mark.parametrize('before, after, limit', TWINS)
def test_every_hunk_of_the_twins_carries_its_rule(before, after, limit):
  found = hunks(before, after)
  assert found, 'the twins are identical'
  untagged = [removed + added for removed, added in found if not any(TAG.search(line) for line in removed + added)]
  assert not untagged, 'hunks without a TPU rule tag:\n%s' % '\n---\n'.join('\n'.join(h) for h in untagged)
  assert sum(len(removed) + len(added) for removed, added in found) <= limit


@pytest.mark.parametrize('before, after, limit', TWINS)
def test_the_diff_command_counts_what_the_readme_promises(before, after, limit):
  result = subprocess.run(['diff', before, after], cwd=REPO_ROOT, stdout=subprocess.PIPE, universal_newlines=True)
  assert result.returncode == 1  # they differ
  changed = [line for line in result.stdout.splitlines() if line.startswith(('<', '>'))]
  assert 0 < len(changed) <= limit


def readme_diff_sizes():
  with open(os.path.join(REPO_ROOT, 'README.md')) as f:
    return {(before, after): int(size) for before, after, size in README_DIFF_SIZE.findall(f.read())}


def test_the_readme_gives_each_twin_diff_its_size_as_diff_counts_it_now():
  sizes = readme_diff_sizes()
  assert sorted(sizes) == sorted((before, after) for before, after, _ in TWINS)
  for (before, after), size in sorted(sizes.items()):
    result = subprocess.run(['diff', before, after], cwd=REPO_ROOT, stdout=subprocess.PIPE, universal_newlines=True)
    changed = [line for line in result.stdout.splitlines() if line.startswith(('<', '>'))]
    assert len(changed) == size, 'README.md says `diff %s %s` changes %d lines; it changes %d' % (
        before, after, size, len(changed))


def python_files():
  paths = glob.glob(os.path.join(REPO_ROOT, '*.py')) + glob.glob(os.path.join(REPO_ROOT, '*', '**', '*.py'),
                                                                   recursive=True)
  return sorted(os.path.relpath(path, REPO_ROOT) for path in paths
                if not os.path.relpath(path, REPO_ROOT).startswith(('.', 'tests' + os.sep)))


def test_every_rule_tag_in_the_code_names_a_rule_of_the_registry():
  tags, old_style = [], []
  for path in python_files():
    for number, line in enumerate(read_lines(path), 1):
      tags += [(path, number, int(n), name) for n, name in TAG.findall(line)]
      if re.search(r'TPU rule \(', line):
        old_style.append('%s:%d' % (path, number))
  assert not old_style, 'unnumbered TPU rule tags: %s' % old_style
  wrong = [(path, line, n, name) for path, line, n, name in tags
           if n not in rules.BY_NUMBER or rules.rule(n).name != name]
  assert not wrong, wrong
  assert len(tags) >= 20


def comment_blocks(path):
  """Runs of consecutive comment lines of a Python file, as (first line, number of lines)."""
  with open(os.path.join(REPO_ROOT, path)) as f:
    tokens = list(tokenize.generate_tokens(io.StringIO(f.read()).readline))
  lines = sorted(token.start[0] for token in tokens if token.type == tokenize.COMMENT)
  blocks = []
  for line in lines:
    if blocks and line == blocks[-1][0] + blocks[-1][1]:
      blocks[-1] = (blocks[-1][0], blocks[-1][1] + 1)
    else:
      blocks.append((line, 1))
  return blocks


@pytest.mark.parametrize('path', ROUTE_FILES)
def test_route_files_fit_a_side_by_side_diff_and_comment_briefly(path):
  long_lines = [number for number, line in enumerate(read_lines(path), 1) if len(line) > MAX_COLUMNS]
  assert not long_lines, '%s: lines over %d columns: %s' % (path, MAX_COLUMNS, long_lines)
  long_comments = [first for first, length in comment_blocks(path) if length > MAX_COMMENT_LINES]
  assert not long_comments, '%s: comments of more than %d lines at %s' % (path, MAX_COMMENT_LINES, long_comments)


def test_the_programs_share_their_shape():
  """The same functions in the same order: the builders, the estimator, train, evaluate, predict, export, and the
  main that runs --mode with them."""
  def functions(path):
    return [line.split('(')[0][len('def '):] for line in read_lines(path) if line.startswith('def ')]
  assert functions('mnist.py') == functions('mnist_tpu.py') == [
      'build_model_fn', 'build_estimator', 'train', 'evaluate', 'predict', 'export', 'main']
