"""One scan: read the files, resolve the program, run every check, return a Report."""
import ast
import io
import os
import sys
import tokenize

from estimator_tpu.porting.report import apis
from estimator_tpu.porting.report import checks
from estimator_tpu.porting.report import estimators
from estimator_tpu.porting.report import findings
from estimator_tpu.porting.report import input_fns
from estimator_tpu.porting.report import model_fns
from estimator_tpu.porting.report import modes as modes_lib
from estimator_tpu.porting.report import modules
from estimator_tpu.porting.report import program as program_lib
from estimator_tpu.porting.report import pyast

SKIPPED_FOLDERS = ('__pycache__', 'site-packages', 'node_modules', 'build', 'dist')
BUILDER_WORDS = ('builder', 'build_', 'make_', 'create_', 'get_')


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
        bad.append(findings.BadInput(path, 'holds no Python file.', 'give the folder of the program or its .py '
                                     'files.'))
      files += found
    else:
      bad.append(findings.BadInput(path, 'no such file or folder.', 'give the path of a Python file or a folder.'))
  unique = []
  for path in files:
    if path not in unique:
      unique.append(path)
  return unique, bad


def parse_file(path):
  """(Module, None) or (None, BadInput). Reads bytes and honours the file's coding declaration."""
  try:
    with open(path, 'rb') as f:
      data = f.read()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    source = data.decode(encoding)
    tree = ast.parse(source, filename=path)
  except SyntaxError as e:
    fix = ('fix the syntax; Python 2 code (print statements, `except X, e`) must be converted to Python 3 first, '
           'and newer syntax needs a newer Python to run this report.')
    version = '%d.%d' % sys.version_info[:2]
    return None, findings.BadInput(path, 'does not parse as Python %s (line %s: %s).' % (version, e.lineno, e.msg),
                                   fix)
  except (UnicodeDecodeError, LookupError) as e:
    return None, findings.BadInput(path, 'cannot be decoded as text (%s).' % e, 'give a Python source file.')
  except (OSError, ValueError, RecursionError, MemoryError) as e:
    return None, findings.BadInput(path, 'cannot be read or parsed (%s).' % e, 'give a readable Python source file.')
  return program_lib.Module(path, tree, program_lib.module_name_for(path)), None


def scan(paths):
  """Checks every Python file under `paths`; returns a findings.Report."""
  files, bad = find_files(paths)
  parsed = []
  for path in files:
    module, problem = parse_file(path)
    if module is None:
      bad.append(problem)
    else:
      parsed.append(module)
  collector = checks.Collector(program_lib.Program(parsed))
  entries = _guarded(collector, None, estimators.check_call_sites, collector) or estimators.Entries()
  _check_model_fns(collector, entries)
  _check_input_fns(collector, entries)
  for module in parsed:
    _guarded(collector, module, modules.check_module, collector, module)
  return findings.Report(collector.findings, [m.path for m in parsed], bad)


def _guarded(collector, module, check, *args):
  """Runs one check; an unexpected construct that breaks it becomes a note, not a crash of the whole scan."""
  # Checks rule 13 (readiness).
  try:
    return check(*args)
  except Exception as e:  # noqa: BLE001 -- robustness on code never seen is the point here
    where = module or (collector.program.modules[0] if collector.program.modules else None)
    if where is not None:
      collector.unknown(where, where.tree, 13, 'the port report could not analyse this code (%s: %s) -> please '
                        'report it with the code that caused it.' % (type(e).__name__, e))
    return None


def _check_model_fns(collector, entries):
  uses = list(entries.model_fns.values())
  reached = set(entries.model_fns)
  all_found = bool(collector.index.sites) and not [f for f in collector.findings if f.rule == 5 and
                                                   f.severity == findings.UNKNOWN and 'the model_fn' in f.message]
  if not all_found:
    # Functions shaped like a model_fn that no estimator is seen to get: check them as if every mode ran on a TPU.
    uses += [estimators.ModelFnUse(target, modes_lib.ALL, [], True)
             for target in _candidates(collector, reached, _is_model_fn_candidate)]
  for use in uses:
    _guarded(collector, use.target.module, model_fns.check_model_fn, collector, use)


