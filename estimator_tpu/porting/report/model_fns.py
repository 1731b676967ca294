"""Checks of a model_fn: what TPUEstimator compiles for the TPU cores (rules 3, 4, 5, 6, 7, 8, 15, 18).

The model_fn is read together with the project functions it calls (two levels down), but not the functions it
only hands over (metric_fn, host_call's fn, scaffold_fn): TPUEstimator runs those on the host. Code under
`if not use_tpu:` (or the else of `if use_tpu:`) runs only off the TPU and is skipped.
"""
import ast

from estimator_tpu.porting.report import apis
from estimator_tpu.porting.report import checks
from estimator_tpu.porting.report import pyast

FOLLOW_DEPTH = 2
HOOK_ARGUMENTS = ('training_hooks', 'evaluation_hooks', 'prediction_hooks')
OPTIMIZER_METHODS = ('minimize', 'apply_gradients')

# Classes of what an optimizer expression holds.
WRAPPED_IF = 'wrapped under a condition'
WRAPPED_ALWAYS = 'wrapped unconditionally'
PLAIN = 'plain'
KERAS = 'keras'
UNKNOWN = 'unknown'


def check_model_fn(collector, target):
  """All model_fn checks for one resolved model_fn (a program.Fn)."""
  # Checks rule 3 (params).
  module, node = target.module, target.node
  if not checks.accepts_params(target):
    collector.required(module, node, 3, '%s takes no `params` -> add a `params` argument: TPUEstimator refuses a '
                       'model_fn without it, and passes params[\'batch_size\'] (per core on a TPU) and '
                       'params[\'use_tpu\'] there.' % checks.describe_fn(node))
  walk = _DeviceWalk(collector)
  walk.visit(module, node, 0)
  if not walk.saw_optimizer:
    walk.report_unseen_optimizer()


