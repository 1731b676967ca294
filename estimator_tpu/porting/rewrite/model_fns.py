"""The model_fn. TPU rule 3 (params): model_fn(..., params). TPU rule 5 (TPUEstimatorSpec): the spec, and
eval_metrics=(metric_fn, tensors). TPU rule 6 (gradient all-reduce): CrossShardOptimizer when params['use_tpu'].
TPU rule 7 (summaries on the host): summaries written by host_call. TPU rule 9 (steps): the loss and metrics
weighted when evaluation is padded to full batches.

Metrics and summaries move out of the TPU computation into functions of the tensors they read: the statements
that compute them from tf.metrics (a slice of the model_fn) are copied into metric_fn or the host_call function,
and removed from the model_fn when nothing left there reads them.
"""
import libcst as cst

from estimator_tpu.porting.rewrite import analysis as analysis_lib
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import source as source_lib
from estimator_tpu.porting.rewrite import templates

NOT_TENSORS = ('mode', 'params', 'config')
SUMMARY_KINDS = ('scalar', 'histogram', 'image', 'text', 'audio')
OPTIMIZER_METHODS = ('minimize', 'apply_gradients')


def fix(port):
  done = set()
  for site in port.analysis.estimators:
    for target in port.analysis.model_fn_of(site):
      if id(target.node) not in done and port.program.is_ported(target.file):
        done.add(id(target.node))
        model_fn = _ModelFn(port, target.file, target.node, site in port.exact_eval)
        if site.tpu:
          model_fn.run_tpu()  # TPUEstimator code already: only an optimizer wrapped off the TPU too
        else:
          model_fn.run()


class _Failed(Exception):
  """A change that cannot be made here; its message is the TODO's."""

  def __init__(self, rule, what):
    super(_Failed, self).__init__(what)
    self.rule = rule
    self.what = what


