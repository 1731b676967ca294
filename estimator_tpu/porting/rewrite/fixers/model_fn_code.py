"""One model_fn being ported, shared by the fixers of its rules (estimator_spec, cross_shard, summaries,
example_weights, model_fns): its statements as the program reading has them, which of them compute metrics, and
the slice of statements a metric_fn or a host_call function must copy.

Metrics and summaries move out of the TPU computation into functions of the tensors they read: the statements
that compute them from tf.metrics (a slice of the model_fn) are copied there, and removed from the model_fn
(remove_moved) when nothing left in it reads them.
"""
import ast

from estimator_tpu.porting.program import syntax

NOT_TENSORS = ('mode', 'params', 'config')


class Failed(Exception):
  """A change that cannot be made here; its message is the TODO's."""

  def __init__(self, rule, what):
    super(Failed, self).__init__(what)
    self.rule = rule
    self.what = what


class ModelFnCode(object):
  """The model_fn `fn` (an ast def) of `module`, ported by `port`; `exact`: its evaluation is padded."""

  def __init__(self, port, module, fn, exact):
    self.port = port
    self.module = module
    self.fn = fn
    self.f = port.file_of(module)
    self.node = self.f.node(fn)
    self.exact = exact
    self.edits = port.edits[self.f]
    self.tf = port.tf_v1(self.f)
    args = fn.args
    self.param_names = [a.arg for a in getattr(args, 'posonlyargs', [])] + [a.arg for a in args.args] + \
        [a.arg for a in args.kwonlyargs]
    self.features = self.param_names[0] if self.param_names else 'features'
    self.statements = [n for n, _ in syntax.walk_local(fn) if isinstance(n, ast.stmt)]
    self.moved = []  # ast statements copied into metric_fn / host_call
    self.moved_reads = set()  # id() of the nodes whose names no longer count as read (the values being replaced)
    self.weights = None
    self.needs = set()  # 'params', 'config'
    self._metric_memo = {}
    self.weighted_losses = set()  # id() of the loss calls weighted already

  def calls(self):
    """The calls of the model_fn's own code, in order."""
    return [n for n, _ in syntax.walk_local(self.fn) if isinstance(n, ast.Call)]

  def canonical(self, node):
    return self.module.canonical(node)

  def guarded(self, node, method, *args):
    """Runs a change; one that cannot be made leaves a TODO at `node` instead."""
    try:
      return method(*args)
    except Failed as e:
      self.port.todo(self.module, node, self.port.codes_of_rule(e.rule), e.rule, e.what)
      return None

  def statement(self, node):
    """The LibCST statement of an ast node of the model_fn."""
    return self.f.statement_of(self.f.node(node))

  # --- slices: the statements that compute metrics from tensors -------------------------------------------------

  def definitions(self, name, before):
    """The statements of the model_fn that assign `name` before the ast statement (or line) `before`."""
    line = before if isinstance(before, int) else before.lineno
    found = []
    for statement in self.statements:
      if statement.lineno >= line:
        continue
      if isinstance(statement, ast.Assign):
        if any(name in syntax.assigned_names(t) for t in statement.targets):
          found.append(statement)
      elif isinstance(statement, (ast.For, ast.With)) and name in _bound_by(statement):
        found.append(statement)
    return found

  def not_a_tensor(self, name, before):
    """Whether what a metric_fn or host_call would be handed as `name` is no tensor: mode, params, config, the
    features, or a dict, list or tuple the model_fn builds (`predictions = {'classes': ...}`). TensorFlow sends
    each of those tensors through the TPU outfeed, which takes tensors only (tpu_estimator.py,
    _OutfeedHostCall.record: AttributeError on a dict), though the CPU hands them over as they are."""
    if name in NOT_TENSORS or name == self.features:
      return True
    return any(isinstance(d, ast.Assign) and (isinstance(d.value, (ast.Dict, ast.List, ast.Tuple)) or (
        isinstance(d.value, ast.Call) and isinstance(d.value.func, ast.Name) and d.value.func.id in ('dict', 'list')))
               for d in self.definitions(name, before)[-1:])

  def mutations(self, name, definition, before):
    """The statements between `definition` and `before` that change the value `name` holds in place
    (`name[key] = ...`, `name.update(...)`): a metric dict built in steps. One inside a branch or a loop cannot be
    copied on its own: Failed."""
    line = before if isinstance(before, int) else before.lineno
    found = []
    for statement in self.statements:
      if not definition.lineno < statement.lineno < line or not _mutates(statement, name):
        continue
      if self.module.parents.get(id(statement)) is not self.fn:
        raise Failed(5, 'move what computes `%s` into metric_fn (it is changed inside a branch or loop)' % name)
      found.append(statement)
    return found

  def computes_metrics(self, statement, depth=0):
    if id(statement) in self._metric_memo:
      return self._metric_memo[id(statement)]
    self._metric_memo[id(statement)] = False
    result = False
    for node in ast.walk(statement):
      if isinstance(node, ast.Call) and (self.canonical(node.func) or '').startswith('tensorflow.metrics.'):
        result = True
        break
    if not result and depth < 5 and not isinstance(statement, (ast.For, ast.With, ast.If, ast.While, ast.Try)):
      for name in names_in_order(statement):
        for definition in self.definitions(name, statement):
          if self.computes_metrics(definition, depth + 1):
            result = True
    self._metric_memo[id(statement)] = result
    return result

  def slice(self, expressions, roots, before):
    """(statements to copy, in order; input tensor names) for values computed on the host."""
    chosen = list(roots)
    inputs = []
    pending = []
    for expression in expressions:
      pending += names_in_order(expression)
    for root in roots:
      pending += names_in_order(root)
    seen = set()
    while pending:
      name = pending.pop(0)
      if name in seen:
        continue
      seen.add(name)
      if name in self.param_names:
        inputs.append(name)
        continue
      definitions = self.definitions(name, before)
      if not definitions:
        kind, _, _, owner = self.port.program.lookup(self.module, self.fn, name)
        if kind in ('value', 'other', 'param') and owner is self.fn:
          raise Failed(5, 'move what computes `%s` into metric_fn (it could not be told here)' % name)
        continue  # a global or an import: metric_fn sees it too
      metric = [d for d in definitions if any(d is r for r in roots) or self.computes_metrics(d)]
      if metric and (len(definitions) > 1 or not isinstance(definitions[0], ast.Assign)):
        raise Failed(5, 'move what computes `%s` (assigned more than once) into metric_fn' % name)
      if metric:
        for statement in [definitions[0]] + self.mutations(name, definitions[0], before):
          if not any(statement is c for c in chosen):
            chosen.append(statement)
          pending += names_in_order(statement)
      else:
        inputs.append(name)
    chosen.sort(key=lambda s: s.lineno)
    return chosen, inputs

  def tensors(self, inputs, before):
    tensors = []
    for name in inputs:
      if self.not_a_tensor(name, before):
        raise Failed(5, 'eval_metric_ops -> eval_metrics=(metric_fn, tensors): the metrics read `%s`, which is '
                     'not a tensor; pass metric_fn batch-major tensors only' % name)
      tensors.append(name)
    if self.exact and self.weights not in tensors:
      tensors.append(self.weights)
    return tensors

  def remove_moved(self):
    """Removes the statements copied into metric_fn / host_call that nothing left in the model_fn reads."""
    moved = [s for s in self.moved]
    reads = set()
    for statement in self.statements:
      if any(statement is m for m in moved) or _inside_any(self.module, statement, moved):
        continue
      reads |= identifiers(statement, self.moved_reads)
    done = set()
    for statement in moved:
      cst_statement = self.statement(statement)
      if id(cst_statement) in done:
        continue
      done.add(id(cst_statement))
      assigned = set()
      if isinstance(statement, ast.Assign):
        for target in statement.targets:
          assigned.update(syntax.assigned_names(target))
          if isinstance(target, (ast.Subscript, ast.Attribute)) and isinstance(target.value, ast.Name):
            assigned.add(target.value.id)  # metrics['name'] = ...: stays if metrics stays
      elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and \
          isinstance(statement.value.func, ast.Attribute) and isinstance(statement.value.func.value, ast.Name):
        assigned.add(statement.value.func.value.id)  # metrics.update(...): the same
      if not (assigned & reads):
        self.edits.remove(cst_statement, keep_comments=False)


