"""TPU rule 9 (steps), in model_fn: where evaluation is padded to full batches with rows of weight 0
(fixers/exact_evaluation.py), model_fn takes the weights out of the features, and weights its loss and metrics
with them (fixers/estimator_spec.py)."""
import ast

import libcst as cst

from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import templates


def can_take_weights(module, fn):
  """Whether a model_fn reads its features only by key (features['x'], or through input_layer): then a weight key
  added to them (the padded evaluation's) can be taken out before the model sees them. A model_fn that hands the
  features on whole (a tensor, not a dict) cannot: its evaluation is not padded (a TODO instead)."""
  if isinstance(fn, ast.Lambda):
    return False
  names = syntax.param_names(fn)
  features = names[0] if names else 'features'  # the first parameter, as fixers/model_fn_code.py reads it
  for node, _ in syntax.walk_local(fn):
    if not (isinstance(node, ast.Name) and node.id == features):
      continue
    parent = module.parents.get(id(node))
    if isinstance(parent, ast.Subscript) and parent.value is node:
      continue  # features['key']
    call = module.parents.get(id(parent)) if isinstance(parent, ast.keyword) else parent
    if isinstance(call, ast.Call) and call.func is not node and \
        (module.canonical(call.func) or '').endswith('feature_column.input_layer'):
      continue
    return False
  return True


def take_weights(code):
  # Ports rule 9 (steps).
  f, module = code.f, code.module
  if not can_take_weights(module, code.fn):
    code.port.todo(module, code.fn, code.port.codes_of_rule(9), 9, "evaluation is padded with copies of weight 0: "
                   "read features['%s'] (0 for padding rows), keep it out of the model, and weight the loss and "
                   'the metrics with it' % templates.WEIGHT_KEY)
    code.exact = False
    return
  code.weights = code.port.new_name(f, 'tpu_weights')
  text = '%s = dict(%s)\n%s = %s.pop(%r, 1.0)\n' % (code.features, code.features, code.weights, code.features,
                                                    templates.WEIGHT_KEY)
  inserted = edits_lib.statements(text)
  first = _first_statement(code.node)
  inserted[0] = edits_lib.commented(inserted[0], edits_lib.rule_comment(
      9, 'rows that pad evaluation have weight 0: it leaves the features, weights loss and metrics.'),
      f.indent_of(first))
  code.edits.insert_before(first, inserted)
  code.port.change(f, code.node, 9, "model_fn takes the example weights out of the features ('%s')"
                   % templates.WEIGHT_KEY)


def _first_statement(fn):
  """The first statement of a LibCST def after its docstring."""
  body = list(fn.body.body)
  if len(body) > 1 and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
      and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
    return body[1]
  return body[0]
