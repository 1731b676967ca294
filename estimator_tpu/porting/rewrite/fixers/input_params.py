"""TPU rule 3 (params): input_fn(params) batches with params['batch_size']. TPU rule 4 (static shapes):
drop_remainder=True where input trains, and the batches' static shape pinned when steps after the batch lose it.
"""
import ast

import libcst as cst

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import inputs
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import plans as plans_lib
from estimator_tpu.porting.rewrite import templates

PARAMS_BATCH = "params['batch_size']"
SIZE_CODES = ('batch-size-not-params',)
# What a batch's rule 4 findings are; drop_remainder=True answers the first.
SHAPE_CODES = ('batch-without-drop-remainder', 'batch-drop-remainder-unseen', 'padded-batch-dynamic-shapes')
DROP_CODES = ('batch-without-drop-remainder',)
# Dataset methods after which a batch keeps its static shape: anything else (a map, a project function) may not.
SHAPE_KEEPING = ('prefetch', 'repeat', 'cache', 'take', 'skip', 'with_options', 'batch', 'padded_batch')

# Batching with no drop_remainder to set: queues (tf.train.batch, contrib.learn's readers, a queue reader's
# read_up_to) and make_csv_dataset.
QUEUE_METHODS = apis.QUEUE_BATCHING | frozenset(apis.EPOCH_READERS) | frozenset(apis.FEATURE_DATASETS) | \
    frozenset([inputs.READ_UP_TO])


def give_params_and_batch(port):
  given_params = set()
  for plan in port.plans.inputs:
    if plan.proper is not None:
      _give_params(port, plan.proper, given_params)
  for batch in port.plans.batches.values():
    _fix_batch(port, batch)


def pin_static_batches(port):
  for plan in port.plans.inputs:
    if plan.mode == plans_lib.TRAIN and plan.proper is not None:
      _pin_static_batch(port, plan)


def _give_params(port, target, done):
  """input_fn() -> input_fn(params): TPUEstimator passes the batch size there."""
  # Ports rule 3 (params).
  fn = target.node
  if id(fn) in done:
    return
  done.add(id(fn))
  if 'params' in _parameters(fn):
    return
  f = port.file_of(target.module)
  original = f.node(fn)
  if isinstance(fn, ast.Lambda):
    def add(updated):
      params = updated.params.with_changes(params=list(updated.params.params) + [cst.Param(cst.Name('params'))])
      return updated.with_changes(params=params, whitespace_after_lambda=cst.SimpleWhitespace(' '))
    port.edits[f].replace(original, add)
  else:
    port.edits[f].replace(original, lambda updated: append_param(updated, 'params'))
    port.edits[f].comment(original, edits_lib.rule_comment(3, 'TPUEstimator calls input_fn with params, where the '
                                                          'batch size is.'))
  port.take(target.module, fn, ('input-fn-without-params',))
  if target.partial:  # functools.partial(fn, batch_size=...) without params: the report's change is the partial's
    port.take(target.partial[0], target.partial[1], ('input-fn-without-params',))
  port.change(f, original, 3, '%s takes params' % ('the lambda given as input_fn' if isinstance(fn, ast.Lambda) else
                                                  '%s()' % fn.name))


def _parameters(fn):
  """The parameters a call can name: positional ones and keyword-only ones (not *args, **kwargs)."""
  args = fn.args
  return [a.arg for a in getattr(args, 'posonlyargs', [])] + [a.arg for a in args.args] + \
      [a.arg for a in args.kwonlyargs]


def append_param(fn, name, default=None):
  """A LibCST def with a parameter `name` added at the end of its plain parameters."""
  params = list(fn.params.params)
  if default is None and params and params[-1].default is not None:
    default = cst.Name('None')  # after a parameter with a default; the port passes it by name (params=...)
  new = cst.Param(cst.Name(name), default=default, equal=cst.AssignEqual(
      whitespace_before=cst.SimpleWhitespace(''), whitespace_after=cst.SimpleWhitespace('')) if default else
                  cst.MaybeSentinel.DEFAULT)
  if params and params[-1].comma is not cst.MaybeSentinel.DEFAULT:
    new = new.with_changes(comma=params[-1].comma)
  if params:
    params[-1] = params[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' ')))
  params.append(new)
  return fn.with_changes(params=fn.params.with_changes(params=params))


