"""TPU rule 5 (TPUEstimatorSpec): EstimatorSpec -> TPUEstimatorSpec, and eval_metric_ops -> eval_metrics=(metric_fn,
tensors), metric_fn holding the slice of the model_fn that computes the metrics; with padded evaluation (rule 9)
the metrics and the evaluation loss are weighted with the padding's weights."""
import ast

import libcst as cst

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite.fixers import model_fn_code

SPEC_CODES = ('estimator-spec', 'estimator-spec-in-training')
METRICS_CODES = ('eval-metric-ops',)
SCAFFOLD_CODES = ('scaffold',)
CHIEF_HOOKS_CODES = ('training-chief-hooks',)


def is_spec(code, call):
  canonical = code.canonical(call.func) or ''
  return apis.is_tf(canonical) and apis.last(canonical) == 'EstimatorSpec'


def port_spec(code, call):
  """EstimatorSpec -> TPUEstimatorSpec with all its arguments, or nothing: a TPUEstimatorSpec given an argument
  of EstimatorSpec's it does not take is a TypeError in every mode, while the EstimatorSpec left as it is still runs
  on the CPU (its findings stay TODOs)."""
  # Ports rule 5 (TPUEstimatorSpec).
  f, port = code.f, code.port
  if syntax.has_star_args(call):
    return  # arguments that cannot be read here: the report's finding stays a TODO
  metrics = syntax.keyword(call, 'eval_metric_ops')
  no_metrics = metrics is not None and syntax.is_literal(metrics) and syntax.literal(metrics) is None
  if no_metrics:
    metrics = None  # eval_metric_ops=None: nothing to move, and the keyword goes
  moved = None
  if metrics is not None:
    moved = code.guarded(call, _eval_metrics, code, call, metrics)
    if moved is None:
      return  # the metrics could not move: the spec stays an EstimatorSpec (the TODO says why)
  original = f.node(call)
  new_func = '%s.estimator.tpu.TPUEstimatorSpec' % code.tf
  chief_hooks = syntax.keyword(call, 'training_chief_hooks')
  hooks = syntax.keyword(call, 'training_hooks')
  scaffold = syntax.keyword(call, 'scaffold')

  def rebuild(updated):
    updated = edits_lib.renamed(updated, original, new_func, f)
    args = []
    for arg in updated.args:
      name = arg.keyword.value if arg.keyword is not None else None
      if name == 'eval_metric_ops' and no_metrics:
        continue
      if name == 'eval_metric_ops':
        arg = arg.with_changes(keyword=cst.Name('eval_metrics'), value=edits_lib.expression(moved))
      elif name == 'training_chief_hooks' and hooks is None:
        arg = arg.with_changes(keyword=cst.Name('training_hooks'))
      elif name == 'training_chief_hooks':
        continue  # joined with training_hooks below
      elif name == 'scaffold':
        # Called where the spec is used, in model_fn's graph: on the CPU the same Scaffold as before.
        arg = arg.with_changes(keyword=cst.Name('scaffold_fn'), value=cst.Lambda(
            params=cst.Parameters(), body=arg.value))
      elif name == 'training_hooks' and chief_hooks is not None:
        arg = arg.with_changes(value=edits_lib.expression('list(%s) + list(%s)' % (
            edits_lib.code_of(arg.value), edits_lib.code_of(f.node(chief_hooks)))))
      args.append(arg)
    return updated.with_changes(args=args)

  code.edits.replace(original, rebuild)
  port.change(f, original, 5, '%s -> %s' % (syntax.dotted(call.func), new_func))
  port.take(code.module, call, SPEC_CODES)
  statement = f.statement_of(original)
  code.edits.comment(statement, edits_lib.rule_comment(5, 'TPUEstimator takes a TPUEstimatorSpec.'))
  if scaffold is not None:
    port.take(code.module, call, SCAFFOLD_CODES)
    port.change(f, original, 5, 'scaffold -> scaffold_fn (a TPUEstimatorSpec takes a function that returns the '
                'Scaffold)')
  if chief_hooks is not None:
    port.take(code.module, call, CHIEF_HOOKS_CODES)
    port.change(f, original, 8, 'training_chief_hooks -> training_hooks (a TPU job has one host process: the '
                'chief)')
  if code.exact and metrics is not None:
    code.guarded(call, _weigh_loss, code, syntax.argument(call, 1, 'loss'), call)


