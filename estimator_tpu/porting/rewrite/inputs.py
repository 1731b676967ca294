"""The input side. TPU rule 3 (params): input_fn(params) batches with params['batch_size']. TPU rule 4 (static
shapes): drop_remainder=True where input trains. TPU rule 9 (steps): evaluate() on full batches, padded with rows
of weight 0, with the number of steps. TPU rule 15 (TPU dtypes): float64 in-memory data cast to float32.
"""
import os

import libcst as cst

from estimator_tpu.porting.rewrite import analysis as analysis_lib
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import source as source_lib
from estimator_tpu.porting.rewrite import templates

PARAMS_BATCH = "params['batch_size']"
# Dataset methods after which a batch keeps its static shape: anything else (a map, a project function) may not.
SHAPE_KEEPING = ('prefetch', 'repeat', 'cache', 'take', 'skip', 'with_options', 'batch', 'padded_batch')


def plan_exact_evaluation(port):
  """Marks the evaluate() calls whose original reads a short last batch (its batch keeps the remainder): the port
  evaluates them through tpu_exact_eval_input, and their estimators' model_fns weight the loss and metrics."""
  port.padded_evaluations = []
  for use in port.analysis.input_uses:
    call = use.method_call
    if call.mode != analysis_lib.EVAL or use.proper is None or not use.batches:
      continue
    if all(batch.drops for batch in use.batches):
      continue  # the original evaluates full batches only: the port evaluates the same ones
    required = port.findings_at(call.file, call.file.line(call.call), 9) or any(
        port.findings_at(b.file, b.file.line(b.call), 4) for b in use.batches)
    if not required:
      continue  # the port report asks for nothing here (TPU code that pads its data itself, like BERT's)
    if _returns_tensors(port, use):
      port.todo(call.file, call.call, 9, 'evaluate on full batches: return the batched Dataset from the input_fn '
                '(rule 3), then wrap it in tpu_exact_eval_input and pass steps=tpu_eval_steps(input_fn, '
                'EVAL_BATCH_SIZE)')
      continue
    port.padded_evaluations.append(use)
    if call.estimator is not None:
      port.exact_eval.add(call.estimator)


def _returns_tensors(port, use):
  """The port report says this input returns tensors (an iterator's get_next()), not the Dataset that padding
  takes."""
  for f, fn in [(use.proper.file, use.proper.node)] + [(b.file, b.fn) for b in use.batches]:
    first, last = f.line(fn), f.end_line(fn)
    for finding in port.findings.get(os.path.abspath(f.path), ()):
      if finding.rule == 3 and 'returns tensors' in finding.message and first <= finding.line <= last:
        return True
  return False


def fix(port):
  given_params = set()
  for use in port.analysis.input_uses:
    if use.proper is not None:
      _give_params(port, use.proper, given_params)
  for site in port.analysis.batch_sites.values():
    _fix_batch(port, site)
  for use in port.padded_evaluations:
    _pad_evaluation(port, use)
  for use in port.analysis.input_uses:
    if use.method_call.mode == analysis_lib.TRAIN and use.proper is not None:
      _pin_static_batch(port, use)
  _cast_float64(port)


def _give_params(port, target, done):
  """input_fn() -> input_fn(params): TPUEstimator passes the batch size there."""
  # Ports rule 3 (params).
  f, fn = target.file, target.node
  if id(fn) in done:
    return
  done.add(id(fn))
  names = [p.name.value for p in source_lib.all_params(fn.params)]
  if 'params' in names:
    return
  if isinstance(fn, cst.Lambda):
    def add(updated):
      params = updated.params.with_changes(params=list(updated.params.params) + [cst.Param(cst.Name('params'))])
      return updated.with_changes(params=params, whitespace_after_lambda=cst.SimpleWhitespace(' '))
    port.edits[f].replace(fn, add)
  else:
    port.edits[f].replace(fn, lambda updated: _append_param(updated, 'params'))
    port.edits[f].comment(fn, edits_lib.rule_comment(3, 'TPUEstimator calls input_fn with params, where the '
                                                     'batch size is.'))
  port.take(f, fn, 3)
  port.change(f, fn, 3, '%s takes params' % ('the lambda given as input_fn' if isinstance(fn, cst.Lambda) else
                                            '%s()' % fn.name.value))