def _fix_batch(port, batch):
  # Ports rule 3 (params), rule 4 (static shapes).
  module = batch.module
  f = port.file_of(module)
  edits = port.edits[f]
  done = port.header_keys[f]
  first = ('batch', id(batch.call)) not in done  # a batch call shared by several input_fns is changed once
  done.add(('batch', id(batch.call)))
  call = f.node(batch.call)
  # (a lambda that hands its batch size on: the report's one change is the lambda's, made by replacing its argument)
  handed = batch.proper is not None and inputs.size_handed_by_lambda(port.program, batch.proper, batch.site)
  handed_on = batch.how == 'argument' and handed
  # (an object the lambda hands over holds the batch size, self.batch_size: the report's change is the lambda's,
  # and the object's batch is left to a human, a TODO here)
  held = batch.how is None and batch.proper is not None and \
      inputs.object_handed_by_lambda(port.program, batch.proper, batch.site)
  # (a partial that binds the batch size, the report's change: the def takes params and batches with them instead)
  bound = batch.proper is not None and inputs.size_bound_by_partial(batch.proper, batch.site) is not None
  if batch.site.from_params or \
      not port.findings(module, batch.call, SIZE_CODES) and not handed_on and not held and not bound:
    # the report asks for nothing about this batch size (or the input_fn already hands params['batch_size'] on, through
    # a local or an argument): it stays as it is
    batch.how = 'params'
  elif batch.how == 'params':
    batch.how = None  # read from params, but not params['batch_size'] (params.train_batch_size): left to a human
  if not port.findings(module, batch.call, SHAPE_CODES):
    batch.drops = True  # the report asks for no drop_remainder here
  what = []
  params_comment = edits_lib.rule_comment(3, "the batch size is params['batch_size'], which "
                                          'TPUEstimator sets.')
  if batch.how in ('replace', 'thread') and first:
    done.add(('changed', id(batch.proper.node)))
    if batch.how == 'thread' and not _thread_params(port, batch):
      batch.how = None
    else:
      size = f.node(batch.size)
      edits.replace(size, lambda updated: edits_lib.expression(PARAMS_BATCH))
      what.append("batch size %s -> params['batch_size']" % edits_lib.code_of(size))
      edits.comment(f.statement_of(call), params_comment)
  elif batch.how == 'argument':
    step = batch.chain[0]
    parameter = batch.size.id if isinstance(batch.size, ast.Name) else None
    argument = callables.bind_arguments(step.call, step.callee.node).get(parameter)
    if argument is None and handed_on and parameter in inputs.passable_parameters(step.callee.node):
      # `lambda: input_fn(files)` with batch_size a defaulted parameter: the lambda hands params['batch_size'] on.
      caller = port.file_of(step.module)
      node = caller.node(step.call)
      port.edits[caller].replace(node, lambda updated: edits_lib.add_keywords(
          updated, [(parameter, edits_lib.expression(PARAMS_BATCH))]))
      port.change(caller, node, 3, "%s gets %s=params['batch_size'] (was its default)" % (
          step.callee.node.name, parameter))
      port.edits[caller].comment(caller.statement_of(node), params_comment)
    elif argument is None:
      batch.how = None
    else:
      caller = port.file_of(step.module)
      node = caller.node(argument)
      port.edits[caller].replace(node, lambda updated: edits_lib.expression(PARAMS_BATCH))
      port.change(caller, node, 3, "%s gets params['batch_size'] (was %s)" % (step.callee.node.name,
                                                                              edits_lib.code_of(node)))
      port.edits[caller].comment(caller.statement_of(caller.node(step.call)), params_comment)
  if batch.how is None:
    port.todo(module, batch.call, SIZE_CODES, 3, "batch with params['batch_size'] (where this batch size comes from "
              'could not be traced)')
  else:
    port.take(module, batch.call, SIZE_CODES)
  needs_drop = plans_lib.TRAIN in batch.modes and not batch.drops
  if needs_drop and batch.site.drop is not None and batch.site.drops is None:
    needs_drop = False  # the program's own drop_remainder=<expression> (drop_remainder=use_tpu): kept as written
  if needs_drop and batch.site.method in apis.FEATURE_DATASETS:
    port.todo(module, batch.call, DROP_CODES, 4, 'drop_final_batch=True where this input trains or evaluates on a '
              'TPU (one static shape for XLA; pad evaluation data to full batches to keep every example)')
    needs_drop = False
  elif needs_drop and batch.site.method in QUEUE_METHODS:
    port.todo(module, batch.call, DROP_CODES, 4, 'this batch may end short (read_up_to, allow_smaller_final_batch, '
              'or num_epochs set), and its maker takes no drop_remainder: feed a tf.data.Dataset batched with '
              'drop_remainder=True')
    needs_drop = False
  drop = _drop_value(port, batch) if needs_drop else None
  if needs_drop and drop is None:
    port.todo(module, batch.call, DROP_CODES, 4, 'drop_remainder=True for training only: this batch also feeds %s, '
              'where dropping the last batch would lose examples (give the input_fn a `mode` argument and drop when '
              'mode == TRAIN)' % _shared_modes(port, batch))
    needs_drop = False
  if needs_drop and first:
    done.add(('changed', id(batch.proper.node)))
    _set_drop_remainder(port, f, batch, call, drop)
    what.append('drop_remainder=%s' % drop)
    edits.comment(f.statement_of(call), edits_lib.rule_comment(
        4, 'full batches only (drop_remainder=True): one static shape for XLA.' if drop == 'True' else
        'full training batches only: one static shape for XLA; evaluation and prediction keep every example.'))
  if what:
    port.change(f, call, 4 if what == ['drop_remainder=True'] else 3, '; '.join(what))
  if needs_drop:  # the finding it answers; others at the batch (padded_shapes with None) stay TODOs
    port.take(module, batch.call, DROP_CODES)


