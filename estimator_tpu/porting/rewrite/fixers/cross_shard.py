"""TPU rule 6 (gradient all-reduce): the optimizer wrapped in CrossShardOptimizer when params['use_tpu'] (it has
no kernel off the TPU), where model_fn calls minimize or apply_gradients on it. What the optimizer is (a
tf.compat.v1.train one no CrossShardOptimizer wraps, one wrapped always, a Keras one, one that cannot be told) is the
port report's finding there, by its code."""
import ast

import libcst as cst

from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import templates
from estimator_tpu.porting.rewrite.fixers import model_fn_code

CODES = ('optimizer-not-cross-shard', 'keras-optimizer', 'cross-shard-always', 'optimizer-unseen')
OPTIMIZER_METHODS = ('minimize', 'apply_gradients')


def optimizer_calls(code):
  """The minimize/apply_gradients calls of the model_fn that the port report flags (rule 6)."""
  return [call for call in code.calls() if isinstance(call.func, ast.Attribute) and
          call.func.attr in OPTIMIZER_METHODS and code.port.findings(code.module, call, CODES)]


def port(code):
  for call in optimizer_calls(code):
    code.guarded(call, wrap, code, call)


def port_tpu_code(code):
  """TPUEstimator code already: only an optimizer wrapped off the TPU too is wrapped on the TPU only."""
  for call in optimizer_calls(code):
    if _always_wrapped(code, call):
      code.guarded(call, wrap, code, call)


def _found(code, call):
  """The codes of the report's findings about the optimizer of a minimize call: what kind of optimizer it is."""
  return set(f.code for f in code.port.findings(code.module, call, CODES))


def _always_wrapped(code, call):
  receiver = call.func.value
  if not isinstance(receiver, ast.Name) or 'cross-shard-always' not in _found(code, call):
    return False
  definitions = code.definitions(receiver.id, call)
  return len(definitions) == 1 and isinstance(definitions[0], ast.Assign) and _wraps(code, definitions[0].value)


def wrap(code, call):
  # Ports rule 6 (gradient all-reduce).
  f = code.f
  receiver = call.func.value
  statement = code.statement(call)
  tf = code.tf
  found = _found(code, call)
  comment = edits_lib.rule_comment(6, 'CrossShardOptimizer averages the cores\' gradients; it has no kernel '
                                   'off the TPU.')
  if isinstance(receiver, ast.Name):
    definitions = code.definitions(receiver.id, call)
    if len(definitions) != 1 or not isinstance(definitions[0], ast.Assign):
      raise model_fn_code.Failed(6, 'wrap the optimizer in %s.tpu.CrossShardOptimizer when params[\'use_tpu\']' % tf)
    definition = definitions[0]
    value = definition.value
    wrapped = code.port.memo.setdefault('cross_shard_wrapped', set())
    if id(definition) in wrapped:  # a second minimize/apply_gradients of the same optimizer: wrapped once
      code.port.take(code.module, call, CODES)
      return
    wrapped.add(id(definition))
    if 'cross-shard-always' in found and _wraps(code, value):  # always wrapped: unwrap, then wrap on the TPU only
      code.edits.replace(f.node(value), lambda updated: updated.args[0].value)
    elif 'optimizer-not-cross-shard' not in found:
      raise model_fn_code.Failed(6, 'wrap the optimizer in %s.tpu.CrossShardOptimizer when params[\'use_tpu\'] (a '
                                 'tf.compat.v1.train optimizer: CrossShardOptimizer takes no other)' % tf)
    text = templates.CROSS_SHARD.format(params='params', optimizer=receiver.id, tf=tf)
    wrapping = edits_lib.statements(text)
    place = code.statement(definition)
    wrapping[0] = edits_lib.commented(wrapping[0], comment, f.indent_of(place))
    code.edits.insert_after(place, wrapping)
  elif isinstance(receiver, ast.Call) and 'optimizer-not-cross-shard' in found:
    name = code.port.new_name(f, 'optimizer')
    made = f.node(receiver)
    text = '%s = %s\n' % (name, edits_lib.code_of(made)) + templates.CROSS_SHARD.format(
        params='params', optimizer=name, tf=tf)
    inserted = edits_lib.statements(text)
    inserted[1] = edits_lib.commented(inserted[1], comment, f.indent_of(statement))
    code.edits.insert_before(statement, inserted)
    code.edits.replace(made, lambda updated: cst.Name(name))
  else:
    raise model_fn_code.Failed(6, 'wrap the optimizer in %s.tpu.CrossShardOptimizer when params[\'use_tpu\']' % tf)
  code.needs.add('params')
  code.port.take(code.module, call, CODES)
  code.port.change(f, call, 6, 'optimizer wrapped in CrossShardOptimizer when params[\'use_tpu\']')


def _wraps(code, value):
  """Whether a value is CrossShardOptimizer(optimizer): what unwrapping leaves is its argument."""
  return isinstance(value, ast.Call) and (code.canonical(value.func) or '').endswith('CrossShardOptimizer') and \
      bool(value.args)