def metrics_movable(code, call):
  """Whether port_spec can move this spec's eval_metric_ops into a metric_fn (and so weight them where the
  evaluation is padded): read only, for fixers/exact_evaluation.py's plan, before any fixer edits."""
  metrics = syntax.keyword(call, 'eval_metric_ops')
  if metrics is None or (syntax.is_literal(metrics) and syntax.literal(metrics) is None):
    return True
  if syntax.has_star_args(call):
    return False
  try:
    _metric_slice(code, call, metrics)
  except model_fn_code.Failed:
    return False
  return True


def _metric_slice(code, call, value):
  """(roots, statements to copy, tensors) of the metrics `value` a spec is given; Failed when they cannot move."""
  roots = []
  if isinstance(value, ast.Name):
    definitions = code.definitions(value.id, call)
    if len(definitions) != 1:
      raise model_fn_code.Failed(5, 'eval_metric_ops -> eval_metrics=(metric_fn, tensors): write the metric dict '
                                 '`%s` in a metric_fn of the tensors it reads' % value.id)
    roots = definitions
  slice_statements, inputs = code.slice([value], roots, call)
  return roots, slice_statements, code.tensors(inputs, call)


def _eval_metrics(code, call, value):
  f, port = code.f, code.port
  original = f.node(call)
  statement = f.statement_of(original)
  roots, slice_statements, tensors = _metric_slice(code, call, value)
  code.moved_reads.update(id(n) for n in ast.walk(value))
  direct = _direct_metric_fn(code, slice_statements, roots)
  if direct is not None:
    text = '(%s, %s)' % direct
    inserted = []
  else:
    name = port.new_name(f, 'metric_fn')
    body = [_weighted_copy(code, s) for s in slice_statements]
    # (a dict written in the spec: its tf.metrics calls are weighted as the slice's are)
    returned = value.id if isinstance(value, ast.Name) else edits_lib.code_of(_weighted(code, value, f.node(value)))
    function = edits_lib.statements('def %s(%s):\n    return %s\n' % (name, ', '.join(tensors), returned))[0]
    function = function.with_changes(body=function.body.with_changes(body=body + list(function.body.body)))
    inserted = [function]
    text = '(%s, [%s])' % (name, ', '.join(tensors))
    code.moved += slice_statements

  if inserted:
    inserted[0] = edits_lib.commented(inserted[0], edits_lib.rule_comment(
        5, 'metric ops cannot run on the TPU: TPUEstimator runs metric_fn on the host.'), f.indent_of(statement))
    code.edits.insert_before(statement, inserted)
  port.take(code.module, call, METRICS_CODES)
  port.change(f, original, 5, 'eval_metric_ops -> eval_metrics=%s' % text)
  return text