def _shared_modes(port, batch):
  """The uses of a training batch whose results a dropped remainder would change: prediction (TPUEstimator pads
  its last batch itself) and evaluation that is not padded (fixers/exact_evaluation.py)."""
  shared = set()
  for plan in port.plans.inputs:
    # the same batching call, read through any of the input_fns that reach it (each plan has its own BatchPlan)
    if any(b.call is batch.call for b in plan.batches):
      if plan.mode == plans_lib.PREDICT:
        shared.add('prediction')
      elif plan.mode == plans_lib.EVAL and not any(plan is p for p in port.padded_evaluations):
        shared.add('evaluation')
  return ' and '.join(sorted(shared))


def _drop_value(port, batch):
  """drop_remainder's value: True for a batch only training reads; for one prediction or unpadded evaluation
  read too, `mode == TRAIN` in the input_fn TPUEstimator calls with its mode (a `mode` parameter, added when
  missing); None when that cannot be written here."""
  if not _shared_modes(port, batch):
    return 'True'
  proper = batch.proper.node
  if batch.chain or isinstance(proper, ast.Lambda):
    return None
  f = port.file_of(batch.proper.module)
  parameters = _parameters(proper)
  if 'mode' not in parameters:
    if proper.args.vararg is not None or proper.args.kwarg is not None:
      return None
    if any(isinstance(node, ast.Name) and node.id == 'mode' for node in ast.walk(proper)):
      return None  # it reads a `mode` of the builder around it, which a parameter would hide
    key = ('mode parameter', id(proper))
    if key not in port.header_keys[f]:
      port.header_keys[f].add(key)
      port.edits[f].replace(f.node(proper), lambda updated: append_param(updated, 'mode', cst.Name('None')))
  return 'mode == %s.estimator.ModeKeys.TRAIN' % port.tf_v1(f)


def _set_drop_remainder(port, f, batch, call, value='True'):
  position = batch.site.drop_position
  positional = [a for a in call.args if a.keyword is None]
  replace_positional = len(positional) > position
  column = f.column(call)

  def rebuild(updated):
    if replace_positional:
      args = list(updated.args)
      index = [i for i, a in enumerate(args) if a.keyword is None][position]
      args[index] = args[index].with_changes(value=edits_lib.expression(value))
      return updated.with_changes(args=args)
    changed = edits_lib.set_keyword(updated, 'drop_remainder', edits_lib.expression(value))
    if changed is not None:
      return changed
    return edits_lib.add_keywords(updated, [('drop_remainder', edits_lib.expression(value))], column)

  port.edits[f].replace(call, rebuild)