class _ModelFn(object):

  def __init__(self, port, f, fn, exact):
    self.port = port
    self.f = f
    self.fn = fn
    self.exact = exact
    self.edits = port.edits[f]
    self.tf = port.tf_v1(f)
    self.param_names = [p.name.value for p in source_lib.all_params(fn.params)]
    self.features = self.param_names[0] if self.param_names else 'features'
    self.statements = [n for n in source_lib.walk_local(fn.body)
                       if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement))]
    self.moved = []  # statements copied into metric_fn / host_call
    self.moved_reads = set()  # id() of Name nodes whose reads no longer count (the values being replaced)
    self.weights = None
    self.needs = set()  # 'params', 'config'
    self._metric_memo = {}
    self.weighted_losses = set()

  def run(self):
    if self.exact:
      self._weigh_examples()
    for call in self._calls():
      canonical = self.f.canonical(call.func) or ''
      if analysis_lib.is_tf(canonical) and analysis_lib.last(canonical) == 'EstimatorSpec':
        self._spec(call)
    for call in self._calls():
      if isinstance(call.func, cst.Attribute) and call.func.attr.value in OPTIMIZER_METHODS and \
          self.port.findings_at(self.f, self.f.line(call), 6):
        self._guarded(6, call, self._cross_shard, call)
    self._summaries()
    self._remove_moved()
    self._signature()

  def run_tpu(self):
    for call in self._calls():
      if isinstance(call.func, cst.Attribute) and call.func.attr.value in OPTIMIZER_METHODS and \
          self.port.findings_at(self.f, self.f.line(call), 6) and self._always_wrapped(call):
        self._guarded(6, call, self._cross_shard, call)
    if 'params' in self.needs:
      self._signature()

  def _always_wrapped(self, call):
    receiver = call.func.value
    if not isinstance(receiver, cst.Name):
      return False
    definitions = self._definitions(receiver.value, self.f.statement_of(call))
    return len(definitions) == 1 and isinstance(definitions[0], cst.SimpleStatementLine) and \
        self._optimizer_kind(definitions[0].body[0].value) == 'wrapped'

  def _calls(self):
    return [n for n in source_lib.walk_local(self.fn.body) if isinstance(n, cst.Call)]

  def _guarded(self, rule, node, method, *args):
    try:
      return method(*args)
    except _Failed as e:
      self.port.todo(self.f, node, e.rule, e.what)
      return None

  # --- signature ------------------------------------------------------------------------------------------------

  def _signature(self):
    # Ports rule 3 (params).
    needs = ['params'] + (['config'] if 'config' in self.needs else [])
    missing = [n for n in needs if n not in self.param_names]
    for statement in self.statements:  # `del params` at the top: the port reads params now
      small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
      if isinstance(small, cst.Del) and 'params' in self.needs:
        self._undelete(statement, small)
    if not missing:
      self.port.take(self.f, self.fn, 3)
      return

    def add(updated):
      names = [p.name.value for p in updated.params.params]
      position = max([names.index(n) + 1 for n in ('features', 'labels', 'mode', 'params') if n in names] or
                     [len(names)])
      return updated.with_changes(params=insert_params(updated.params, position, missing))

    self.edits.replace(self.fn, add)
    self.port.take(self.f, self.fn, 3)
    self.port.change(self.f, self.fn, 3, 'model_fn takes %s' % ', '.join(missing))
    why = 'TPUEstimator passes params (use_tpu, the per-core batch size)'
    if 'config' in missing:
      why += '; config.model_dir: where host_call writes'
    self.edits.comment(self.fn, edits_lib.rule_comment(3, why + '.'))

  def _undelete(self, statement, small):
    """`del params` (or `del labels, params`) without params: the port reads it now."""
    targets = [e.value for e in small.target.elements] if isinstance(small.target, cst.Tuple) else [small.target]
    kept = [t for t in targets if not (isinstance(t, cst.Name) and t.value == 'params')]
    if len(kept) == len(targets):
      return
    if not kept:
      self.edits.remove(statement)
      return
    code = 'del %s' % ', '.join(edits_lib.code_of(t) for t in kept)
    self.edits.replace(small, lambda updated: cst.parse_statement(code + '\n').body[0])

  # --- the spec -------------------------------------------------------------------------------------------------

  def _spec(self, call):
    # Ports rule 5 (TPUEstimatorSpec).
    f = self.f
    new_func = '%s.estimator.tpu.TPUEstimatorSpec' % self.tf
    self.edits.replace(call, lambda updated: edits_lib.renamed(updated, call, new_func, f))
    self.port.change(f, call, 5, '%s -> %s' % (source_lib.dotted(call.func), new_func))
    for finding in self.port.findings_at(f, f.line(call), 5):
      if finding.message.startswith('`'):  # the EstimatorSpec finding; eval_metric_ops and scaffold have their own
        self.port.handled.add(finding)
    statement = f.statement_of(call)
    self.edits.comment(statement, edits_lib.rule_comment(
        5, 'TPUEstimator takes a TPUEstimatorSpec.'))
    metrics = source_lib.argument(call, None, 'eval_metric_ops')
    if metrics is not None:
      self._guarded(5, call, self._eval_metrics, call, metrics)
    if self.exact and source_lib.argument(call, None, 'eval_metric_ops') is not None:
      loss = source_lib.argument(call, 1, 'loss')
      self._guarded(9, call, self._weigh_loss, loss, statement)

  def _eval_metrics(self, call, value):
    f = self.f
    statement = f.statement_of(call)
    roots = []
    if isinstance(value, cst.Name):
      definitions = self._definitions(value.value, statement)
      if len(definitions) != 1:
        raise _Failed(5, 'eval_metric_ops -> eval_metrics=(metric_fn, tensors): write the metric dict `%s` in a '
                      'metric_fn of the tensors it reads' % value.value)
      roots = definitions
    slice_statements, inputs = self._slice([value], roots, statement)
    self.moved_reads.update(id(n) for n in source_lib.walk(value) if isinstance(n, cst.Name))
    tensors = self._tensors(inputs)
    direct = self._direct_metric_fn(slice_statements, roots, inputs)
    if direct is not None:
      code = '(%s, %s)' % direct
      inserted = []
    else:
      name = self.port.new_name(f, 'metric_fn')
      body = [self._weighted_copy(s) for s in slice_statements]
      returned = value.value if isinstance(value, cst.Name) else edits_lib.code_of(value)
      function = edits_lib.statements('def %s(%s):\n    return %s\n' % (name, ', '.join(tensors), returned))[0]
      function = function.with_changes(body=function.body.with_changes(body=body + list(function.body.body)))
      inserted = [function]
      code = '(%s, [%s])' % (name, ', '.join(tensors))
      self.moved += slice_statements

    def rebuild(updated):
      args = []
      for arg in updated.args:
        if arg.keyword is not None and arg.keyword.value == 'eval_metric_ops':
          arg = arg.with_changes(keyword=cst.Name('eval_metrics'), value=edits_lib.expression(code))
        args.append(arg)
      return updated.with_changes(args=args)

    self.edits.replace(call, rebuild)
    if inserted:
      inserted[0] = edits_lib.commented(inserted[0], edits_lib.rule_comment(
          5, 'metric ops cannot run on the TPU: TPUEstimator runs metric_fn on the host.'), f.indent_of(statement))
      self.edits.insert_before(statement, inserted)
    for finding in self.port.findings_at(f, f.line(call), 5):
      if 'eval_metric_ops' in finding.message:
        self.port.handled.add(finding)
    self.port.change(f, call, 5, 'eval_metric_ops -> eval_metrics=%s' % code)

  def _direct_metric_fn(self, slice_statements, roots, inputs):
    """(function, tensors) when the metrics are one call of a project function on tensors: it is the metric_fn."""
    if len(slice_statements) != 1 or slice_statements[0] not in roots:
      return None
    small = slice_statements[0].body[0]
    call = small.value
    if not isinstance(call, cst.Call) or analysis_lib.is_tf(self.f.canonical(call.func)):
      return None
    if any(arg.star or not isinstance(arg.value, cst.Name) for arg in call.args):
      return None
    found = self.port.program.resolve_def(self.f, self.fn, call.func)
    if found is None:
      if self.exact:
        return None
      return edits_lib.code_of(call.func), '[%s]' % ', '.join(a.value.value for a in call.args)
    names = source_lib.bind_arguments(call, found[1])
    if len(names) != len(call.args):
      return None
    names = dict((param, edits_lib.code_of(value)) for param, value in names.items())
    if self.exact:
      if 'weights' not in source_lib.positional_names(found[1]) or 'weights' in names:
        return None
      names['weights'] = self.weights
    self.moved.append(slice_statements[0])
    positional = source_lib.positional_names(found[1])
    if positional[:len(names)] == list(names):  # by position, in metric_fn's own order
      return edits_lib.code_of(call.func), '[%s]' % ', '.join(names.values())
    return edits_lib.code_of(call.func), '{%s}' % ', '.join("'%s': %s" % item for item in names.items())

  def _tensors(self, inputs):
    tensors = []
    for name in inputs:
      if name in NOT_TENSORS or name == self.features:
        raise _Failed(5, 'eval_metric_ops -> eval_metrics=(metric_fn, tensors): the metrics read `%s`, which is '
                      'not a tensor; pass metric_fn batch-major tensors only' % name)
      tensors.append(name)
    if self.exact and self.weights not in tensors:
      tensors.append(self.weights)
    return tensors

  def _weighted_copy(self, statement):
    """A statement of the metric slice, its tf.metrics calls weighted when evaluation is padded."""
    if not self.exact:
      return statement
    f, weights = self.f, self.weights
    metric_calls = set(n for n in source_lib.walk(statement) if isinstance(n, cst.Call) and
                       (f.canonical(n.func) or '').startswith('tensorflow.metrics.'))

    class Weigh(cst.CSTTransformer):

      def leave_Call(self, original_node, updated_node):
        if original_node not in metric_calls:
          return updated_node
        existing = source_lib.argument(updated_node, None, 'weights')
        value = edits_lib.expression(weights if existing is None else '%s * (%s)' % (
            weights, edits_lib.code_of(existing)))
        changed = edits_lib.set_keyword(updated_node, 'weights', value)
        return changed or edits_lib.add_keywords(updated_node, [('weights', value)], f.column(original_node))

    return statement.visit(Weigh())

  # --- slices: the statements that compute metrics from tensors -------------------------------------------------

  def _definitions(self, name, before):
    """The statements of the model_fn that assign `name` before `before`."""
    found = []
    for statement in self.statements:
      if self.f.line(statement) >= self.f.line(before):
        continue
      if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
          if isinstance(small, cst.Assign) and any(name in source_lib.assigned_names(t.target)
                                                   for t in small.targets):
            found.append(statement)
      elif isinstance(statement, (cst.For, cst.With)) and name in _bound_by(statement):
        found.append(statement)
    return found

  def _computes_metrics(self, statement, depth=0):
    if statement in self._metric_memo:
      return self._metric_memo[statement]
    self._metric_memo[statement] = False
    result = False
    for node in source_lib.walk(statement):
      if isinstance(node, cst.Call) and (self.f.canonical(node.func) or '').startswith('tensorflow.metrics.'):
        result = True
        break
    if not result and depth < 5 and isinstance(statement, cst.SimpleStatementLine):
      for name in self.f.free_names(statement):
        for definition in self._definitions(name, statement):
          if self._computes_metrics(definition, depth + 1):
            result = True
    self._metric_memo[statement] = result
    return result

  def _slice(self, expressions, roots, before):
    """(statements to copy, in order; input tensor names) for values computed on the host."""
    chosen = list(roots)
    inputs = []
    pending = []
    for expression in expressions:
      pending += self.f.free_names(expression)
    for root in roots:
      pending += self.f.free_names(root)
    seen = set()
    while pending:
      name = pending.pop(0)
      if name in seen:
        continue
      seen.add(name)
      if name in self.param_names:
        inputs.append(name)
        continue
      definitions = self._definitions(name, before)
      if not definitions:
        kind = self.f.lookup(self.fn, name)[0]
        if kind in ('value', 'other', 'param') and self.f.lookup(self.fn, name)[2] is self.fn:
          raise _Failed(5, 'move what computes `%s` into metric_fn (it could not be told here)' % name)
        continue  # a global or an import: metric_fn sees it too
      metric = [d for d in definitions if d in roots or self._computes_metrics(d)]
      if metric and (len(definitions) > 1 or not isinstance(definitions[0], cst.SimpleStatementLine)):
        raise _Failed(5, 'move what computes `%s` (assigned more than once) into metric_fn' % name)
      if metric:
        if definitions[0] not in chosen:
          chosen.append(definitions[0])
        pending += self.f.free_names(definitions[0])
      else:
        inputs.append(name)
    chosen.sort(key=self.f.line)
    return chosen, inputs

  # --- rule 9: weights --------------------------------------------------------------------------------------------

  def _weigh_examples(self):
    # Ports rule 9 (steps).
    f = self.f
    uses = [n for n in source_lib.walk_local(self.fn.body) if isinstance(n, cst.Name) and n.value == self.features
            and f._is_read(n, self.fn.body)]
    for use in uses:
      parent = f.parent(use)
      if isinstance(parent, cst.Subscript) and parent.value is use:
        continue
      if isinstance(parent, cst.Arg):
        call = f.parent(parent)
        if isinstance(call, cst.Call) and (f.canonical(call.func) or '').endswith('feature_column.input_layer'):
          continue
      self.port.todo(f, self.fn, 9, "evaluation is padded with copies of weight 0: read features['%s'] (0 for "
                     'padding rows), keep it out of the model, and weight the loss and the metrics with it'
                     % templates.WEIGHT_KEY)
      self.exact = False
      return
    self.weights = self.port.new_name(f, 'tpu_weights')
    code = '%s = dict(%s)\n%s = %s.pop(%r, 1.0)\n' % (self.features, self.features, self.weights, self.features,
                                                      templates.WEIGHT_KEY)
    inserted = edits_lib.statements(code)
    first = self._first_statement()
    inserted[0] = edits_lib.commented(inserted[0], edits_lib.rule_comment(
        9, 'rows that pad evaluation have weight 0: it leaves the features, weights loss and metrics.'),
        f.indent_of(first))
    self.edits.insert_before(first, inserted)
    self.port.change(f, self.fn, 9, "model_fn takes the example weights out of the features ('%s')"
                     % templates.WEIGHT_KEY)

  def _first_statement(self):
    body = list(self.fn.body.body)
    if len(body) > 1 and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
        and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
      return body[1]
    return body[0]

  def _weigh_loss(self, loss, statement):
    if self.weights is None:
      return
    if not isinstance(loss, cst.Name):
      raise _Failed(9, 'weight the evaluation loss with %s (0 for padding rows)' % self.weights)
    definitions = self._definitions(loss.value, statement)
    calls = [d.body[0].value for d in definitions if isinstance(d, cst.SimpleStatementLine)
             and isinstance(d.body[0], cst.Assign) and isinstance(d.body[0].value, cst.Call)]
    if len(definitions) != 1 or len(calls) != 1 or not (
        self.f.canonical(calls[0].func) or '').startswith('tensorflow.losses.'):
      raise _Failed(9, 'weight the loss `%s` with %s (0 for the rows that pad the last evaluation batch), as '
                    'tf.losses functions do with weights=' % (loss.value, self.weights))
    call = calls[0]
    if call in self.weighted_losses:
      return  # one loss for EVAL and TRAIN specs alike
    self.weighted_losses.add(call)
    existing = source_lib.argument(call, None, 'weights')
    value = self.weights if existing is None else '%s * (%s)' % (self.weights, edits_lib.code_of(existing))
    column = self.f.column(call)
    self.edits.replace(call, lambda updated: edits_lib.set_keyword(updated, 'weights', edits_lib.expression(
        value)) or edits_lib.add_keywords(updated, [('weights', edits_lib.expression(value))], column))
    self.edits.comment(definitions[0], edits_lib.rule_comment(
        9, 'rows that pad the last evaluation batch count in no loss.'))
    self.port.change(self.f, call, 9, 'loss weighted with %s' % self.weights)

  # --- rule 6 -------------------------------------------------------------------------------------------------

  def _cross_shard(self, call):
    # Ports rule 6 (gradient all-reduce).
    f = self.f
    receiver = call.func.value
    statement = f.statement_of(call)
    tf = self.tf
    comment = edits_lib.rule_comment(6, 'CrossShardOptimizer averages the cores\' gradients; it has no kernel '
                                     'off the TPU.')
    if isinstance(receiver, cst.Name):
      definitions = self._definitions(receiver.value, statement)
      if len(definitions) != 1 or not isinstance(definitions[0], cst.SimpleStatementLine):
        raise _Failed(6, 'wrap the optimizer in %s.tpu.CrossShardOptimizer when params[\'use_tpu\']' % tf)
      definition = definitions[0]
      value = definition.body[0].value
      kind = self._optimizer_kind(value)
      if kind == 'wrapped':  # always wrapped: unwrap, then wrap only on the TPU
        self.edits.replace(value, lambda updated: updated.args[0].value)
      elif kind != 'plain':
        raise _Failed(6, 'wrap the optimizer in %s.tpu.CrossShardOptimizer when params[\'use_tpu\'] (a '
                      'tf.compat.v1.train optimizer: CrossShardOptimizer takes no other)' % tf)
      code = templates.CROSS_SHARD.format(params='params', optimizer=receiver.value, tf=tf)
      wrap = edits_lib.statements(code)
      wrap[0] = edits_lib.commented(wrap[0], comment, f.indent_of(definition))
      self.edits.insert_after(definition, wrap)
    elif isinstance(receiver, cst.Call) and self._optimizer_kind(receiver) == 'plain':
      name = self.port.new_name(f, 'optimizer')
      code = '%s = %s\n' % (name, edits_lib.code_of(receiver)) + templates.CROSS_SHARD.format(
          params='params', optimizer=name, tf=tf)
      inserted = edits_lib.statements(code)
      inserted[1] = edits_lib.commented(inserted[1], comment, f.indent_of(statement))
      self.edits.insert_before(statement, inserted)
      self.edits.replace(receiver, lambda updated: cst.Name(name))
    else:
      raise _Failed(6, 'wrap the optimizer in %s.tpu.CrossShardOptimizer when params[\'use_tpu\']' % tf)
    self.needs.add('params')
    self.port.take(f, call, 6)
    self.port.change(f, call, 6, 'optimizer wrapped in CrossShardOptimizer when params[\'use_tpu\']')

  def _optimizer_kind(self, value):
    if not isinstance(value, cst.Call):
      return None
    name = self.f.canonical(value.func) or ''
    if name.endswith('CrossShardOptimizer'):
      return 'wrapped' if value.args and self._optimizer_kind(value.args[0].value) == 'plain' else None
    if name.startswith('tensorflow.train.') and name.endswith('Optimizer'):
      return 'plain'
    found = self.port.program.find_def(name)
    if found is not None and isinstance(found[1], cst.ClassDef):
      return 'plain'  # the project's own optimizer class
    return None

  # --- rule 7: summaries to host_call -------------------------------------------------------------------------

  def _summaries(self):
    # Ports rule 7 (summaries on the host).
    f = self.f
    summaries = []
    for statement in self.statements:
      if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        continue
      small = statement.body[0]
      if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
        continue
      canonical = f.canonical(small.value.func) or ''
      if canonical.startswith('tensorflow.summary.') and self.port.findings_at(f, f.line(statement), 7):
        summaries.append((statement, small.value, canonical.rsplit('.', 1)[1]))
    if not summaries:
      return
    train_specs = [c for c in self._calls() if analysis_lib.last(f.canonical(c.func) or '').endswith(
        'EstimatorSpec') and source_lib.argument(c, None, 'train_op') is not None]
    if len(train_specs) != 1:
      for statement, call, _ in summaries:
        self.port.todo(f, call, 7, 'write this summary from a host_call function of TPUEstimatorSpec (the TRAIN '
                       'spec could not be told here)')
      return
    spec = train_specs[0]
    target = f.statement_of(spec)
    host_params, tensors, lines, copies = ['global_step'], [], [], []
    for statement, call, kind in summaries:
      try:
        line, inputs = self._summary_line(statement, call, kind, target, host_params, tensors)
      except _Failed as e:
        self.port.todo(f, call, e.rule, e.what)
        continue
      lines.append(line)
      for copy in inputs:
        if copy not in copies:
          copies.append(copy)
      self.moved.append(statement)
      self.port.take(f, call, 7)
    if not lines:
      return
    copies.sort(key=f.line)
    self.moved += copies
    self.needs.update(['params', 'config'])
    tf2 = self.port.tf_v2(f)
    name = self.port.new_name(f, 'tpu_host_call')
    function = edits_lib.statements(templates.HOST_CALL.format(
        name=name, params=', '.join(host_params), tf=self.tf, tf2=tf2, logdir='config.model_dir'))[0]
    writer, with_statement = function.body.body
    with_statement = with_statement.with_changes(body=with_statement.body.with_changes(
        body=lines + list(with_statement.body.body)))
    function = function.with_changes(body=function.body.with_changes(body=copies + [writer, with_statement]))
    step = '%s.reshape(%s.train.get_global_step(), [1])' % (self.tf, self.tf)
    host_call = self.port.new_name(f, 'host_call')
    code = '%s = (%s, [%s])' % (host_call, name, ', '.join([step] + tensors))
    if f.indent_of(target) + len(code) > edits_lib.MAX_COLUMNS:
      code = '%s = (%s,\n%s[%s])' % (host_call, name, ' ' * (len(host_call) + 4), ', '.join([step] + tensors))
    assignment = cst.parse_statement(code + '\n')
    function = edits_lib.commented(function, edits_lib.rule_comment(
        7, 'summary ops cannot run on the TPU: host_call writes them on the host, every step.'),
        f.indent_of(target))
    self.edits.insert_before(target, [function, assignment])
    column = f.column(spec)
    self.edits.replace(spec, lambda updated: edits_lib.add_keywords(updated, [('host_call', cst.Name(host_call))],
                                                                    column))
    self.port.change(f, spec, 7, '%d summar%s written by host_call' % (len(lines), 'y' if len(lines) == 1 else
                                                                       'ies'))

  def _summary_line(self, statement, call, kind, target, host_params, tensors):
    """The tf.compat.v2.summary statement for one v1 summary, the inputs it adds to host_params and tensors,
    and the statements of its slice."""
    f = self.f
    if kind not in SUMMARY_KINDS or source_lib.has_star_args(call):
      raise _Failed(7, 'write this summary from a host_call function of TPUEstimatorSpec (on the host)')
    if any(a.keyword is not None and a.keyword.value in ('family', 'collections') for a in call.args) or \
        len([a for a in call.args if a.keyword is None]) > (3 if kind == 'image' else 2):
      raise _Failed(7, 'write this summary (with its family/collections) from a host_call function')
    if f.line(statement) > f.line(target) or not _encloses(f, f.parent(statement), target):
      raise _Failed(7, 'write this summary from a host_call function (it is not on the way to the TRAIN spec)')
    tag = source_lib.argument(call, 0, 'name')
    value = source_lib.argument(call, 1, {'scalar': 'tensor', 'histogram': 'values'}.get(kind, 'tensor'))
    if tag is None or value is None:
      raise _Failed(7, 'write this summary from a host_call function')
    slice_statements, inputs = self._slice([value], [], statement)
    tf = self.tf
    extra = ''
    outputs = source_lib.argument(call, 2, 'max_outputs') if kind == 'image' else None
    if outputs is not None:
      extra = ', max_outputs=%s' % edits_lib.code_of(outputs)
    if not slice_statements:
      # Computed on the TPU: the value itself goes to the host, a scalar with a leading dimension of 1.
      param = value.value if isinstance(value, cst.Name) else _identifier(tag, host_params)
      param = param if param not in host_params else _identifier(tag, host_params)
      host_params.append(param)
      tensors.append('%s.reshape(%s, [1])' % (tf, edits_lib.code_of(value)) if kind == 'scalar' else
                     edits_lib.code_of(value))
      data = '%s.reduce_mean(%s)' % (tf, param) if kind == 'scalar' else param
    else:
      for name in inputs:
        if name in NOT_TENSORS or name == self.features:
          raise _Failed(7, 'write this summary from a host_call function (it reads `%s`, not a tensor)' % name)
        if name not in host_params:
          host_params.append(name)
          tensors.append(name)
      data = edits_lib.code_of(value)
    code = '%s.summary.%s(%s, %s, step=global_step[0]%s)\n' % (self.port.tf_v2(f), kind, edits_lib.code_of(tag),
                                                               data, extra)
    line = cst.parse_statement(code).with_changes(leading_lines=list(statement.leading_lines))
    return line, slice_statements

  def _remove_moved(self):
    moved = set(self.moved)
    reads = set()
    for statement in self.statements:
      if statement in moved or _inside_any(self.f, statement, moved):
        continue
      for node in source_lib.walk(statement):
        if isinstance(node, cst.Name) and id(node) not in self.moved_reads:
          reads.add(node.value)
    for statement in moved:
      assigned = set()
      for small in getattr(statement, 'body', ()):
        if isinstance(small, cst.Assign):
          for target in small.targets:
            assigned.update(source_lib.assigned_names(target.target))
      if not (assigned & reads):
        self.edits.remove(statement, keep_comments=False)


