"""TPU rule 9 (steps): evaluate() on full batches, padded with rows of weight 0, with the number of steps, where
the original reads a short last batch; the model_fn of its estimator then weights the loss and the metrics
(fixers/model_fns.py)."""
import ast

import libcst as cst

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import plans as plans_lib
from estimator_tpu.porting.rewrite import templates
from estimator_tpu.porting.rewrite.fixers import estimator_spec
from estimator_tpu.porting.rewrite.fixers import example_weights
from estimator_tpu.porting.rewrite.fixers import input_params
from estimator_tpu.porting.rewrite.fixers import model_fn_code

STEPS_CODES = ('evaluate-without-steps', 'evaluate-steps-unseen', 'eval-spec-steps-none')


def plan(port):
  """Marks the evaluate() calls whose original reads a short last batch (its batch keeps the remainder): the port
  evaluates them through tpu_exact_eval_input, and their estimators' model_fns weight the loss and metrics."""
  for plan_ in port.plans.inputs:
    use = plan_.use
    if plan_.mode != plans_lib.EVAL or plan_.proper is None or not plan_.batches:
      continue
    if all(batch.drops for batch in plan_.batches):
      continue  # the original evaluates full batches only: the port evaluates the same ones
    required = port.findings(use.module, use.call, STEPS_CODES) or any(
        port.findings(b.module, b.call, input_params.SHAPE_CODES) for b in plan_.batches)
    if not required:
      continue  # the port report asks for nothing here (TPU code that pads its data itself, like BERT's)
    if input_params.returns_tensors(port, plan_):
      port.todo(use.module, use.call, STEPS_CODES, 9, 'evaluate on full batches: return the batched Dataset from '
                'the input_fn (rule 3), then wrap it in tpu_exact_eval_input and pass steps=tpu_eval_steps(input_fn, '
                'EVAL_BATCH_SIZE)')
      continue
    if not all(example_weights.can_take_weights(t.module, t.node)
               for site in plan_.estimators for t in port.uses.model_fns_of(site)):
      # Padding adds a weight key to the features, which a model_fn that uses them whole cannot take out: padded
      # rows would count in its metrics (or a tensor feature could not take the key at all).
      port.todo(use.module, use.call, STEPS_CODES, 9, "evaluate on full batches: once model_fn reads its features "
                "by key and takes features['%s'] out (weighting loss and metrics with it), wrap the input_fn in "
                'tpu_exact_eval_input and pass steps=tpu_eval_steps(input_fn, EVAL_BATCH_SIZE)' % templates.WEIGHT_KEY)
      continue
    if any(_own_eval_metrics(port, t) for site in plan_.estimators for t in port.uses.model_fns_of(site)):
      # A TPUEstimatorSpec's eval_metrics the program wrote itself: the port does not rewrite its metric_fn, so
      # nothing would weight the padded rows (its metrics would count them).
      port.todo(use.module, use.call, STEPS_CODES, 9, "evaluate on full batches: once model_fn weights its "
                "eval_metrics (and its loss) with features['%s'] (0 for padding rows), wrap the input_fn in "
                'tpu_exact_eval_input and pass steps=tpu_eval_steps(input_fn, EVAL_BATCH_SIZE)' % templates.WEIGHT_KEY)
      continue
    if not all(_metrics_weighted(port, t) for site in plan_.estimators for t in port.uses.model_fns_of(site)):
      # An EstimatorSpec whose eval_metric_ops the port cannot move into a weighted metric_fn (they read params, a
      # dict built in a branch, a spec built in a helper): padded rows would count in its metrics.
      port.todo(use.module, use.call, STEPS_CODES, 9, "evaluate on full batches: once the eval metrics are a "
                "metric_fn weighted by features['%s'] (0 for padding rows; see the rule-5 TODO), wrap the input_fn "
                'in tpu_exact_eval_input and pass steps=tpu_eval_steps(input_fn, EVAL_BATCH_SIZE)' % templates.WEIGHT_KEY)
      continue
    port.padded_evaluations.append(plan_)
    port.exact_eval.update(plan_.estimators)


def _metrics_weighted(port, target):
  """Whether every EstimatorSpec with eval_metric_ops that model_fn returns (its own, or one a function it calls
  builds) is one the port moves into a metric_fn, which it weights: read before any edit."""
  if isinstance(target.node, ast.Lambda):
    return False
  code = model_fn_code.ModelFnCode(port, target.module, target.node, True)
  for module, fn, call in _calls_given(port, target, 'eval_metric_ops'):
    canonical = port.program.canonical(module, fn, call.func) or ''
    if apis.is_tf(canonical) and apis.last(canonical) == 'EstimatorSpec' and (
        fn is not target.node or not estimator_spec.metrics_movable(code, call)):
      return False
  return True