def _append_param(fn, name, default=None):
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


def _fix_batch(port, site):
  # Ports rule 3 (params), rule 4 (static shapes).
  f = site.file
  edits = port.edits[f]
  done = port.header_keys[f]
  first = ('batch', id(site.call)) not in done  # a batch call shared by several input_fns is changed once
  done.add(('batch', id(site.call)))
  line = f.line(site.call)
  if not port.findings_at(f, line, 3):
    site.how = 'params'  # the report asks for nothing about this batch size: it stays as it is
  elif site.how == 'params':
    site.how = None  # read from params, but not params['batch_size'] (params.train_batch_size): left to a human
  if not port.findings_at(f, line, 4):
    site.drops = True  # the report asks for no drop_remainder here
  what = []
  params_comment = edits_lib.rule_comment(3, "the batch size is params['batch_size'], which "
                                          'TPUEstimator sets.')
  if site.how in ('replace', 'thread') and first:
    done.add(('changed', id(site.proper.node)))
    if site.how == 'thread' and not _thread_params(port, site):
      site.how = None
    else:
      edits.replace(site.size, lambda updated: edits_lib.expression(PARAMS_BATCH))
      what.append("batch size %s -> params['batch_size']" % edits_lib.code_of(site.size))
      edits.comment(f.statement_of(site.call), params_comment)
  elif site.how == 'argument':
    caller_file, _, call, callee = site.chain[0]
    parameter = site.size.value if isinstance(site.size, cst.Name) else None
    argument = source_lib.bind_arguments(call, callee).get(parameter)
    if argument is None:
      site.how = None
    else:
      port.edits[caller_file].replace(argument, lambda updated: edits_lib.expression(PARAMS_BATCH))
      port.change(caller_file, argument, 3, "%s gets params['batch_size'] (was %s)" % (
          callee.name.value, edits_lib.code_of(argument)))
      port.edits[caller_file].comment(caller_file.statement_of(call), params_comment)
  if site.how is None:
    port.todo(f, site.call, 3, "batch with params['batch_size'] (where this batch size comes from could not be "
              'traced)')
  else:
    port.take(f, site.call, 3)
  needs_drop = analysis_lib.TRAIN in site.modes and not site.drops
  if needs_drop and first:
    done.add(('changed', id(site.proper.node)))
    _set_drop_remainder(port, site)
    what.append('drop_remainder=True')
    edits.comment(f.statement_of(site.call), edits_lib.rule_comment(
        4, 'full batches only (drop_remainder=True): one static shape for XLA.'))
  if what:
    port.change(f, site.call, 4 if what == ['drop_remainder=True'] else 3, '; '.join(what))
  if needs_drop:  # the finding it answers; others at the batch (padded_shapes with None) stay TODOs
    port.handled.update(x for x in port.findings_at(f, line, 4) if 'without drop_remainder' in x.message)


def _set_drop_remainder(port, site):
  f, call = site.file, site.call
  position = analysis_lib.drop_position(f, call)
  positional = [a for a in call.args if a.keyword is None]
  replace_positional = len(positional) > position

  def rebuild(updated):
    if replace_positional:
      args = list(updated.args)
      index = [i for i, a in enumerate(args) if a.keyword is None][position]
      args[index] = args[index].with_changes(value=cst.Name('True'))
      return updated.with_changes(args=args)
    changed = edits_lib.set_keyword(updated, 'drop_remainder', cst.Name('True'))
    if changed is not None:
      return changed
    return edits_lib.add_keywords(updated, [('drop_remainder', cst.Name('True'))], f.column(call))

  port.edits[f].replace(call, rebuild)