def _check_input_fns(collector, entries):
  checked = set()
  for target, modes, _ in entries.input_fns.values():
    visited = _guarded(collector, target.module, input_fns.check_input_fn, collector, target, modes) or []
    checked.update(id(node) for node in visited)
    checked.add(id(target.node))
  input_fns.report_returned_tensors(collector)
  if entries.drivers and not entries.unresolved_input_fns:
    return  # every input_fn an estimator gets is known: other functions named like one are helpers, or unused
  if entries.drivers:
    collector.unsure = 'if it is one of the input_fns the scanned files could not follow'
  for target in _candidates(collector, checked, _is_input_fn_candidate):
    _guarded(collector, target.module, input_fns.check_input_fn, collector, target, _modes_from_name(target.node.name))
  collector.unsure = None


def _candidates(collector, excluded, predicate):
  """Functions not reached from any estimator call whose name and shape say what they are (`def model_fn(features,
  labels, mode)`): a file scanned without its driver still gets its checks. Functions the scanned code calls
  directly are helpers, not candidates."""
  program = collector.program
  found = []
  for module in program.modules:
    for node in ast.walk(module.tree):
      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(node) not in excluded and \
          _plain_function(node) and predicate(program, module, node) and not _called_somewhere(program, node):
        found.append(program_lib.Fn(module, node))
  return found


def _plain_function(node):
  """Not a test (test_numpy_input_fn) and not a method: those are not what an estimator is handed."""
  names = pyast.positional_names(node)
  return not node.name.startswith('test') and not (names and names[0] in ('self', 'cls'))


def _is_model_fn_candidate(program, module, node):
  name = node.name.lower()
  if not (name == 'model_fn' or name.endswith('_model_fn')) or name.startswith(BUILDER_WORDS):
    return False
  params = pyast.param_names(node)
  return ('features' in params or 'mode' in params) and _uses_tensorflow(module, node)


def _is_input_fn_candidate(program, module, node):
  name = node.name.lower()
  if not (name == 'input_fn' or name.endswith('_input_fn')) or name.startswith(BUILDER_WORDS):
    return False
  if 'serving' in name or 'receiver' in name:
    return False
  if not _uses_tensorflow(module, node):
    return False
  # A builder returns its inner input_fn; the inner one is the candidate.
  returned = program.returned_values(node)
  return not any(isinstance(v, (ast.Name, ast.Lambda)) and _is_local_def(program, module, node, v) for v in returned)


def _uses_tensorflow(module, fn):
  """Whether a function's own code names TensorFlow or calls Dataset methods (what a model_fn or input_fn is made
  of); a function merely named like one (check_input_fn) is not."""
  for node, _ in pyast.walk_local(fn):
    if isinstance(node, ast.Attribute):
      if node.attr in ('batch', 'padded_batch', 'map', 'shuffle', 'repeat', 'prefetch'):
        return True
      if apis.is_tf(module.canonical(node)):
        return True
  return False


def _is_local_def(program, module, fn, value):
  if isinstance(value, ast.Lambda):
    return True
  bindings = program.local_bindings(module, fn).get(value.id, [])
  return any(kind == 'def' for kind, _ in bindings)


def _called_somewhere(program, def_node):
  """Any call by this name counts: a candidate that is called is somebody's helper (conservative on purpose)."""
  return bool(program.calls_named(def_node.name))


def _modes_from_name(name):
  """The mode an input_fn no estimator is seen to get is for, by its name; None when the name does not say."""
  name = name.lower()
  if 'predict' in name or 'infer' in name:
    return set([input_fns.PREDICT])
  if 'train' in name:
    return set([input_fns.TRAIN])
  if 'eval' in name or 'test' in name or 'valid' in name:
    return set([input_fns.EVAL])
  return None