def _thread_params(port, batch):
  """A helper that reads its batch size from a global gets a params argument from the input_fn that calls it."""
  if len(batch.chain) != 1:
    return False
  callee = batch.chain[0].callee
  sites = port.program.callables.call_sites(callee.node)
  propers = set(id(p.proper.node) for p in port.plans.inputs if p.proper is not None)
  if not sites or any(id(scope) not in propers for _, scope, _ in sites):
    return False
  if 'params' in syntax.positional_names(callee.node):
    return True
  f = port.file_of(callee.module)
  port.edits[f].replace(f.node(callee.node), lambda updated: append_param(updated, 'params'))
  for call_module, _, site_call in sites:
    call_file = port.file_of(call_module)
    node = call_file.node(site_call)
    column = call_file.column(node)
    port.edits[call_file].replace(node, lambda updated, column=column: edits_lib.add_keywords(
        updated, [('params', cst.Name('params'))], column))
  return True


def returns_tensors(port, plan_):
  """The port report says this input returns tensors (an iterator's get_next()), not the Dataset that padding
  takes."""
  functions = [(plan_.proper.module, plan_.proper.node)] + [(b.module, b.fn) for b in plan_.batches]
  for module, fn in functions:
    f = port.file_of(module)
    node = f.node(fn)
    first, last = f.line(node), f.end_line(node)
    for finding in port.report.findings:
      if finding.code == 'input-fn-returns-tensors' and finding.path == module.path and \
          first <= finding.line <= last:
        return True
  return False


def _pin_static_batch(port, plan):
  """A training input_fn whose batches go through more than shape-keeping Dataset methods after the batch returns
  tpu_static_batch(...): its batches are full, and the shapes say so."""
  # Ports rule 4 (static shapes).
  proper = plan.proper
  if isinstance(proper.node, ast.Lambda) or not plan.batches:
    return
  fn = proper.node
  f = port.file_of(proper.module)
  if any(batch.fn is not fn for batch in plan.batches) or ('changed', id(fn)) not in port.header_keys[f]:
    return
  if returns_tensors(port, plan):
    return  # an iterator's tensors, not a Dataset: the report's TODO asks for the Dataset first
  key = ('pinned', id(fn))
  if key in port.header_keys[f]:
    return
  not_taken = inputs.read_input_fn(port.program, proper).not_taken  # another mode's branch: not this input's
  for node, _ in syntax.walk_local(fn):
    if isinstance(node, ast.Return) and node.value is not None and id(node) not in not_taken and \
        not _keeps_shape(fn, node.value, plan):
      port.header_keys[f].add(key)
      port.add_helper(f, 'static_batch', templates.STATIC_BATCH_HELPER.format(tf=port.tf_v1(f)), 4,
                      'XLA compiles a TPU program for one static shape.')
      returned = f.node(node)
      port.edits[f].replace(returned, lambda updated: updated.with_changes(value=cst.Call(
          func=cst.Name('tpu_static_batch'), args=[cst.Arg(updated.value, comma=cst.Comma(
              whitespace_after=cst.SimpleWhitespace(' '))), cst.Arg(edits_lib.expression(PARAMS_BATCH))])))
      port.edits[f].comment(f.statement_of(returned), edits_lib.rule_comment(
          4, 'the batches are full: tpu_static_batch puts that in the shapes.'))
      port.change(f, returned, 4, 'return tpu_static_batch(..., params[\'batch_size\'])')


def _keeps_shape(fn, value, plan, depth=0):
  """True when a returned dataset is the batch itself, or shape-keeping methods on it, or on the name the batch
  was last assigned to before the return."""
  batch_calls = set(id(b.call) for b in plan.batches)
  node = value
  while True:
    if id(node) in batch_calls:
      return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
      if node.func.attr == 'apply' and node.args and id(node.args[0]) in batch_calls:
        return True
      if node.func.attr not in SHAPE_KEEPING:
        return False
      node = node.func.value
      continue
    if isinstance(node, ast.Name) and depth < 6:
      assignments = [n for n, _ in syntax.walk_local(fn) if isinstance(n, ast.Assign) and n.lineno < node.lineno
                     and any(node.id in syntax.assigned_names(t) for t in n.targets)]
      if not assignments:
        return False
      last = max(assignments, key=lambda n: n.lineno)
      return _keeps_shape(fn, last.value, plan, depth + 1)
    return False