def _thread_params(port, site):
  """A helper that reads its batch size from a global gets a params argument from the input_fn that calls it."""
  if len(site.chain) != 1:
    return False
  callee = site.chain[0][3]
  sites = port.program.call_sites(site.file, callee)
  propers = set(id(u.proper.node) for u in port.analysis.input_uses if u.proper is not None)
  if not sites or any(id(scope) not in propers for _, scope, _ in sites):
    return False
  if 'params' in source_lib.positional_names(callee):
    return True
  port.edits[site.file].replace(callee, lambda updated: _append_param(updated, 'params'))
  for call_file, _, site_call in sites:
    column = call_file.column(site_call)
    port.edits[call_file].replace(site_call, lambda updated, column=column: edits_lib.add_keywords(
        updated, [('params', cst.Name('params'))], column))
  return True


# --- exact evaluation ---------------------------------------------------------------------------------------------

def _pad_evaluation(port, use):
  # Ports rule 9 (steps).
  call = use.method_call
  f, node = call.file, call.call
  site = call.estimator
  from estimator_tpu.porting.rewrite import estimators  # pylint: disable=g-import-not-at-top
  batch = estimators._batch_expression(port, site, analysis_lib.EVAL) if site is not None else None
  if batch is None or not _visible_at(port, use, call):
    port.todo(f, node, 9, 'evaluate on full batches: wrap the input_fn in tpu_exact_eval_input and pass steps='
              "tpu_eval_steps(input_fn, EVAL_BATCH_SIZE) (the eval batch size could not be traced here)")
    return
  port.add_helper(f, 'exact_eval', templates.EXACT_EVAL_HELPERS.format(tf=port.tf_v1(f)), 9,
                  'evaluate() on a TPU runs `steps` full batches: pad them, count every example once.')
  statement = f.statement_of(node)
  input_arg = source_lib.arg_node(node, 0, 'input_fn')
  if isinstance(input_arg.value, cst.Name):
    name = input_arg.value.value
    holder = None
  else:
    name = port.new_name(f, 'exact_eval_input_fn')
    holder = {}
  steps_arg = source_lib.arg_node(node, 1, 'steps')
  steps_value = steps_arg.value if steps_arg is not None else None
  literal = source_lib.literal(steps_value) if steps_value is not None else None
  count = 'tpu_eval_steps(%s, %s)' % (name, batch)
  if steps_value is None or literal is None:
    steps_code = count
  elif literal is source_lib.NO_VALUE:
    steps_code = '%s or %s' % (edits_lib.code_of(steps_value), count)
  else:
    steps_code = None  # a number of steps the program chose: kept
  edits = port.edits[f]

  if holder is not None:
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
    value = holder['value'] if holder is not None else cst.Name(name)
    wrapped = cst.Call(func=cst.Name('tpu_exact_eval_input'), args=[cst.Arg(value)])
    line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], wrapped)])
    text = edits_lib.rule_comment(9, 'a TPU evaluates full batches: padded with copies of weight 0; steps '
                                  'counts them.')
    return [edits_lib.commented(line, text, f.indent_of(statement))]
  edits.insert_before(statement, [wrap])
  port.take(f, node, 9)
  port.change(f, node, 9, 'evaluate(): input padded to full batches of %s, steps=%s' % (batch, steps_code or
                                                                                      edits_lib.code_of(steps_value)))
  for batch_site in use.batches:
    port.take(batch_site.file, batch_site.call, 4)


def _visible_at(port, use, call):
  """The eval batch size's expression can be written at the evaluate() call."""
  from estimator_tpu.porting.rewrite import estimators  # pylint: disable=g-import-not-at-top
  for batch in use.batches:
    if batch.origin is None:
      return False
    origin_file, origin_scope, expression = batch.origin
    if not estimators._visible(call.file, call.scope, origin_file, origin_scope, expression):
      return False
  return True


# --- dtypes -------------------------------------------------------------------------------------------------------

