"""One scan: read the files, resolve the program, run every check, return a Report."""
import ast

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import mode_branches
from estimator_tpu.porting.program import reading
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import uses as uses_lib
from estimator_tpu.porting.report import checks
from estimator_tpu.porting.report import estimator_checks
from estimator_tpu.porting.report import file_checks
from estimator_tpu.porting.report import findings
from estimator_tpu.porting.report import input_fn_checks
from estimator_tpu.porting.report import model_fn_checks

BUILDER_WORDS = ('builder', 'build_', 'make_', 'create_', 'get_')


def scan(paths):
  """Checks every Python file under `paths`; returns a findings.Report."""
  program, bad = reading.read(paths)
  return check(program, bad)


def check(program, bad=()):
  """Runs every check on a program already read; returns a findings.Report."""
  collector = checks.Collector(program)
  uses = _guarded(collector, None, uses_lib.read_uses, program)
  if uses is not None:
    _guarded(collector, None, estimator_checks.check_call_sites, collector, uses)
  _check_model_fns(collector, uses)
  _check_input_fns(collector, uses)
  for module in program.modules:
    _guarded(collector, module, file_checks.check_module, collector, module)
  return findings.Report(collector.findings, [m.path for m in program.modules], bad)


def _guarded(collector, module, check, *args):
  """Runs one check; an unexpected construct that breaks it becomes a note, not a crash of the whole scan."""
  # Checks rule 13 (readiness).
  try:
    return check(*args)
  except Exception as e:  # noqa: BLE001 -- robustness on code never seen is the point here
    where = module or (collector.program.modules[0] if collector.program.modules else None)
    if where is not None:
      collector.unknown(where, where.tree, 'not-analysed',
                        'the port report could not analyse this code (%s: %s) -> please '
                        'report it with the code that caused it.' % (type(e).__name__, e))
    return None


def _check_model_fns(collector, uses):
  found = list(uses.model_fns.values()) if uses else []
  reached = set(uses.model_fns) if uses else set()
  all_found = bool(uses and uses.index.sites) and not [f for f in collector.findings
                                                       if f.code == 'model-fn-unresolved']
  if not all_found:
    # Functions shaped like a model_fn that no estimator is seen to get: check them as if every mode ran on a TPU.
    found += [uses_lib.ModelFnUse(target, mode_branches.ALL, [], True)
              for target in _candidates(collector, reached, _is_model_fn_candidate)]
  for use in found:
    _guarded(collector, use.target.module, model_fn_checks.check_model_fn, collector, use)


def _check_input_fns(collector, uses):
  checked = set()
  for target, modes in (uses.input_fn_targets.values() if uses else ()):
    visited = _guarded(collector, target.module, input_fn_checks.check_input_fn, collector, target, modes) or []
    checked.update(id(node) for node in visited)
    checked.add(id(target.node))
  input_fn_checks.report_returned_tensors(collector)
  drivers = bool(uses and uses.index.drivers)
  if drivers and not uses.unresolved_input_fns:
    return  # every input_fn an estimator gets is known: other functions named like one are helpers, or unused
  if drivers:
    collector.unsure = 'if it is one of the input_fns the scanned files could not follow'
  for target in _candidates(collector, checked, _is_input_fn_candidate):
    _guarded(collector, target.module, input_fn_checks.check_input_fn, collector, target,
             _modes_from_name(target.node.name))
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
        found.append(callables.Fn(module, node))
  return found


def _plain_function(node):
  """Not a test (test_numpy_input_fn) and not a method: those are not what an estimator is handed."""
  names = syntax.positional_names(node)
  return not node.name.startswith('test') and not (names and names[0] in ('self', 'cls'))


def _is_model_fn_candidate(program, module, node):
  name = node.name.lower()
  if not (name == 'model_fn' or name.endswith('_model_fn')) or name.startswith(BUILDER_WORDS):
    return False
  params = syntax.param_names(node)
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
  for node, _ in syntax.walk_local(fn):
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
    return set([input_fn_checks.PREDICT])
  if 'train' in name:
    return set([input_fn_checks.TRAIN])
  if 'eval' in name or 'test' in name or 'valid' in name:
    return set([input_fn_checks.EVAL])
  return None