def insert_params(parameters, position, names):
  """Parameters with plain parameters `names` inserted at `position`, commas as the others have them."""
  params = list(parameters.params)
  trailing = params[-1].comma if params else cst.MaybeSentinel.DEFAULT
  new = [cst.Param(cst.Name(name)) for name in names]
  params[position:position] = new
  separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(' '))
  for index, param in enumerate(params):
    if index < len(params) - 1:
      if param.comma is cst.MaybeSentinel.DEFAULT or param in new:
        params[index] = param.with_changes(comma=separator)
    else:
      params[index] = param.with_changes(comma=trailing)
  return parameters.with_changes(params=params)


def _bound_by(statement):
  if isinstance(statement, cst.For):
    return source_lib.assigned_names(statement.target)
  names = []
  for item in getattr(statement, 'items', ()):
    if item.asname is not None:
      names += source_lib.assigned_names(item.asname.name)
  return names


def _encloses(f, block, node):
  """Whether `block` (an IndentedBlock or the function body) contains `node`."""
  return _inside_any(f, node, (block,))


def _inside_any(f, node, containers):
  """Whether one of `containers` contains `node`."""
  current = f.parent(node)
  while current is not None:
    if any(current is c for c in containers):
      return True
    current = f.parent(current)
  return False


def _identifier(tag, taken):
  text = source_lib.literal(tag)
  base = ''.join(c if c.isalnum() else '_' for c in text) if isinstance(text, str) else 'value'
  base = base.strip('_') or 'value'
  if base[0].isdigit():
    base = 'summary_' + base
  name, count = base, 1
  while name in taken:
    count += 1
    name = '%s_%d' % (base, count)
  return name