def _cast_float64(port):
  """In-memory data the report finds float64, or cannot tell (NumPy and pandas default to float64), is cast from
  float64 to float32 on the host as it enters the input pipeline: the TPU infeed takes no float64 (rule 15)."""
  # Ports rule 15 (TPU dtypes).
  functions = set()
  for use in port.analysis.input_uses:
    for batch in use.batches:
      functions.add((batch.file, batch.fn))
  for f, fn in functions:
    body = fn.body if isinstance(fn, cst.FunctionDef) else fn
    for node in source_lib.walk(body):
      if not isinstance(node, cst.Call):
        continue
      canonical = f.canonical(node.func) or ''
      if canonical not in ('tensorflow.data.Dataset.from_tensor_slices', 'tensorflow.data.Dataset.from_tensors'):
        continue
      if not port.findings_at(f, f.line(node), 15):
        continue
      data = node.args[0].value if node.args else None
      if data is None or (isinstance(data, cst.Call) and data.args and
                          source_lib.dotted(data.args[0].value) == 'tpu_float32'):
        continue  # cast already (a port of a port)
      port.add_helper(f, 'float32', templates.FLOAT32_HELPER, 15,
                      'the TPU infeed takes no float64 (NumPy and pandas default to it).')
      map_structure = cst.parse_expression('%s.nest.map_structure' % port.tf_v1(f))
      port.edits[f].replace(data, lambda updated, map_structure=map_structure: cst.Call(func=map_structure, args=[
          cst.Arg(cst.Name('tpu_float32'), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' '))),
          cst.Arg(updated)]))
      port.edits[f].comment(f.statement_of(node), edits_lib.rule_comment(
          15, 'the TPU infeed takes no float64: tpu_float32 casts it on the host.'))
      port.take(f, node, 15)
      port.change(f, node, 15, 'float64 in-memory data cast to float32 (tpu_float32)')


# --- static shapes after the batch ------------------------------------------------------------------------------

def _pin_static_batch(port, use):
  """A training input_fn whose batches go through more than shape-keeping Dataset methods after the batch returns
  tpu_static_batch(...): its batches are full, and the shapes say so."""
  # Ports rule 4 (static shapes).
  proper = use.proper
  if isinstance(proper.node, cst.Lambda) or not use.batches:
    return
  f, fn = proper.file, proper.node
  if any(batch.fn is not fn for batch in use.batches) or ('changed', id(fn)) not in port.header_keys[f]:
    return
  key = ('pinned', id(fn))
  if key in port.header_keys[f]:
    return
  for node in source_lib.walk_local(fn.body):
    if isinstance(node, cst.Return) and node.value is not None and not _keeps_shape(f, fn, node.value, use):
      port.header_keys[f].add(key)
      port.add_helper(f, 'static_batch', templates.STATIC_BATCH_HELPER.format(tf=port.tf_v1(f)), 4,
                      'XLA compiles a TPU program for one static shape.')
      port.edits[f].replace(node, lambda updated: updated.with_changes(value=cst.Call(
          func=cst.Name('tpu_static_batch'), args=[cst.Arg(updated.value, comma=cst.Comma(
              whitespace_after=cst.SimpleWhitespace(' '))), cst.Arg(edits_lib.expression(PARAMS_BATCH))])))
      port.edits[f].comment(f.statement_of(node), edits_lib.rule_comment(
          4, 'the batches are full: tpu_static_batch puts that in the shapes.'))
      port.change(f, node, 4, 'return tpu_static_batch(..., params[\'batch_size\'])')


def _keeps_shape(f, fn, value, use, before=None, depth=0):
  """True when a returned dataset is the batch itself, or shape-keeping methods on it, or on the name the batch
  was last assigned to before the return."""
  batch_calls = set(id(b.call) for b in use.batches)
  node = value
  while True:
    if id(node) in batch_calls:
      return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
      if node.func.attr.value == 'apply' and node.args and id(node.args[0].value) in batch_calls:
        return True
      if node.func.attr.value not in SHAPE_KEEPING:
        return False
      node = node.func.value
      continue
    if isinstance(node, cst.Name) and depth < 6:
      line = f.line(node)
      assignments = [n for n in source_lib.walk_local(fn.body) if isinstance(n, cst.Assign) and f.line(n) < line
                     and any(node.value in source_lib.assigned_names(t.target) for t in n.targets)]
      if not assignments:
        return False
      last = max(assignments, key=f.line)
      return _keeps_shape(f, fn, last.value, use, before, depth + 1)
    return False


def _is_source(f, value):
  name = f.canonical(value.func) if isinstance(value, cst.Call) else None
  return bool(name) and name.startswith('tensorflow.data.')