def _own_eval_metrics(port, target):
  """Whether a model_fn returns a TPUEstimatorSpec with eval_metrics of the program's own (the functions it calls
  included, one level down)."""
  return any(apis.is_tpu_estimator_spec(port.program.canonical(module, fn, call.func))
             for module, fn, call in _calls_given(port, target, 'eval_metrics'))


def _calls_given(port, target, keyword):
  """(module, def, call) of the calls given `keyword=` in a model_fn and in the functions it calls (one level)."""
  program = port.program
  defs = [(target.module, target.node)]
  for node, _ in syntax.walk_local(target.node):
    if isinstance(node, ast.Call):
      defs += [(c.module, c.node) for c in program.callables.called_defs(target.module, target.node, node)]
  return [(module, fn, node) for module, fn in defs for node, _ in syntax.walk_local(fn)
          if isinstance(node, ast.Call) and syntax.keyword(node, keyword) is not None]


def pad(port):
  for plan_ in port.padded_evaluations:
    _pad_evaluation(port, plan_)


def _pad_evaluation(port, plan_):
  # Ports rule 9 (steps).
  use = plan_.use
  module, call = use.module, use.call
  f = port.file_of(module)
  site = plan_.estimators[0] if len(plan_.estimators) == 1 else None
  batch = port.plans.batch_expression(site, plans_lib.EVAL) if site is not None else None
  if batch is None or not all(b.origin is not None and port.plans.visible(module, use.fn, b.origin)
                              for b in plan_.batches):
    port.todo(module, call, STEPS_CODES, 9, 'evaluate on full batches: wrap the input_fn in tpu_exact_eval_input and '
              "pass steps=tpu_eval_steps(input_fn, EVAL_BATCH_SIZE) (the eval batch size could not be traced here)")
    return
  port.add_helper(f, 'exact_eval', templates.EXACT_EVAL_HELPERS.format(tf=port.tf_v1(f)), 9,
                  'evaluate() on a TPU runs `steps` full batches: pad them, count every example once.')
  node = f.node(call)
  statement = f.statement_of(node)
  input_arg = edits_lib.arg_node(node, 0, 'input_fn')
  # Always a new name: rebinding the input_fn's own name would make it local to the whole function (an
  # UnboundLocalError where training reads it first) and pad every later use of it too.
  name = port.new_name(f, 'exact_eval_input_fn')
  holder = {}
  steps_arg = edits_lib.arg_node(node, 1, 'steps')
  steps = syntax.argument(call, 1, 'steps')
  literal = syntax.literal(steps) if steps is not None else None
  count = 'tpu_eval_steps(%s, %s)' % (name, batch)
  if steps is None or literal is None:
    steps_code = count
  elif literal is syntax.NO_VALUE:
    steps_code = '%s or %s' % (edits_lib.code_of(steps_arg.value), count)
  else:
    steps_code = None  # a number of steps the program chose: kept
  edits = port.edits[f]

  def capture(updated):
    holder['value'] = updated.value
    return updated.with_changes(value=cst.Name(name))
  edits.replace(input_arg, capture)
  if steps_code is not None:
    column = f.column(node)

    def set_steps(updated):
      changed = edits_lib.set_keyword(updated, 'steps', edits_lib.expression(steps_code))
      if changed is None and steps_arg is not None:  # positional
        args = list(updated.args)
        index = [i for i, a in enumerate(args) if a.keyword is None][1]
        args[index] = args[index].with_changes(value=edits_lib.expression(steps_code))
        return updated.with_changes(args=args)
      return changed or edits_lib.add_keywords(updated, [('steps', edits_lib.expression(steps_code))], column)
    edits.replace(node, set_steps)

  def wrap():
    wrapped = cst.Call(func=cst.Name('tpu_exact_eval_input'), args=[cst.Arg(holder['value'])])
    line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], wrapped)])
    text = edits_lib.rule_comment(9, 'a TPU evaluates full batches: padded with copies of weight 0; steps '
                                  'counts them.')
    return [edits_lib.commented(line, text, f.indent_of(statement))]
  edits.insert_before(statement, [wrap])
  port.take(module, call, STEPS_CODES)
  port.change(f, node, 9, 'evaluate(): input padded to full batches of %s, steps=%s' % (
      batch, steps_code or edits_lib.code_of(steps_arg.value)))
  for batch_plan in plan_.batches:
    port.take(batch_plan.module, batch_plan.call, input_params.SHAPE_CODES)