def _direct_metric_fn(code, slice_statements, roots):
  """(function, tensors) when the metrics are one call of a project function on tensors: it is the metric_fn."""
  if len(slice_statements) != 1 or not any(slice_statements[0] is r for r in roots):
    return None
  statement = slice_statements[0]
  call = statement.value if isinstance(statement, ast.Assign) else None
  if not isinstance(call, ast.Call) or apis.is_tf(code.canonical(call.func)):
    return None
  if syntax.has_star_args(call) or not all(isinstance(a, ast.Name) for a in call.args) or \
      not all(isinstance(k.value, ast.Name) for k in call.keywords):
    return None
  targets = [t for t in code.port.program.callables.resolve(code.module, code.fn, call.func)
             if isinstance(t, callables.Fn) and not isinstance(t.node, ast.Lambda)]
  found = targets[0].node if len(targets) == 1 and not targets[0].via else None
  if not targets:  # a function of a module beside the program's files
    definition = code.port.program.find_definition(code.port.program.canonical(code.module, code.fn, call.func))
    found = definition[1] if definition and isinstance(definition[1], ast.FunctionDef) else None
  f = code.f
  if found is None:
    if code.exact:
      return None
    return edits_lib.code_of(f.node(call.func)), '[%s]' % ', '.join(
        a.id for a in list(call.args) + [k.value for k in call.keywords])
  names = callables.bind_arguments(call, found)
  if len(names) != len(call.args) + len(call.keywords):
    return None
  names = dict((param, value.id) for param, value in names.items())
  if code.exact:
    if 'weights' not in syntax.positional_names(found) or 'weights' in names:
      return None
    names['weights'] = code.weights
  code.moved.append(statement)
  positional = syntax.positional_names(found)
  if positional[:len(names)] == list(names):  # by position, in metric_fn's own order
    return edits_lib.code_of(f.node(call.func)), '[%s]' % ', '.join(names.values())
  return edits_lib.code_of(f.node(call.func)), '{%s}' % ', '.join("'%s': %s" % item for item in names.items())


def _weighted_copy(code, statement):
  """A statement of the metric slice (as LibCST has it), its tf.metrics calls weighted when evaluation is
  padded."""
  return _weighted(code, statement, code.statement(statement))


def _weighted(code, node, copy):
  """`copy` (LibCST's copy of the ast `node`) with the tf.metrics calls of `node` weighted with the padding's
  weights, when evaluation is padded."""
  f = code.f
  if not code.exact:
    return copy
  weights = code.weights
  metric_calls = set(id(f.node(n)) for n in ast.walk(node) if isinstance(n, ast.Call) and
                     (code.canonical(n.func) or '').startswith('tensorflow.metrics.'))

  class Weigh(cst.CSTTransformer):

    def leave_Call(self, original_node, updated_node):
      if id(original_node) not in metric_calls:
        return updated_node
      existing = edits_lib.arg_node(updated_node, None, 'weights')
      value = edits_lib.expression(weights if existing is None else '%s * (%s)' % (
          weights, edits_lib.code_of(existing.value)))
      changed = edits_lib.set_keyword(updated_node, 'weights', value)
      return changed or edits_lib.add_keywords(updated_node, [('weights', value)], f.column(original_node))

  return copy.visit(Weigh())


def _weigh_loss(code, loss, spec):
  """The evaluation loss weighted with the padding's weights (rule 9)."""
  if code.weights is None:
    return
  if not isinstance(loss, ast.Name):
    raise model_fn_code.Failed(9, 'weight the evaluation loss with %s (0 for padding rows)' % code.weights)
  definitions = code.definitions(loss.id, spec)
  calls = [d.value for d in definitions if isinstance(d, ast.Assign) and isinstance(d.value, ast.Call)]
  if len(definitions) != 1 or len(calls) != 1 or not (code.canonical(calls[0].func) or '').startswith(
      'tensorflow.losses.'):
    raise model_fn_code.Failed(9, 'weight the loss `%s` with %s (0 for the rows that pad the last evaluation '
                               'batch), as tf.losses functions do with weights=' % (loss.id, code.weights))
  call = calls[0]
  if id(call) in code.weighted_losses:
    return  # one loss for EVAL and TRAIN specs alike
  code.weighted_losses.add(id(call))
  f = code.f
  original = f.node(call)
  existing = syntax.keyword(call, 'weights')
  value = code.weights if existing is None else '%s * (%s)' % (code.weights, edits_lib.code_of(f.node(existing)))
  column = f.column(original)
  code.edits.replace(original, lambda updated: edits_lib.set_keyword(updated, 'weights', edits_lib.expression(
      value)) or edits_lib.add_keywords(updated, [('weights', edits_lib.expression(value))], column))
  code.edits.comment(code.statement(definitions[0]), edits_lib.rule_comment(
      9, 'rows that pad the last evaluation batch count in no loss.'))
  code.port.change(f, original, 9, 'loss weighted with %s' % code.weights)
