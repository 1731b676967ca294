"""The user's own model_fn and input_fn for `python -m estimator_tpu.readiness`: found by name, and called the
way TPUEstimator calls them.

A name is `MODULE:NAME` (the function itself) or `MODULE:NAME(arg=value, ...)` (a builder called with literal
arguments, which returns the function). MODULE is a dotted module name, found from the current folder like
`python -m` does, or a path to a .py file. The call is read with `ast` and only literals are accepted: nothing the
user typed is evaluated as code.

TPUEstimator passes model_fn and input_fn only the arguments they name (features, labels, mode, params, config),
and refuses either one without `params` (where it puts the per-core batch size). The check reports that as one
failed check (`signatures`, rule 3) and calls the function without params, so the rest of the check
still says what else would fail.
"""
import ast
import importlib
import importlib.util
import inspect
import os
import sys

import tensorflow.compat.v1 as tf

from estimator_tpu.porting.readiness import check_results
from estimator_tpu.runtime.errors import UserError

SPEC_FORM = 'MODULE:NAME or MODULE:NAME(arg=value, ...)'


class FunctionSpec(object):
  """A parsed --model_fn/--input_fn value: module, dotted name, and the literal arguments of a builder call (or
  call=False for the function itself)."""

  def __init__(self, text, module, name, call=False, args=(), kwargs=None):
    self.text = text
    self.module = module
    self.name = name
    self.call = call
    self.args = tuple(args)
    self.kwargs = dict(kwargs or {})


def parse_spec(flag, text):
  """FunctionSpec for `MODULE:NAME` or `MODULE:NAME(literals)`; UserError for anything else."""
  module, colon, expression = (text or '').partition(':')
  # A Windows drive (C:\...) is no concern here: Cloud TPU hosts and this project run on Linux.
  if not colon or not module.strip() or not expression.strip():
    raise UserError('--%s=%r does not name a function.' % (flag, text), 'write --%s=%s, e.g. '
                    '--%s=trainer:%s or --%s=trainer:build_%s(hidden=128).' % (flag, SPEC_FORM, flag, flag, flag,
                                                                               flag))
  try:
    node = ast.parse(expression.strip(), mode='eval').body
  except SyntaxError:
    raise UserError('--%s: %r after the colon is not a name or a call.' % (flag, expression), 'write %s.' % SPEC_FORM)
  if isinstance(node, ast.Call):
    return FunctionSpec(text, module.strip(), _dotted(flag, node.func), True, _literal_args(flag, node),
                        _literal_kwargs(flag, node))
  return FunctionSpec(text, module.strip(), _dotted(flag, node))


def _dotted(flag, node):
  parts = []
  while isinstance(node, ast.Attribute):
    parts.insert(0, node.attr)
    node = node.value
  if not isinstance(node, ast.Name):
    raise UserError('--%s: only a name (or Class.name) can come before the arguments.' % flag,
                    'write %s.' % SPEC_FORM)
  return '.'.join([node.id] + parts)


def _literal(flag, node):
  try:
    return ast.literal_eval(node)
  except ValueError:
    raise UserError('--%s: arguments must be literals (numbers, strings, True/False/None, lists, dicts); this '
                    'one is not.' % flag, 'pass literal values, or write a small function in your module that '
                    'builds the %s and name that one.' % flag)


def _literal_args(flag, call):
  if any(type(arg).__name__ == 'Starred' for arg in call.args):
    raise UserError('--%s: *args cannot be given here.' % flag, 'pass the arguments one by one.')
  return [_literal(flag, arg) for arg in call.args]


def _literal_kwargs(flag, call):
  if any(keyword.arg is None for keyword in call.keywords):
    raise UserError('--%s: **kwargs cannot be given here.' % flag, 'pass the arguments by name, one by one.')
  return dict((keyword.arg, _literal(flag, keyword.value)) for keyword in call.keywords)


# --- Loading -----------------------------------------------------------------------------------------------------

def load_function(flag, spec, module):
  """The callable a FunctionSpec names in its imported module: looked up, and called when it is a builder call."""
  target = module
  for part in spec.name.split('.'):
    if not hasattr(target, part):
      raise UserError('--%s: %s has no %s.' % (flag, spec.module, spec.name),
                      'name a function defined in %s (%s).' % (spec.module, _names_like(module, flag)))
    target = getattr(target, part)
  if spec.call:
    target = _call_builder(flag, spec, target)
  if not callable(target):
    raise UserError('--%s: %s is a %s, not a function.' % (flag, spec.text, type(target).__name__),
                    'name the %s itself, or a builder call that returns it.' % flag)
  return target


def import_module(flag, name):
  """Imports a dotted module (from the current folder, as `python -m` would) or a .py file; one UserError for
  whatever the import raises, since that is the user's code, not this check."""
  try:
    if name.endswith('.py') or os.sep in name:
      return _import_file(name)
    if os.getcwd() not in sys.path and '' not in sys.path:
      sys.path.insert(0, os.getcwd())
    return importlib.import_module(name)
  except UserError:
    raise
  except Exception as e:  # noqa: BLE001 -- anything the user's module raises while it is imported
    raise UserError('--%s: importing %s failed: %s: %s' % (flag, name, type(e).__name__, check_results.error_line(e)),
                    _import_fix(e, name))


