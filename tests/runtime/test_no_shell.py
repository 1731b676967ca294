"""Security guard: no Python file in the repository runs a shell, so no user string can become a shell command.

Subprocesses (pip in download.py, the programs in tests) take argument lists: a data_dir like
`x; rm -rf ~` stays one argument. The check parses every .py file and fails on `shell=True`, on functions
that always use a shell, and on a command given as a string built at run time.
"""
import ast
import os
import sys

import pytest

from support.paths import REPO_ROOT

SHELL_FUNCTIONS = {('os', 'system'), ('os', 'popen'), ('subprocess', 'getoutput'),
                   ('subprocess', 'getstatusoutput'), ('commands', 'getoutput'), ('commands', 'getstatusoutput')}
SUBPROCESS_FUNCTIONS = {'run', 'Popen', 'call', 'check_call', 'check_output'}
SKIPPED_DIRS = {'__pycache__', 'build', 'dist'}
NOT_A_LITERAL = object()


def python_files(root):
  for directory, dirs, files in os.walk(root):
    # .git, .venv-tf1, .venv-tf2, .pytest_cache: not ours
    dirs[:] = [d for d in dirs if not d.startswith('.') and d not in SKIPPED_DIRS and not d.endswith('.egg-info')]
    for name in files:
      if name.endswith('.py'):
        yield os.path.join(directory, name)


def _dotted(node):
  """('os', 'system') for `os.system`, None for anything that is not module.attribute."""
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
    return node.value.id, node.attr
  return None


def _literal(node):
  """The value of a literal node (Python 3.7 parses them as Str/NameConstant, 3.8+ as Constant)."""
  if sys.version_info >= (3, 8):
    return node.value if isinstance(node, ast.Constant) else NOT_A_LITERAL
  if isinstance(node, ast.Str):
    return node.s
  return node.value if isinstance(node, ast.NameConstant) else NOT_A_LITERAL


def _builds_a_string(node):
  """True for expressions that make a string at run time: literals, f-strings, % or + on strings, .format()."""
  if isinstance(_literal(node), str) or isinstance(node, ast.JoinedStr):
    return True
  if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
    return _builds_a_string(node.left) or _builds_a_string(node.right)
  return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'format'
          and _builds_a_string(node.func.value))


def shell_uses(source, filename='<string>'):
  """Returns 'line N: what' for every shell use in `source`."""
  problems = []
  for node in ast.walk(ast.parse(source, filename)):
    if not isinstance(node, ast.Call):
      continue
    name = _dotted(node.func)
    for keyword in node.keywords:
      if keyword.arg == 'shell' and _literal(keyword.value) not in (False, None):
        problems.append('line %d: shell=%s' % (node.lineno, ast.dump(keyword.value)))
    if name in SHELL_FUNCTIONS:
      problems.append('line %d: %s.%s runs a shell' % ((node.lineno,) + name))
    if name and name[0] == 'subprocess' and name[1] in SUBPROCESS_FUNCTIONS and node.args:
      if _builds_a_string(node.args[0]):
        problems.append('line %d: subprocess.%s with a command string' % (node.lineno, name[1]))
  return problems


def test_the_checker_finds_shell_uses():
  source = '\n'.join([
      'import os, subprocess',
      'os.system("ls " + path)',
      'os.popen("cat %s" % path)',
      'subprocess.run(["ls", path], shell=True)',
      'subprocess.check_output("ls {}".format(path))',
      'subprocess.Popen(f"ls {path}")',
      'subprocess.run(["ls", path], shell=False)',  # fine
      'subprocess.run(command)',  # fine: a list built elsewhere
      'payload = os.system',  # fine: not a call
  ])
  problems = shell_uses(source)
  assert [p.split(':')[0] for p in problems] == ['line 2', 'line 3', 'line 4', 'line 5', 'line 6']


def test_the_repository_has_python_files_to_check():
  names = {os.path.relpath(path, REPO_ROOT) for path in python_files(REPO_ROOT)}
  assert {'mnist_tpu.py', os.path.join('tools', 'prepare_data.py'), os.path.join('estimator_tpu', 'data', 'download.py')} <= names
  assert not [n for n in names if n.startswith('.')]


@pytest.mark.parametrize('path', sorted(os.path.relpath(p, REPO_ROOT) for p in python_files(REPO_ROOT)))
def test_no_shell_commands(path):
  with open(os.path.join(REPO_ROOT, path)) as f:
    assert shell_uses(f.read(), path) == []
