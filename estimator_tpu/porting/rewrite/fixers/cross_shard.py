"""TPU rule 6 (gradient all-reduce): the optimizer wrapped in CrossShardOptimizer when params['use_tpu'] (it has
no kernel off the TPU), where model_fn calls minimize or apply_gradients on it."""
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


def _always_wrapped(code, call):
  receiver = call.func.value
  if not isinstance(receiver, ast.Name):
    return False
  definitions = code.definitions(receiver.id, call)
  return len(definitions) == 1 and isinstance(definitions[0], ast.Assign) and \
      optimizer_kind(code, definitions[0].value) == 'wrapped'


def wrap(code, call):
  # Ports rule 6 (gradient all-reduce).
  f = code.f
  receiver = call.func.value
  statement = code.statement(call)
  tf = code.tf
  comment = edits_lib.rule_comment(6, 'CrossShardOptimizer averages the cores\' gradients; it has no kernel '
                                   'off the TPU.')
  if isinstance(receiver, ast.Name):
    definitions = code.definitions(receiver.id, call)
    if len(definitions) != 1 or not isinstance(definitions[0], ast.Assign):
      raise model_fn_code.Failed(6, 'wrap the optimizer in %s.tpu.CrossShardOptimizer when params[\'use_tpu\']' % tf)
    definition = definitions[0]
    value = definition.value
    kind = optimizer_kind(code, value)
    if kind == 'wrapped':  # always wrapped: unwrap, then wrap only on the TPU
      code.edits.replace(f.node(value), lambda updated: updated.args[0].value)
    elif kind != 'plain':
      raise model_fn_code.Failed(6, 'wrap the optimizer in %s.tpu.CrossShardOptimizer when params[\'use_tpu\'] (a '
                                 'tf.compat.v1.train optimizer: CrossShardOptimizer takes no other)' % tf)
    text = templates.CROSS_SHARD.format(params='params', optimizer=receiver.id, tf=tf)
    wrapping = edits_lib.statements(text)
    place = code.statement(definition)
    wrapping[0] = edits_lib.commented(wrapping[0], comment, f.indent_of(place))
    code.edits.insert_after(place, wrapping)
  elif isinstance(receiver, ast.Call) and optimizer_kind(code, receiver) == 'plain':
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


def optimizer_kind(code, value):
  """'plain' (a tf.compat.v1.train optimizer, or a class of the project), 'wrapped' (in CrossShardOptimizer), or
  None."""
  if not isinstance(value, ast.Call):
    return None
  name = code.canonical(value.func) or ''
  if name.endswith('CrossShardOptimizer'):
    return 'wrapped' if value.args and optimizer_kind(code, value.args[0]) == 'plain' else None
  if name.startswith('tensorflow.train.') and name.endswith('Optimizer'):
    return 'plain'
  found = code.port.program.find_definition(name)
  if found is not None and isinstance(found[1], ast.ClassDef):
    return 'plain'  # the project's own optimizer class
  return None