def _import_file(path):
  if not os.path.isfile(path):
    raise UserError('%s: no such file.' % path, 'give the path of a Python file, or a module name.')
  folder = os.path.dirname(os.path.abspath(path))
  if folder not in sys.path:
    sys.path.insert(0, folder)  # the file's own imports of its neighbours work as when it is run as a script
  name = os.path.splitext(os.path.basename(path))[0]
  loaded = sys.modules.get(name)
  if loaded is not None and os.path.abspath(getattr(loaded, '__file__', '') or '') == os.path.abspath(path):
    return loaded  # --model_fn and --input_fn in the same file: one module, imported once
  spec = importlib.util.spec_from_file_location(name, path)
  module = importlib.util.module_from_spec(spec)
  sys.modules[name] = module  # as an import would, so the module can import itself and pickle its classes
  try:
    spec.loader.exec_module(module)
  except BaseException:
    del sys.modules[name]
    raise
  return module


def _import_fix(error, name):
  if isinstance(error, ModuleNotFoundError):
    return ('run from the folder that holds %s (or its package), put it on PYTHONPATH, install what it imports, '
            'or give the path of the .py file.' % name.split('.')[0])
  if isinstance(error, SyntaxError):
    return 'fix the syntax (Python 2 code must be converted to Python 3 first).'
  return 'make `import %s` work on its own: code that runs at import (a main, flag parsing, data loading) ' \
         'belongs under `if __name__ == "__main__":`.' % name




def _names_like(module, flag):
  """What the user may have meant: the module's callables with 'model' (or 'input') in their name."""
  word = flag.split('_')[0]
  names = sorted(n for n in vars(module) if word in n.lower() and callable(getattr(module, n)))
  if not names:
    return 'it has none with "%s" in its name' % word
  return 'functions with "%s" in their name: %s' % (word, ', '.join(names))


def _call_builder(flag, spec, builder):
  try:
    return builder(*spec.args, **spec.kwargs)
  except Exception as e:  # noqa: BLE001 -- the user's builder
    raise UserError('--%s: %s raised %s: %s' % (flag, spec.text.partition(':')[2], type(e).__name__,
                                                check_results.error_line(e)),
                    'pass the arguments %s takes (as literals).' % spec.name)


# --- Calling them as TPUEstimator does ---------------------------------------------------------------------------

def argument_names(fn):
  """The parameter names TPUEstimator would see (functools.partial's bound ones excluded), or None when the
  signature cannot be read (a builtin): then the function is called as TPUEstimator's docs say."""
  try:
    signature = inspect.signature(fn)
  except (TypeError, ValueError):
    return None
  return [name for name, parameter in signature.parameters.items()
          if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)]


def check_signatures(model_fn, input_fn):
  """The `signatures` check: TPUEstimator refuses a model_fn or input_fn that takes no `params`."""
  # Checks rule 3 (params).
  missing = []
  for role, fn, shape in (('model_fn', model_fn, 'model_fn(features, labels, mode, params)'),
                          ('input_fn', input_fn, 'input_fn(params)')):
    if fn is None:  # a premade estimator's model_fn is TensorFlow's
      continue
    names = argument_names(fn)
    if names is not None and 'params' not in names:
      missing.append((role, '%s(%s)' % (role, ', '.join(names)), shape))
  if missing:
    return check_results.failed(
        'signatures', '%s: TPUEstimator refuses a model_fn or input_fn without params, which is where it '
        "passes the per-core params['batch_size']; the checks below go on without it."
        % '; '.join('%s takes no params' % have for _, have, _ in missing),
        'take params: %s, and batch with params[\'batch_size\'].' % ', '.join(want for _, _, want in missing))
  return check_results.passed('signatures', '%s params, as TPUEstimator requires.' % (
      'model_fn and input_fn take' if model_fn is not None else 'input_fn takes'))


def as_tpu_estimator_calls(model_fn, input_fn, make_run_config):
  """(model_fn, input_fn) with the fixed signatures the readiness check calls. Each passes the user's function
  only the arguments it names, by name, as TPUEstimator does; `config` is make_run_config(), built only if asked
  for."""
  model_names = argument_names(model_fn)

  def called_model_fn(features, labels, mode, params):
    if model_names is None:
      return model_fn(features, labels, mode, params)
    offered = dict(features=features, labels=labels, mode=mode, params=params)
    return model_fn(**_named(model_names, offered, make_run_config))

  return called_model_fn, as_tpu_input_fn(input_fn, tf.estimator.ModeKeys.TRAIN, make_run_config)


def as_tpu_input_fn(input_fn, mode, make_run_config):
  """input_fn(params) calling the user's input_fn as TPUEstimator does in `mode` (TRAIN, EVAL, PREDICT)."""
  input_names = argument_names(input_fn)

  def called_input_fn(params):
    if input_names is None:
      return input_fn(params)
    return input_fn(**_named(input_names, dict(params=params, mode=mode), make_run_config))

  return called_input_fn


def _named(names, offered, make_run_config):
  if 'config' in names:
    offered = dict(offered, config=make_run_config())
  return dict((name, offered[name]) for name in names if name in offered)