def _mutates(statement, name):
  """Whether a statement changes the object `name` holds: an item or attribute assigned, or a method called on it
  as a statement (`name.update(...)`)."""
  targets = []
  if isinstance(statement, ast.Assign):
    targets = statement.targets
  elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
    targets = [statement.target]
  elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
    targets = [statement.value.func]
  return any(isinstance(t, (ast.Subscript, ast.Attribute)) and isinstance(t.value, ast.Name) and
             t.value.id == name for t in targets)


def _bound_by(statement):
  if isinstance(statement, ast.For):
    return syntax.assigned_names(statement.target)
  names = []
  for item in statement.items:
    if item.optional_vars is not None:
      names += syntax.assigned_names(item.optional_vars)
  return names


def _inside_any(module, node, containers):
  parent = module.parents.get(id(node))
  while parent is not None:
    if any(parent is c for c in containers):
      return True
    parent = module.parents.get(id(parent))
  return False


def names_in_order(node):
  """The names a statement or expression uses (reads or assigns), each once, in source order; not attribute
  names, keyword names or the parameters of the lambdas in it."""
  names = []
  lambdas = [n for n in ast.walk(node) if isinstance(n, ast.Lambda)]
  for child in syntax.in_source_order(node):
    found = []
    if isinstance(child, ast.Name):
      if not any(child.id in syntax.param_names(l) and any(c is child for c in ast.walk(l.body)) for l in lambdas):
        found.append(child.id)
    elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
      found.append(child.name)
    elif isinstance(child, ast.alias):
      found += [child.name.split('.')[0]] + ([child.asname] if child.asname else [])
    elif isinstance(child, (ast.Global, ast.Nonlocal)):
      found += child.names
    elif isinstance(child, ast.ExceptHandler) and child.name:
      found.append(child.name)
    for name in found:
      if name not in names:
        names.append(name)
  return names


def identifiers(node, skip=()):
  """Every identifier written in a statement: names, attribute names, keyword names, parameters, definitions
  (those of the nodes whose id() is in `skip` left out)."""
  found = set()
  for child in ast.walk(node):
    if id(child) in skip:
      continue
    if isinstance(child, ast.Name):
      found.add(child.id)
    elif isinstance(child, ast.Attribute):
      found.add(child.attr)
    elif isinstance(child, ast.keyword) and child.arg:
      found.add(child.arg)
    elif isinstance(child, ast.arg):
      found.add(child.arg)
    elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
      found.add(child.name)
    elif isinstance(child, ast.alias):
      found.update(child.name.split('.') + ([child.asname] if child.asname else []))
  return found