class _DeviceWalk(object):
  """Reads the code that runs inside the TPU computation."""

  def __init__(self, collector):
    self.collector = collector
    self.program = collector.program
    self.visited = set()
    self.saw_optimizer = False
    self.train_ops = []  # (module, fn, train_op expression) of every spec, for report_unseen_optimizer

  def visit(self, module, fn, depth):
    if id(fn) in self.visited:
      return
    self.visited.add(id(fn))
    for node, conditions in pyast.walk_local(fn):
      if checks.tpu_branch(conditions) == 'cpu':
        continue
      if isinstance(node, ast.Call):
        self._check_call(module, fn, node, conditions)
        if depth < FOLLOW_DEPTH and not apis.is_tf(self.program.canonical(module, fn, node.func)):
          for callee in self.program.called_defs(module, fn, node):
            self.visit(callee.module, callee.node, depth + 1)
      elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        self._check_attribute(module, fn, node)

  def _check_attribute(self, module, fn, node):
    # Checks rule 3 (params), rule 15 (TPU dtypes).
    canonical = self.program.canonical(module, fn, node)
    if canonical in apis.FLOAT64_NAMES:
      self.collector.required(module, node, 15, '`%s` inside model_fn: TPUs have no float64 -> use '
                              'tf.float32 (or bfloat16).' % pyast.render(node))
    elif apis.is_flags(self.program.canonical(module, fn, node.value)):
      self.collector.advice(module, node, 3, 'model_fn reads the flag `%s` -> pass the value through params or '
                            'the model_fn builder, so model_fn depends only on its arguments (params[\'batch_size\'] '
                            'and params[\'use_tpu\'] are set by TPUEstimator).' % pyast.render(node))

  def _check_call(self, module, fn, call, conditions):
    canonical = self.program.canonical(module, fn, call.func)
    if canonical:
      self._check_api(module, call, canonical)
    if isinstance(call.func, ast.Attribute) and call.func.attr in OPTIMIZER_METHODS and not apis.is_tf(canonical):
      self.saw_optimizer = True
      if checks.tpu_branch(conditions) != 'tpu':
        self._check_optimizer(module, fn, call)

  def _check_api(self, module, call, canonical):
    # Checks rule 4 (static shapes), rule 7 (summaries on the host), rule 15 (TPU dtypes), rule 18 (XLA ops).
    add = self.collector
    short = canonical.replace('tensorflow.', 'tf.', 1)
    if apis.is_estimator_spec(canonical) or apis.is_tpu_estimator_spec(canonical):
      self._check_spec(module, call, canonical)
    elif apis.is_summary(canonical):
      add.required(module, call, 7, '`%s` inside model_fn: summary ops cannot run inside the TPU computation (on a '
                   'TPU they are silently left out) -> return the tensors in TPUEstimatorSpec(host_call=(fn, '
                   'tensors)) and write the summaries in fn, which runs on the host.' % short)
    elif canonical in apis.PYTHON_CALLBACK_OPS:
      add.required(module, call, 18, '`%s` inside model_fn runs Python, which a TPU cannot -> compute it in '
                   'input_fn (on the host) or with TensorFlow ops XLA compiles.' % short)
    elif canonical in apis.DYNAMIC_SHAPE_OPS or (canonical in apis.WHERE_OPS and _one_argument_where(call)):
      add.required(module, call, 4, '`%s` inside model_fn returns a shape that depends on the data; XLA compiles '
                   'a TPU program for fixed shapes only -> keep shapes static (e.g. multiply by a 0/1 mask, or '
                   'tf.where(cond, x, y) with three arguments).' % short)
    elif apis.is_string_op(canonical):
      add.required(module, call, 15, '`%s` inside model_fn: TPUs have no string type -> do string work (parsing, '
                   'decoding, vocabulary lookups) in input_fn on the host and feed numbers.' % short)

  def _check_spec(self, module, call, canonical):
    # Checks rule 5 (TPUEstimatorSpec), rule 8 (iterations per loop).
    add = self.collector
    train_op = pyast.keyword(call, 'train_op')
    if train_op is not None:
      self.train_ops.append((module, call, train_op))
    if apis.is_estimator_spec(canonical):
      add.required(module, call, 5, '`%s(...)` -> tf.estimator.tpu.TPUEstimatorSpec: on a TPU, evaluation and '
                   'prediction refuse an EstimatorSpec (TPUEstimator rebuilds metrics, summaries and the scaffold '
                   'outside the TPU computation, so it takes them as functions).'
                   % canonical.replace('tensorflow.', 'tf.', 1))
      if pyast.keyword(call, 'eval_metric_ops') is not None:
        add.required(module, call, 5, 'eval_metric_ops= -> eval_metrics=(metric_fn, tensors): metric ops cannot '
                     'run on the TPU; TPUEstimator calls metric_fn on the host with the (batch-major) tensors.')
      if pyast.keyword(call, 'training_chief_hooks') is not None:
        add.required(module, call, 8, 'training_chief_hooks= -> training_hooks=: TPUEstimator refuses chief hooks '
                     'in an EstimatorSpec.')
      if pyast.keyword(call, 'scaffold') is not None:
        add.required(module, call, 5, 'scaffold= is ignored by TPU training and evaluation -> '
                     'TPUEstimatorSpec(scaffold_fn=fn), fn returning the Scaffold (for example to '
                     'init_from_checkpoint).')
    for name in HOOK_ARGUMENTS:
      value = pyast.keyword(call, name)
      if value is not None and not _is_none(value):
        add.advice(module, call, 8, '%s= run on the host only between loops of iterations_per_loop steps, and '
                   'must not fetch tensors made in model_fn (on a TPU those are inside the TPU computation: a '
                   'LoggingTensorHook on the loss fails) -> report values through host_call or the loss TPUEstimator '
                   'logs, and keep hooks for host-side work.' % name)

  def _check_optimizer(self, module, fn, call):
    # Checks rule 6 (gradient all-reduce).
    receiver = call.func.value
    kind, detail = self._optimizer_kind(module, fn, receiver, (), 0)
    text = '`%s.%s(...)`' % (pyast.render(receiver), call.func.attr)
    add = self.collector
    if kind == PLAIN:
      add.required(module, call, 6, '%s with an optimizer no CrossShardOptimizer wraps: each TPU core would apply '
                   'only its own shard\'s gradients and the cores\' weights drift apart -> optimizer = '
                   'tf.tpu.CrossShardOptimizer(optimizer) when params[\'use_tpu\'] is true (it averages the '
                   'gradients over the cores, reduction=MEAN).' % text)
    elif kind == KERAS:
      add.required(module, call, 6, '%s with a Keras optimizer (%s): CrossShardOptimizer takes only '
                   'tf.compat.v1.train optimizers (it raises TypeError for a Keras one) -> use the '
                   'tf.compat.v1.train optimizer, wrapped in tf.tpu.CrossShardOptimizer when params[\'use_tpu\'] '
                   'is true.' % (text, detail))
    elif kind == WRAPPED_ALWAYS:
      add.advice(module, call, 6, '%s: the optimizer is wrapped in CrossShardOptimizer unconditionally; off the TPU '
                 '(use_tpu=False, CPU tests) its cross-core sum has no kernel and training fails -> wrap only when '
                 'params[\'use_tpu\'] is true.' % text)
    elif kind == UNKNOWN:
      add.unknown(module, call, 6, 'whether the optimizer of %s is wrapped in CrossShardOptimizer: %s. On a TPU '
                  'it must be (only when params[\'use_tpu\'] is true).' % (text, detail))

  def _optimizer_kind(self, module, fn, node, conditions, depth):
    """(kind, detail) of an optimizer expression; kinds are the constants above."""
    if depth > 3:
      return UNKNOWN, '`%s` is built through too many steps to follow' % pyast.render(node)
    if isinstance(node, ast.IfExp):
      kinds = [self._optimizer_kind(module, fn, branch, conditions, depth + 1) for branch in (node.body, node.orelse)]
      if any(k in (WRAPPED_IF, WRAPPED_ALWAYS) for k, _ in kinds):
        return WRAPPED_IF, ''
      return kinds[0]
    if isinstance(node, ast.Call):
      return self._constructed_kind(module, fn, node, conditions, depth)
    if isinstance(node, ast.Name):
      return self._name_kind(module, fn, node, depth)
    return UNKNOWN, '`%s` is only known at run time' % pyast.render(node)

  def _constructed_kind(self, module, fn, call, conditions, depth):
    canonical = self.program.canonical(module, fn, call.func)
    if apis.is_cross_shard_optimizer(canonical):
      return (WRAPPED_IF if conditions else WRAPPED_ALWAYS), ''
    if apis.is_keras_optimizer(canonical):
      return KERAS, canonical.replace('tensorflow.', 'tf.', 1)
    if apis.is_tf1_optimizer(canonical):
      return PLAIN, ''
    found = self.program.find_def(canonical)
    if found and isinstance(found[1], ast.ClassDef):
      return PLAIN, ''  # an optimizer class of the project (e.g. BERT's AdamWeightDecayOptimizer)
    kinds = []
    for callee in self.program.called_defs(module, fn, call):
      for value in self.program.returned_values(callee.node):
        kinds.append(self._optimizer_kind(callee.module, callee.node, value, (), depth + 1))
    if kinds:
      return _combine(kinds)
    return UNKNOWN, '`%s` is not defined in the scanned files' % pyast.render(call.func)

  def _name_kind(self, module, fn, name, depth):
    assignments = [(node.value, conditions) for node, conditions in pyast.walk_local(fn)
                   if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name.id
                                                           for t in node.targets)]
    if not assignments:
      kind, bound, owner_module, owner = self.program.lookup(module, fn, name.id)
      if kind == 'value' and owner is not None:
        return self._name_kind(owner_module, owner, name, depth + 1)
      return UNKNOWN, '`%s` is %s' % (name.id, 'a parameter, only known at run time' if kind == 'param'
                                       else 'not assigned in the scanned code')
    kinds = [self._optimizer_kind(module, fn, value, conditions, depth + 1) for value, conditions in assignments]
    return _combine(kinds)

  def report_unseen_optimizer(self):
    """A TRAIN spec whose train_op is built outside the scanned files: say the optimizer could not be checked."""
    # Checks rule 6 (gradient all-reduce).
    for module, call, train_op in self.train_ops:
      if pyast.literal(train_op) is None:
        continue
      origin, owner = train_op, self._function_of(module, call)
      if isinstance(train_op, ast.Name):
        for node, _ in pyast.walk_local(owner or module.tree):
          if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == train_op.id
                                                  for t in node.targets):
            origin = node.value
      if not isinstance(origin, ast.Call) or apis.is_tf(self.program.canonical(module, owner, origin.func)):
        continue  # no optimizer call anywhere (e.g. tf.group of assignments): nothing to wrap
      self.collector.unknown(module, call, 6, 'whether train_op `%s` wraps its optimizer in CrossShardOptimizer: '
                             'it is built by `%s`, outside the scanned files (scan them too). On a TPU the optimizer '
                             'must be wrapped, only when params[\'use_tpu\'] is true.'
                             % (pyast.render(train_op), pyast.render(origin)))

  def _function_of(self, module, node):
    parent = module.parents.get(id(node))
    while parent is not None and not isinstance(parent, pyast.FUNCTION_NODES):
      parent = module.parents.get(id(parent))
    return parent if parent is not None else None


def _combine(kinds):
  """One kind for a name assigned several times (opt = Adam(); if use_tpu: opt = CrossShardOptimizer(opt))."""
  names = [k for k, _ in kinds]
  for kind in (WRAPPED_IF, WRAPPED_ALWAYS, KERAS, PLAIN):
    if kind in names:
      return kind, kinds[names.index(kind)][1]
  return kinds[0]


def _one_argument_where(call):
  return len(call.args) == 1 and pyast.keyword(call, 'x') is None and pyast.keyword(call, 'y') is None


def _is_none(node):
  return pyast.literal(node) is None
