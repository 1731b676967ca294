"""The files of a program, found and read once: each a modules.Module (its text and its `ast` tree), or a BadInput
that says what is wrong with it and what to do."""
import ast
import collections
import io
import os
import sys
import tokenize
import warnings

from estimator_tpu.porting.program import modules

SKIPPED_FOLDERS = ('__pycache__', 'site-packages', 'node_modules', 'build', 'dist')

# Input that could not be read: a path that does not exist, a file that does not parse.
BadInput = collections.namedtuple('BadInput', ['path', 'problem', 'fix'])


def find_files(paths):
  """(files, bad inputs) for the paths given: files as they are, folders searched for *.py (hidden folders and
  virtualenvs skipped), in a stable order."""
  files, bad = [], []
  for path in paths:
    if os.path.isfile(path):
      files.append(path)
    elif os.path.isdir(path):
      found = []
      for root, folders, names in os.walk(path):
        folders[:] = sorted(f for f in folders if not f.startswith('.') and f not in SKIPPED_FOLDERS)
        found += [os.path.join(root, n) for n in sorted(names) if n.endswith('.py')]
      if not found:
        bad.append(BadInput(path, 'holds no Python file.', 'give the folder of the program or its .py files.'))
      files += found
    else:
      bad.append(BadInput(path, 'no such file or folder.', 'give the path of a Python file or a folder.'))
  unique = []
  for path in files:
    if path not in unique:
      unique.append(path)
  return unique, bad


def read_text(path):
  """(text, encoding) of a Python file, honouring its coding declaration."""
  with open(path, 'rb') as f:
    data = f.read()
  encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
  return data.decode(encoding), encoding


# lib2to3's fixers that add an import line (`reload(sys)` -> `import importlib` above it, `reduce`, `intern`,
# `operator.isCallable`), moving every line after it; Python 3 parses the calls they mend as they are.
ADDS_AN_IMPORT = frozenset('lib2to3.fixes.fix_' + name for name in ('reload', 'reduce', 'intern', 'operator'))


def python2_as_python3(text):
  """Python 2 source read as Python 3 (print statements, `except X, e`, `0777`, ...), converted by lib2to3's own
  fixers with every line kept where it was, so that findings name the lines of the file as written; None when it is
  not Python 2 either, or the conversion would move lines. (lib2to3 ships with the Pythons this report runs on.)"""
  text = text if text.endswith('\n') else text + '\n'  # lib2to3 needs the last line ended
  # Python 2 reads a tab in the indentation as a move to the next multiple of 8 columns, so a file that mixes tabs
  # and spaces runs there and raises TabError in Python 3: the indentation as Python 2 counts it.
  text = ''.join(_python2_indentation(line) for line in text.splitlines(True))
  with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    try:
      from lib2to3 import refactor  # pylint: disable=g-import-not-at-top
    except ImportError:
      return None
    try:
      fixers = [name for name in refactor.get_fixers_from_package('lib2to3.fixes') if name not in ADDS_AN_IMPORT]
      tool = refactor.RefactoringTool(fixers)
      converted = str(tool.refactor_string(text, '<python 2>'))
    except Exception:  # pylint: disable=broad-except  (lib2to3 raises its own parse errors)
      return None
  if converted.count('\n') != text.count('\n'):
    return None
  try:
    ast.parse(converted)
  except SyntaxError:
    return None
  return converted


def _python2_indentation(line):
  code = line.lstrip(' \t')
  return line[:len(line) - len(code)].expandtabs(8) + code


def read_module(path):
  """(Module, None) or (None, BadInput). Python 2 source is read through python2_as_python3 (its Module says
  python2: the report reads it, a rewrite cannot)."""
  try:
    text, encoding = read_text(path)
    try:
      tree = ast.parse(text, filename=path)
    except SyntaxError:
      converted = python2_as_python3(text)
      if converted is None:
        raise
      module = modules.Module(path, ast.parse(converted, filename=path), modules.module_name_for(path), converted,
                              encoding)
      module.python2 = True
      return module, None
  except SyntaxError as e:
    fix = ('fix the syntax (Python 2 is read as well, through lib2to3; syntax newer than this Python needs a newer '
           'Python to run this report).')
    version = '%d.%d' % sys.version_info[:2]
    return None, BadInput(path, 'does not parse as Python %s (line %s: %s).' % (version, e.lineno, e.msg), fix)
  except (UnicodeDecodeError, LookupError) as e:
    return None, BadInput(path, 'cannot be decoded as text (%s).' % e, 'give a Python source file.')
  except (OSError, ValueError, RecursionError, MemoryError) as e:
    return None, BadInput(path, 'cannot be read or parsed (%s).' % e, 'give a readable Python source file.')
  return modules.Module(path, tree, modules.module_name_for(path), text, encoding), None


def read_context_module(path, name):
  """A Module for a file beside the program, read only for context (its flags, its signatures), or None when it
  cannot be read: it is not the program's input."""
  try:
    text, encoding = read_text(path)
    return modules.Module(path, ast.parse(text, filename=path), name, text, encoding)
  except (OSError, SyntaxError, ValueError, RecursionError, MemoryError, UnicodeDecodeError, LookupError):
    return None
