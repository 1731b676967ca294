"""Checks of a model_fn: what TPUEstimator compiles for the TPU cores (rules 3, 4, 5, 6, 7, 8, 15, 18).

The model_fn is read together with the project functions it calls (two levels down), but not the functions it
only hands over (metric_fn, host_call's fn, scaffold_fn): TPUEstimator runs those on the host. Code under
`if not use_tpu:` (or the else of `if use_tpu:`) runs only off the TPU and is skipped, and so is code in a mode the
program does not run on a TPU (program/mode_branches.py reads the `mode` tests, program/estimators.py what the
program does with its estimators): a PREDICT branch of a program that only trains, evaluates and exports is not the
TPU's business.
"""
import ast
import re

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import columns
from estimator_tpu.porting.program import containers
from estimator_tpu.porting.program import dtypes
from estimator_tpu.porting.program import hooks
from estimator_tpu.porting.program import mode_branches
from estimator_tpu.porting.program import params as params_lib
from estimator_tpu.porting.program import reachable
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values
from estimator_tpu.porting.report import checks

FOLLOW_DEPTH = 6
HOOK_ARGUMENTS = (('training_hooks', mode_branches.TRAIN), ('evaluation_hooks', mode_branches.EVAL),
                  ('prediction_hooks', mode_branches.PREDICT))
OPTIMIZER_METHODS = ('minimize', 'apply_gradients')
# Functions TPUEstimator runs on the host, wherever they are handed over.
HOST_FUNCTION_ARGUMENTS = ('scaffold_fn', 'host_call', 'eval_metrics', 'metric_fn', 'serving_input_receiver_fn')
# A name that holds a batch size: batch_size, BATCH_SIZE, train_batch_size, infer_batchsize.
BATCH_SIZE_NAME = re.compile(r'^([A-Za-z]+_)?batch_?size$', re.IGNORECASE)
SCHEDULE_NAME = re.compile(r'learning_rate|(^|_)lr($|_)|schedule|steps|epoch', re.IGNORECASE)
DICT_METHODS = ('get', 'items', 'keys', 'values', 'update', 'pop', 'copy', 'setdefault')

# Classes of what an optimizer expression holds.
WRAPPED_IF = 'wrapped under a condition'
WRAPPED_ALWAYS = 'wrapped unconditionally'
PLAIN = 'plain'
KERAS = 'keras'
UNKNOWN = 'unknown'


def check_model_fn(collector, use):
  """All model_fn checks for one use of a model_fn (estimators.ModelFnUse: the function, the modes it runs on a
  TPU, its params)."""
  # Checks rule 3 (params).
  target = use.target
  module, node = target.module, target.node
  labels = _labels_under_another_name(target)
  renamed = ('; and name its second parameter labels, not `%s`: TPUEstimator passes the labels by that keyword '
             '("model_fn does not take labels")' % labels) if labels else ''
  if use.ported and not checks.accepts_params(target):
    collector.required(module, node, 'model-fn-without-params',
                       '%s takes no `params` -> add a `params` argument%s: TPUEstimator refuses a '
                       'model_fn without it, and passes params[\'batch_size\'] (per core on a TPU) and '
                       'params[\'use_tpu\'] there.' % (checks.describe_fn(node), renamed))
  elif use.ported and labels:
    collector.required(module, node, 'model-fn-labels-name',
                       '%s takes the labels as `%s`, as contrib.learn passed them by position -> name that parameter '
                       'labels: TPUEstimator (as tf.estimator.Estimator) passes them by that keyword and raises '
                       '"model_fn does not take labels, but input_fn returns labels" without it.'
                       % (checks.describe_fn(node), labels))
  if not use.modes:
    return  # the program runs it on the CPU only
  walk = _DeviceWalk(collector, use)
  walk.visit(module, node, 0, mode_branches.ALL)
  if not walk.saw_optimizer:
    walk.report_unseen_optimizer()


def _batch_size_name(node):
  """The name a read of a batch size goes by (`FLAGS.train_batch_size`, `hparams.batch_size`, `BATCH_SIZE`,
  `config['batch_size']`), else None."""
  if isinstance(node, ast.Attribute):
    name = node.attr
  elif isinstance(node, ast.Name):
    name = node.id
  elif isinstance(node, ast.Subscript):
    name = syntax.subscript_key(node)
  else:
    return None
  return name.lower() if isinstance(name, str) and BATCH_SIZE_NAME.match(name) else None


def _schedules(fn, statement):
  """Whether a statement computes a schedule (a learning rate, a count of steps or epochs), by its function's name
  or the names it assigns: counted in global steps and examples, which the global batch size is right for."""
  names = [getattr(fn, 'name', '')]
  if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
    for target in getattr(statement, 'targets', None) or [statement.target]:
      names += syntax.assigned_names(target)
  return any(SCHEDULE_NAME.search(name) for name in names)


def _given(call, name, where):
  """Whether a call passes the keyword `name` something other than None (`scaffold=None` asks nothing), also
  through `**specs` of a dict the function builds (`where`: the call's module and function)."""
  value = values.keyword_given(where[0], where[1], call, name)
  return not _left_out_or_none(value)


def _never_read(fn, statement):
  """Whether a statement assigns one local name that nothing in its function reads."""
  name = syntax.plain_target(statement)
  return name is not None and not any(
      isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) for node in ast.walk(fn))


def _labels_under_another_name(target):
  """The name of a model_fn's second parameter when it takes no `labels` but a second one that is none of the other
  names Estimator passes (`model_fn(features, targets, mode)`), else None."""
  node = target.node
  names = syntax.positional_names(node)[target.bound_positional:]
  if 'labels' in names + [a.arg for a in node.args.kwonlyargs] or len(names) < 2:
    return None
  return names[1] if names[1] not in ('mode', 'params', 'config') else None


class _DeviceWalk(object):
  """Reads the code that runs inside the TPU computation."""

  def __init__(self, collector, use):
    self.collector = collector
    self.program = collector.program
    self.use = use
    self.tpu_modes = frozenset(use.modes)
    self.params = params_lib.Params()
    for params in use.params:
      self.params.kinds |= params.kinds
      for key, pairs in params.entries.items():
        for pair in pairs:
          self.params.add(key, *pair)
    self.own_batch_size = [where for where, _ in self.params.entries.get('batch_size', [])]
    self.global_batch_statements = set()
    # ids of (module, fn, node) -> (node, the most depth left with which _batch_reduction found no reduction there)
    self._no_reduction = {}
    self.visited = set()
    self.saw_optimizer = False
    self.saw_device = False
    self.train_ops = []  # (module, fn, train_op expression) of every spec, for report_unseen_optimizer

  def visit(self, module, fn, depth, start_modes):
    """Checks model_fn (`fn`) and every function it runs, each once, in all the modes any of its calls reaches it
    with (a helper called in training and again in evaluation is read for both)."""
    self.modes_of = {}
    self._gather_modes(module, fn, depth, frozenset(start_modes))
    self._visit(module, fn, depth)

  def _gather_modes(self, module, fn, depth, modes):
    known = self.modes_of.get(id(fn), frozenset())
    if modes <= known:
      return
    self.modes_of[id(fn)] = known | modes
    for node, callee_module, callee, node_modes in self._runs_and_calls(module, fn, depth, modes):
      if callee is not None:
        self._gather_modes(callee_module, callee, depth + 1, node_modes)

  def _runs_and_calls(self, module, fn, depth, modes):
    """(node, None, None, modes) for every node of fn that runs on the TPU in `modes`, each call followed by
    (call, module, def, modes) for every def of the program it runs there."""
    for node, conditions, node_modes in mode_branches.walk(fn, modes):
      runs = node_modes & self.tpu_modes
      if not runs or syntax.tpu_branch(conditions) == 'cpu' or self._ruled_out_by_params(conditions):
        continue
      yield node, None, None, (conditions, runs)
      if isinstance(node, ast.Call) and depth < FOLLOW_DEPTH:
        if not apis.is_tf(self.program.canonical(module, fn, node.func)):
          for callee in self.program.callables.called_defs(module, fn, node):
            yield node, callee.module, callee.node, node_modes
          # A class of the program built inside model_fn: its __init__ runs there (a seq2seq Model's graph).
          for built in self.program.callables.classes_built(module, fn, node):
            init = self.program.callables.find_method(built[0], built[1], '__init__')
            if init is not None:
              yield node, init[0], init[1], node_modes
        # Functions handed to a call run inside model_fn too: tf.cond's branches, a head's train_op_fn,
        # tf.map_fn's fn, tf.while_loop's body.
        for callee in self._function_arguments(module, fn, node):
          yield node, callee.module, callee.node, node_modes

  def _visit(self, module, fn, depth):
    if id(fn) in self.visited:
      return
    self.visited.add(id(fn))
    for node, callee_module, callee, extra in self._runs_and_calls(module, fn, depth, self.modes_of[id(fn)]):
      if callee is not None:
        self._visit(callee_module, callee, depth + 1)
        continue
      conditions, runs = extra
      if isinstance(node, (ast.Call, ast.BinOp)):
        self._check_int_division(module, fn, node)
      if isinstance(node, ast.Call):
        self._check_call(module, fn, node, conditions, runs)
      elif isinstance(node, (ast.Attribute, ast.Name)) and isinstance(node.ctx, ast.Load):
        self._check_attribute(module, fn, node)
      elif isinstance(node, ast.With) and not self.saw_device:
        self._check_device(module, fn, node)
      elif isinstance(node, ast.Return) and depth == 0 and isinstance(node.value, ast.Tuple) and \
          len(node.value.elts) in (2, 3):
        self.collector.required(module, node, 'model-fn-returns-tuple',
                                'model_fn returns a tuple (%s), as contrib.learn\'s Estimator took it -> return '
                                'tf.estimator.tpu.TPUEstimatorSpec(mode, predictions=..., loss=..., train_op=...): '
                                'TPUEstimator takes nothing else.' % syntax.render(node.value))
      if self.own_batch_size and params_lib.reads_key(node, 'batch_size'):
        self._own_batch_size(module, node)
      if isinstance(node, (ast.Attribute, ast.Name, ast.Subscript)) and isinstance(node.ctx, ast.Load):
        self._global_batch_size(module, fn, node)

  def _ruled_out_by_params(self, conditions):
    """Whether code is under a test of a params key the estimator's params (a dict or HParams the program writes)
    give one literal truth the branch does not take (`x if params['projection'] else y`, `'projection': False`)."""
    if not self.params.kinds or not self.params.kinds <= {params_lib.DICT, params_lib.HPARAMS}:
      return False
    for test, in_body in conditions:
      negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
      key = params_lib.key_read(test.operand if negated else test)
      given = self.params.values_of(key) if key is not None else []
      truths = set(bool(syntax.literal(value.node)) if syntax.is_literal(value.node) else None for value in given)
      if len(truths) == 1 and None not in truths and truths.pop() != (in_body != negated):
        return True
    return False

  def _check_attribute(self, module, fn, node):
    # Checks rule 3 (params), rule 15 (TPU dtypes), rule 18 (XLA ops), on `tf.x.y` and on a name imported from
    # TensorFlow (`from tensorflow.contrib.rnn import GRUBlockCellV2`).
    canonical = self.program.canonical(module, fn, node)
    if canonical in apis.FLOAT64_NAMES and not self._in_python_callback(module, fn, node):
      self.collector.required(module, node, 'float64-in-model-fn', '`%s` inside model_fn: TPUs have no float64 -> use '
                              'tf.float32 (or bfloat16).' % syntax.render(node))
    elif apis.no_xla_kernel(canonical, _call_of(module, node)):
      fix = apis.NO_XLA_KERNEL_FIX.get(canonical, 'tf.compat.v1.nn.rnn_cell.LSTMCell / GRUCell (with '
                                       'tf.compat.v1.nn.dynamic_rnn) or tf.keras.layers.LSTM / GRU, which compile')
      self.collector.required(module, node, 'no-xla-kernel',
                              '`%s` inside model_fn: its op has no XLA kernel, so the TPU cannot '
                              'run it (XLA refuses it: "No registered ... OpKernel for XLA") -> %s.' % (
                                  canonical.replace('tensorflow.', 'tf.'), fix))
    elif isinstance(node, ast.Attribute) and apis.is_flags(self.program.canonical(module, fn, node.value)):
      self.collector.advice(module, node, 'flag-in-model-fn',
                            'model_fn reads the flag `%s` -> pass the value through params or '
                            'the model_fn builder, so model_fn depends only on its arguments (params[\'batch_size\'] '
                            'and params[\'use_tpu\'] are set by TPUEstimator).' % syntax.render(node))

  def _function_arguments(self, module, fn, call):
    """The project functions and lambdas a call is handed as arguments (not a py_func's Python function, which
    runs on the host as the py_func finding says)."""
    canonical = self.program.canonical(module, fn, call.func)
    if canonical in apis.PYTHON_CALLBACK_OPS or apis.is_estimator_spec(canonical) or \
        apis.is_tpu_estimator_spec(canonical):
      return []  # a spec's scaffold_fn, host_call and metric_fn run on the host
    found = []
    for argument in list(call.args) + [keyword.value for keyword in call.keywords
                                       if keyword.arg not in HOST_FUNCTION_ARGUMENTS]:
      if isinstance(argument, ast.Lambda):
        found.append(callables.Fn(module, argument))
      elif isinstance(argument, (ast.Name, ast.Attribute)):
        found += [t for t in self.program.callables.resolve(module, fn, argument, depth=callables.MAX_DEPTH - 3)
                  if isinstance(t, callables.Fn)]
    return found

  def _tensor_initial_value(self, module, fn, call, getter=False):
    """Whether a tf.Variable call's initial value (a tf.get_variable call's initializer=) is a tensor made by a
    TensorFlow op (not a number, an array, a callable or an initializer object, which the variable converts or
    calls outside the loop: checked in tests/porting/report)."""
    initial = _initial_value(call, getter)
    if initial is None:
      return False
    for origin in values.origins(self.program, module, fn, initial):
      if isinstance(origin.node, ast.Call):
        made_by = self.program.canonical(origin.module, origin.fn, origin.node.func)
        if apis.is_tf(made_by) and made_by not in apis.VARIABLE_CLASSES and not apis.is_initializer(made_by):
          return True
    return False

  def _in_python_callback(self, module, fn, node):
    """Whether `node` is an argument of a py_func-like call: its dtype goes where the call goes (the call's own
    finding, rule 18), not a change of its own."""
    return _inside_call(module, node,
                        lambda call: self.program.canonical(module, fn, call.func) in apis.PYTHON_CALLBACK_OPS)

  def _check_device(self, module, fn, node):
    """`with tf.device(...)` in model_fn: per-device towers, placed by hand."""
    # Checks rule 6 (gradient all-reduce).
    for item in node.items:
      context = item.context_expr
      if isinstance(context, ast.Call) and self.program.canonical(module, fn, context.func) == 'tensorflow.device':
        self.saw_device = True
        self.collector.advice(module, node, 'device-placement',
                              '`with tf.device(%s)` inside model_fn places ops by hand (per-device '
                              'towers, a parameter device): TPUEstimator places model_fn on the TPU cores and '
                              'replicates it over them itself -> build one tower without tf.device, and let '
                              'tf.tpu.CrossShardOptimizer combine the gradients instead of averaging them by hand.'
                              % syntax.render(context.args[0] if context.args else None))
        return

  def _own_batch_size(self, module, node):
    """params['batch_size'] read in model_fn when the program put its own batch size there: on a TPU that key is
    TPUEstimator's per-core batch. Sizes of tensors (reshape, zeros, a decoder's start tokens), a loss averaged over
    the batch (CrossShardOptimizer averages the cores' gradients) mean the per-core batch anyway; a learning-rate
    schedule computed from it (the rate scaled by the batch, decay steps of an epoch) changes with the core count."""
    # Checks rule 3 (params).
    fn = self.program.enclosing_function(module, node)
    if fn is None or not self._feeds_learning_rate(module, fn, node):
      return
    where = self.own_batch_size[0]
    self.collector.required(module, node, 'own-batch-size-in-model-fn',
                            '`%s` reads the program\'s own batch size (params[\'batch_size\'] '
                            'set at %s:%d), which TPUEstimator reserves: on a TPU it holds the per-core batch '
                            '(train_batch_size / cores), so what is computed from it here changes -> read the global '
                            'batch under a key of your own (and rename the key where params is built).'
                            % (syntax.render(node), where.module.path, where.node.lineno))

  def _global_batch_size(self, module, fn, node):
    """The program's own global batch size (a flag, an argparse or config attribute, a module constant, a params
    key other than TPUEstimator's `batch_size`) read in the TPU computation: there each core's model_fn gets
    params['batch_size'] examples, the global batch divided over the cores, so a tensor sized by the global one
    (zero_state, zeros, fill, reshape, a range over the examples) or a loss divided by it no longer fits the batch.
    One finding per statement; a read that only sets a learning rate (a global count of steps is right there), is
    divided by something to make a per-core size, or is only printed, is none."""
    # Checks rule 3 (params).
    name = _batch_size_name(node)
    if name is None or isinstance(module.parents.get(id(node)), (ast.Attribute, ast.Subscript)) and \
        module.parents[id(node)].value is node:
      return  # (not a read of a batch size, or only the object that holds one: `hparams.batch_size.x`)
    if isinstance(node, ast.Name):
      kind, _, _, owner = self.program.lookup(module, fn, node.id)
      if owner is not None or kind not in ('value', 'import'):
        return  # a parameter or a local: where its value came from is the finding, if any
    else:
      holder = node.value
      if isinstance(holder, ast.Name) and holder.id in ('self', 'cls'):
        return  # an attribute of the program's own object: its assignment is where the size is read
      held_as = holder.id if isinstance(holder, ast.Name) else getattr(holder, 'attr', None)
      if name == 'batch_size' and held_as in ('params', self._params_name()):
        return  # TPUEstimator's own key (params, or self.params a model keeps): the per-core batch
    statement = module.statement_of(node)
    parent = module.parents.get(id(node))
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Div, ast.FloorDiv)) and parent.left is node \
        and not syntax.is_literal(parent.right):
      return  # made per core by hand: `FLAGS.train_batch_size // FLAGS.num_shards`
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and \
        re.search(r'print|logging|\binfo$', syntax.dotted(statement.value.func) or ''):
      return
    if fn is None or self._feeds_learning_rate(module, fn, node) or _schedules(fn, statement) or \
        _never_read(fn, statement) or \
        isinstance(parent, ast.Compare) or (module.path, id(statement)) in self.global_batch_statements:
      return
    self.global_batch_statements.add((module.path, id(statement)))
    self.collector.required(module, statement, 'global-batch-size-in-model-fn',
                            '`%s` in the TPU computation is the program\'s own global batch size: on a TPU each '
                            'core\'s model_fn gets params[\'batch_size\'] examples (the global batch / cores), so '
                            'what is sized or scaled by it here no longer fits the batch -> use params[\'batch_size\'] '
                            '(or the features\' batch dimension) inside model_fn.' % syntax.render(node))

  def _params_name(self):
    """The name of the model_fn's params parameter (TPUEstimator's dict there)."""
    node = self.use.target.node
    names = [a.arg for a in node.args.args + node.args.kwonlyargs]
    return 'params' if 'params' in names or len(names) < 4 else names[3]

  def _check_int_division(self, module, fn, node):
    # Checks rule 15 (TPU dtypes).
    if isinstance(node, ast.BinOp):
      if not (isinstance(node.op, ast.Div) and checks.true_division(module)):
        return
      left, right = node.left, node.right
    else:
      canonical = self.program.canonical(module, fn, node.func) or ''
      if not (apis.is_tf(canonical) and apis.last(canonical) in apis.TRUE_DIVISIONS and len(node.args) >= 2):
        return
      left, right = node.args[0], node.args[1]
    kinds = [self._int_tensor(module, fn, side) for side in (left, right)]
    whole = [isinstance(syntax.literal(side), int) and not isinstance(syntax.literal(side), bool)
             for side in (left, right)]
    if DATA not in kinds or not all(kind or literal for kind, literal in zip(kinds, whole)):
      # (a side of unknown kind: a Python float would fail there anyway; sizes of static shapes only: XLA computes
      # them while it compiles, as the official TPU ResNet's image size, so no float64 reaches the TPU)
      return
    self.collector.required(module, node, 'int-true-division',
                            '`%s` divides integer tensors computed from the data with true division, which gives '
                            'float64 (math_ops.truediv casts int32 and int64 to float64): the TPU has no float64 -> '
                            'integer division (//, tf.math.floordiv), or cast both to tf.float32 first.'
                            % syntax.render(node))

  def _int_tensor(self, module, fn, node, depth=0):
    """SHAPE or DATA when an expression inside model_fn is an integer tensor (else None): SHAPE for what only
    static shapes give (tf.shape(x)[0], tf.size, tf.rank, sums and products of them), DATA where the data's values
    enter (a cast of a tensor to an integer dtype, argmax, count_nonzero, reductions of those)."""
    if depth > 4 or node is None:
      return None
    if isinstance(node, ast.Subscript):
      return self._int_tensor(module, fn, node.value, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
      return _strongest(self._int_tensor(module, fn, side, depth + 1) for side in (node.left, node.right))
    if isinstance(node, ast.Name):
      kind, bound, _, owner = self.program.lookup(module, fn, node.id)
      # (an assignment below the use is not what the use reads: `radius = to_int32(size / 2)` then `size = ...`)
      before = kind == 'value' and getattr(bound, 'lineno', 0) < node.lineno
      return self._int_tensor(module, fn, bound, depth + 1) if before and owner is fn else None
    if not isinstance(node, ast.Call):
      return None
    canonical = self.program.canonical(module, fn, node.func) or ''
    if not apis.is_tf(canonical):
      return None
    name = apis.last(canonical)
    if name in apis.INT_SHAPES:
      return SHAPE
    if name in apis.INT_FROM_DATA:
      return DATA
    if name in ('cast', 'to_int32', 'to_int64', 'saturate_cast'):
      dtype = syntax.argument(node, 1, 'dtype')
      named = self.program.canonical(module, fn, dtype) if dtype is not None else ''
      if name == 'cast' and not (named and apis.last(named) in ('int32', 'int64')):
        return None
      # (a cast of a shape keeps its kind; of anything else, the data's values)
      return (self._int_tensor(module, fn, node.args[0], depth + 1) if node.args else None) or DATA
    if name in apis.INT_KEEPING:
      return _strongest(self._int_tensor(module, fn, argument, depth + 1) for argument in node.args[:2])
    return None

  def _feeds_learning_rate(self, module, fn, node, depth=0):
    """Whether the value of `node` (an expression in `fn`) reaches a learning-rate schedule or an optimizer: through
    the names assigned from it in `fn` (a few hops: `per_epoch = n / batch`, `boundaries = [per_epoch * e ...]`) and
    the parameters of the program's functions it is handed to (`get_train_op(loss, params['batch_size'])`)."""
    names = set()
    for _ in range(4):
      grown = False
      for statement, _ in syntax.walk_local(fn):
        if isinstance(statement, ast.Assign) and _holds(statement.value, node, names):
          for target in statement.targets:
            for name in syntax.assigned_names(target):
              if name not in names:
                names.add(name)
                grown = True
      if not grown:
        break
    for call, _ in syntax.walk_local(fn):
      if not isinstance(call, ast.Call):
        continue
      arguments = list(call.args) + [keyword.value for keyword in call.keywords]
      handed = [argument for argument in arguments if _holds(argument, node, names)]
      if not handed:
        continue
      canonical = self.program.canonical(module, fn, call.func)
      if apis.sets_learning_rate(canonical):
        return True
      if depth < 2 and not apis.is_tf(canonical):
        for callee in self.program.callables.called_defs(module, fn, call):
          bound = callables.arguments(call, callee.node)
          for parameter, argument in bound.items():
            if any(argument is value for value in handed) and self._feeds_learning_rate(
                callee.module, callee.node, ast.Name(id=parameter, ctx=ast.Load()), depth + 1):
              return True
    return False

  @staticmethod
  def _v2_summary(module, call, canonical):
    """A summary write of the TF 2 API (tf.compat.v2.summary, tf.contrib.summary, or any given a `step=`): a
    WriteSummary op placed on the host's CPU, not a v1 summary tensor that hooks fetch."""
    head = (syntax.dotted(call.func) or '').partition('.')[0]
    imported = module.written_imports.get(head, '')  # as written: aliases hold tensorflow.compat.v2 as tensorflow
    return canonical.startswith('tensorflow.contrib.summary.') or 'compat.v2' in imported or \
        syntax.keyword(call, 'step') is not None

  def _soft_placement(self):
    """Whether the program turns soft device placement on (tf.config.set_soft_device_placement(True)), which TPU
    replication records for automatic outside compilation (tpu.py, TPUReplicateMetadata allow_soft_placement)."""
    for module, fn, call in self.program.calls_named('set_soft_device_placement'):
      if self.program.canonical(module, fn, call.func) == 'tensorflow.config.set_soft_device_placement' and \
          call.args and syntax.literal(call.args[0]) is not False and \
          not reachable.in_dead_code(self.program, module, call):
        return True
    return False

  def _check_call(self, module, fn, call, conditions, runs):
    canonical = self.program.canonical(module, fn, call.func)
    if canonical:
      self._check_api(module, fn, call, canonical, runs)
    elif isinstance(call.func, ast.Attribute) and call.func.attr == 'create_estimator_spec':
      self._check_head(module, call, runs)
    if isinstance(call.func, ast.Attribute) and call.func.attr in OPTIMIZER_METHODS and not apis.is_tf(canonical):
      self.saw_optimizer = True
      if syntax.tpu_branch(conditions) != 'tpu' and mode_branches.TRAIN in runs:
        self._check_optimizer(module, fn, call, call.func.value)
    elif (apis.is_optimize_loss(canonical) or apis.is_create_train_op(canonical)) and mode_branches.TRAIN in runs:
      self.saw_optimizer = True
      self._check_train_op_maker(module, fn, call, canonical, conditions)

  def _check_api(self, module, fn, call, canonical, runs):
    # Checks rule 4 (static shapes), rule 7 (summaries on the host), rule 15 (TPU dtypes), rule 18 (XLA ops).
    add = self.collector
    short = canonical.replace('tensorflow.', 'tf.', 1)
    batch_bound = None  # a mask width or decode bound computed from the batch: the reduction that computes it
    grown = self._grown_by_loop(module, fn, call) if canonical in apis.WHILE_LOOPS else None
    if canonical in apis.SEQUENCE_MASK or canonical in apis.DYNAMIC_DECODE:
      batch_bound = self._batch_reduction(module, fn, syntax.argument(
          call, *((1, 'maxlen') if canonical in apis.SEQUENCE_MASK else (3, 'maximum_iterations'))))
    elif canonical in apis.SHAPE_ARGUMENTS:
      batch_bound = next(filter(None, (self._batch_reduction(module, fn, syntax.argument(call, *argument))
                                       for argument in apis.SHAPE_ARGUMENTS[canonical])), None)
    if apis.is_estimator_spec(canonical) or apis.is_tpu_estimator_spec(canonical):
      self._check_spec(module, fn, call, canonical, runs)
    elif apis.is_summary(canonical) and self._v2_summary(module, call, canonical) and self._soft_placement():
      add.advice(module, call, 'summary-in-model-fn',
                 '`%s` inside model_fn is a TF 2 summary write, which the program\'s soft device placement '
                 '(tf.config.set_soft_device_placement(True)) moves out of the TPU computation to the host '
                 '(tpu.py: automatic outside compilation); it writes only where the program sets a writer and '
                 'records -> keep it, or return the tensors in TPUEstimatorSpec(host_call=(fn, tensors)).' % short)
    elif apis.is_summary(canonical):
      add.required(module, call, 'summary-in-model-fn',
                   '`%s` inside model_fn: summary ops cannot run inside the TPU computation (on a '
                   'TPU they are silently left out) -> return the tensors in TPUEstimatorSpec(host_call=(fn, '
                   'tensors)) and write the summaries in fn, which runs on the host.' % short)
    elif (canonical in apis.VARIABLE_CLASSES or canonical in apis.VARIABLE_GETTERS) and \
        self._tensor_initial_value(module, fn, call, canonical in apis.VARIABLE_GETTERS) and \
        not _metric_builder(self.program, fn):
      getter = canonical in apis.VARIABLE_GETTERS
      add.required(module, call, 'variable-from-a-tensor',
                   '`%s(...)` inside model_fn with a tensor (%s) as its initial value: TPUEstimator builds model_fn '
                   'inside its loop on the TPU (training_loop.repeat, training_loop.while_loop), where such a variable '
                   'cannot be made ("Initializer for variable ... is from inside a control-flow construct") -> %s'
                   % (short, syntax.render(_initial_value(call, getter)),
                      'give it an initializer object with the shape (tf.random_uniform_initializer(...), '
                      'shape=[...]), which it calls outside the loop.' if getter else
                      'tf.compat.v1.get_variable(name, shape, initializer=...), or give tf.Variable a callable '
                      '(tf.Variable(lambda: ...)), which it calls outside the loop.'))
    elif canonical in apis.PYTHON_CALLBACK_OPS:
      add.required(module, call, 'python-in-model-fn',
                   '`%s` inside model_fn runs Python, which a TPU cannot -> compute it in '
                   'input_fn (on the host) or with TensorFlow ops XLA compiles.' % short)
    elif canonical in apis.DYNAMIC_SHAPE_OPS or (canonical in apis.WHERE_OPS and _one_argument_where(call)):
      add.required(module, call, 'dynamic-shape-op',
                   '`%s` inside model_fn returns a shape that depends on the data; XLA compiles '
                   'a TPU program for fixed shapes only -> keep shapes static (e.g. multiply by a 0/1 mask, or '
                   'tf.where(cond, x, y) with three arguments).' % short)
    elif grown:
      add.required(module, call, 'dynamic-shape-op',
                   '`%s` inside model_fn grows `%s` each iteration (tf.concat onto it in the body): XLA compiles a '
                   'loop only where the body gives back the shapes it was given ("Input and output shapes of loop '
                   'body do not match") -> a fixed-size buffer written at the loop index (tf.TensorArray of a '
                   'fixed size, or a one-hot update), or the batch computed at once without a loop.'
                   % (short, grown))
    elif canonical in apis.SAMPLING_HELPERS:
      add.required(module, call, 'dynamic-shape-op',
                   '`%s` inside model_fn samples with a one-argument tf.where and gather_nd/scatter_nd of the rows it '
                   'picks: shapes that depend on the data, which XLA does not compile -> TrainingHelper (teacher '
                   'forcing), or sampling written with fixed shapes (tf.where(mask, sampled, given) over the whole '
                   'batch).' % short)
    elif canonical in apis.SHAPE_ARGUMENTS and batch_bound:
      add.required(module, call, 'dynamic-shape-op',
                   '`%s(...)` inside model_fn with a size computed from the data (%s): XLA needs every shape, '
                   'size and padding at compile time ("must be a compile-time constant") -> a constant (the padded '
                   'length of static-shaped input), with a 0/1 mask for what is padding.' % (short, batch_bound))
    elif canonical in apis.SEQUENCE_MASK and syntax.argument(call, 1, 'maxlen') is None:
      add.required(module, call, 'sequence-mask-without-maxlen',
                   '`%s(lengths)` without maxlen inside model_fn: its width is the largest length '
                   'in the batch, a value XLA needs at compile time ("Range must be a compile-time constant") -> '
                   'pass maxlen, the padded length (e.g. tf.shape(x)[1] of static-shaped input).' % short)
    elif canonical in apis.SEQUENCE_MASK and batch_bound:
      add.required(module, call, 'sequence-mask-without-maxlen',
                   '`%s(lengths, maxlen)` inside model_fn with a maxlen computed from the batch (%s): the mask\'s '
                   'width changes with the data, and XLA needs it at compile time ("must be a compile-time '
                   'constant") -> a constant maxlen, the padded length of static-shaped input.'
                   % (short, batch_bound))
    elif canonical in apis.DYNAMIC_DECODE and self._may_be_none(module, fn, syntax.argument(call, 3,
                                                                                          'maximum_iterations')):
      add.required(module, call, 'decode-without-maximum-iterations',
                   '`%s(...)` without maximum_iterations inside model_fn: it decodes until every sequence ends, '
                   'and XLA needs the loop\'s bound when it compiles ("maximum_iterations is required for XLA '
                   'compilation.") -> pass maximum_iterations (e.g. the padded target length).' % short)
    elif canonical in apis.DYNAMIC_DECODE and batch_bound:
      add.required(module, call, 'decode-without-maximum-iterations',
                   '`%s(...)` inside model_fn with maximum_iterations computed from the batch (%s): XLA sizes the '
                   'decode loop\'s arrays with it when it compiles ("must be a compile-time constant") -> a '
                   'constant maximum_iterations (e.g. the padded target length).' % (short, batch_bound))
    elif canonical in apis.INIT_FROM_CHECKPOINT:
      add.required(module, call, 'init-from-checkpoint-in-model-fn',
                   '`%s(...)` inside model_fn: on a TPU its restore is built inside the TPU computation, which '
                   'cannot run it -> when params[\'use_tpu\'] is true, call it in a function returned as '
                   'TPUEstimatorSpec(scaffold_fn=...), which TPUEstimator runs on the host (keep the direct call '
                   'for the CPU).' % short)
    elif apis.is_string_op(canonical) and not self._around_a_table(module, fn, call):
      self.collector.strings_on_device = True
      add.required(module, call, 'string-op-in-model-fn',
                   '`%s` inside model_fn: TPUs have no string type -> do string work (parsing, '
                   'decoding, vocabulary lookups) in input_fn on the host and feed numbers.' % short)
    elif apis.is_column_applier(canonical):
      self._check_columns(module, fn, call, short)

  def _check_head(self, module, call, runs):
    """`head.create_estimator_spec(...)` (a canned head in a custom model_fn) makes an EstimatorSpec with the
    head's metric ops, and in training writes a loss summary inside model_fn."""
    # Checks rule 5 (TPUEstimatorSpec), rule 7 (summaries on the host).
    text = '`%s(...)`' % syntax.render(call.func)
    if runs - {mode_branches.TRAIN}:
      self.collector.required(module, call, 'head-estimator-spec',
                              '%s returns an EstimatorSpec with the head\'s eval_metric_ops: on a TPU, evaluation '
                              'and prediction refuse an EstimatorSpec -> build tf.estimator.tpu.TPUEstimatorSpec '
                              'from the head\'s loss and predictions, with eval_metrics=(metric_fn, tensors).' % text)
    if mode_branches.TRAIN in runs:
      self.collector.required(module, call, 'head-summaries',
                              '%s writes a loss summary in training, inside model_fn: summary ops cannot run in the '
                              'TPU computation (inside its training loop tf.summary.merge_all refuses them) -> '
                              'report the loss through TPUEstimatorSpec(host_call=...).' % text)

  def _check_columns(self, module, fn, call, short):
    # Checks rule 15 (TPU dtypes).
    node = syntax.argument(call, 1, 'feature_columns')
    if short.endswith('DenseFeatures') or short.endswith('LinearModel'):
      node = syntax.argument(call, 0, 'feature_columns')
    found = columns.string_columns(self.program, module, fn, node, self.params) if node is not None else []
    if found:
      self.collector.strings_on_device = True
      self.collector.required(module, call, 'string-columns-in-model-fn',
                              '`%s` inside model_fn applies feature columns that look strings up '
                              'or hash them (%s): on a TPU, which has no strings and cannot compile those lookups -> '
                              'map the strings to integer ids in input_fn (on the host) and look the dense ids up '
                              '(tf.nn.embedding_lookup, tf.one_hot): categorical columns over ids make SparseTensors '
                              'the TPU cannot compile either.' % (short, columns.describe(found)))
      return
    found = columns.id_columns(self.program, module, fn, node, self.params) if node is not None else []
    if found:
      # Checks rule 4 (static shapes).
      self.collector.required(module, call, 'id-columns-in-model-fn', checks.ID_COLUMNS_WHY % (
          '`%s` inside model_fn applies feature columns that' % short, columns.describe(found)))

  def _grown_by_loop(self, module, fn, call):
    """The loop variable (its parameter name) a tf.while_loop's body concatenates onto itself and gives back, so
    that its shape grows each iteration; None when no body the call resolves to does."""
    body = syntax.argument(call, 1, 'body')
    for target in self.program.callables.resolve(module, fn, body) if body is not None else ():
      if not isinstance(target, callables.Fn):
        continue
      names = syntax.positional_names(target.node)
      for returned in self.program.returned_values(target.node):
        parts = returned.elts if isinstance(returned, (ast.Tuple, ast.List)) else [returned]
        for name, part in zip(names, parts):
          for origin in values.origins(self.program, target.module, target.node, part):
            if isinstance(origin.node, ast.Call) and self.program.canonical(
                origin.module, origin.fn, origin.node.func) in apis.CONCATS and origin.node.args and \
                isinstance(origin.node.args[0], (ast.List, ast.Tuple)) and \
                any(isinstance(e, ast.Name) and e.id == name for e in origin.node.args[0].elts):
              return name
    return None

  def _around_a_table(self, module, fn, call):
    """Whether a string op only prepares what a table looks up (`codes = table.lookup(tf.string_split(labels).values)`)
    or works on what it gave (`tf.reduce_join(table.lookup(ids).values)`): part of that table's change, which
    docs/PORT_REPORT.md places at the table (ids made on the host, or the table moved there, take these with it)."""
    if call.args and any(self._looked_up(origin.module, origin.fn, origin.node, 0)
                         for origin in values.origins(self.program, module, fn, call.args[0])):
      return True
    statement = module.parents.get(id(call))
    name = syntax.plain_target(statement) if isinstance(statement, ast.Assign) and statement.value is call else None
    return name is not None and any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'lookup' and
        any(isinstance(part, ast.Name) and part.id == name for argument in node.args for part in ast.walk(argument))
        for node, _ in syntax.walk_local(fn))

  def _looked_up(self, module, fn, node, depth):
    """Whether an expression is (an attribute or a slice of) what a table's lookup gave."""
    if depth > 3:
      return False
    if isinstance(node, (ast.Attribute, ast.Subscript)):
      return any(self._looked_up(origin.module, origin.fn, origin.node, depth + 1)
                 for origin in values.origins(self.program, module, fn, node.value))
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'lookup'

  def _empty_scaffold(self, module, fn, node):
    """`scaffold=tf.train.Scaffold()` without arguments: Estimator's default, with nothing in it for a scaffold_fn
    to carry (the spec written as a TPUEstimatorSpec leaves it out)."""
    return isinstance(node, ast.Call) and not node.args and not node.keywords and \
        apis.last(self.program.canonical(module, fn, node.func) or '') == 'Scaffold'

  def _check_spec(self, module, fn, call, canonical, runs):
    # Checks rule 5 (TPUEstimatorSpec), rule 8 (iterations per loop).
    add = self.collector
    train_op = values.keyword_given(module, fn, call, 'train_op')
    if train_op is not None:
      self.train_ops.append((module, call, train_op))
    if apis.is_estimator_spec(canonical):
      short = canonical.replace('tensorflow.', 'tf.', 1)
      if runs - {mode_branches.TRAIN}:
        add.required(module, call, 'estimator-spec',
                     '`%s(...)` -> tf.estimator.tpu.TPUEstimatorSpec: on a TPU, evaluation and '
                     'prediction refuse an EstimatorSpec (TPUEstimator rebuilds metrics, summaries and the scaffold '
                     'outside the TPU computation, so it takes them as functions).' % short)
      else:
        add.advice(module, call, 'estimator-spec-in-training',
                   '`%s(...)` returned in training only, which TPUEstimator accepts on a TPU -> '
                   'tf.estimator.tpu.TPUEstimatorSpec all the same, to report through host_call (evaluation and '
                   'prediction on a TPU refuse an EstimatorSpec).' % short)
      if mode_branches.EVAL in runs and _given(call, 'eval_metric_ops', (module, fn)):
        add.required(module, call, 'eval-metric-ops',
                     'eval_metric_ops= -> eval_metrics=(metric_fn, tensors): metric ops cannot '
                     'run on the TPU; TPUEstimator calls metric_fn on the host with the (batch-major) tensors.')
      if mode_branches.TRAIN in runs and _given(call, 'training_chief_hooks', (module, fn)):
        add.required(module, call, 'training-chief-hooks',
                     'training_chief_hooks= -> training_hooks=: TPUEstimator refuses chief hooks '
                     'in an EstimatorSpec.')
      scaffold = values.keyword_given(module, fn, call, 'scaffold')
      if runs & {mode_branches.TRAIN, mode_branches.EVAL} and not _left_out_or_none(scaffold) and \
          not self._empty_scaffold(module, fn, scaffold):
        add.required(module, call, 'scaffold', 'scaffold= is ignored by TPU training and evaluation -> '
                     'TPUEstimatorSpec(scaffold_fn=fn), fn returning the Scaffold (for example to '
                     'init_from_checkpoint).')
    if mode_branches.PREDICT in runs and (self.collector.index is None or self.collector.index.predicts):
      self._check_predictions(module, fn, call)  # (an export's predictions are not checked on the TPU)
    if apis.is_tpu_estimator_spec(canonical) and mode_branches.EVAL in runs:
      self._check_metric_tensors(module, fn, syntax.keyword(call, 'eval_metrics'))
    for name, mode in HOOK_ARGUMENTS:
      value = syntax.keyword(call, name)
      if _left_out_or_none(value):
        continue
      listed = hooks.hooks_in(self.program, module, fn, value)
      fetching = [h for h in listed if h.kind == hooks.FETCHES]
      if fetching and mode in runs:
        add.required(module, call, 'spec-hooks-fetch-tensors',
                     '%s=`%s` holds %s (%s:%d), which fetches tensors made in model_fn: on a TPU '
                     'they are inside the TPU computation, where nothing can fetch them -> report them through '
                     'host_call (or the loss TPUEstimator logs), make the ops it runs part of the train_op, and '
                     'keep hooks for host-side work.' % (
                         name, syntax.render(value), fetching[0].detail, fetching[0].where.module.path,
                         fetching[0].where.node.lineno))
      else:
        add.advice(module, call, 'spec-hooks',
                   '%s= run on the host only between loops of iterations_per_loop steps, and '
                   'must not fetch tensors made in model_fn (on a TPU those are inside the TPU computation: a '
                   'LoggingTensorHook on the loss fails) -> report values through host_call or the loss TPUEstimator '
                   'logs, and keep hooks for host-side work.' % name)

  def _check_metric_tensors(self, module, fn, node):
    """eval_metrics=(metric_fn, [tensors]) written out with a Python value among the tensors (`num_labels`, an int):
    off the TPU TPUEstimator hands metric_fn the list as it is; on a TPU it sends each through the outfeed, which
    takes only tensors (tpu_estimator.py, _OutfeedHostCall: AttributeError on the int). One change where the pair
    is written."""
    # Checks rule 5 (TPUEstimatorSpec).
    if _left_out_or_none(node):
      return
    for origin in values.origins(self.program, module, fn, node):
      pair = origin.node
      if not isinstance(pair, (ast.Tuple, ast.List)) or len(pair.elts) != 2:
        continue
      tensors = pair.elts[1]
      parts = tensors.elts if isinstance(tensors, (ast.List, ast.Tuple)) else \
          tensors.values if isinstance(tensors, ast.Dict) else []
      plain = [part for part in parts if _python_value(self.program, origin.module, origin.fn, part, 0)]
      if plain:
        self.collector.required(origin.module, pair, 'eval-metrics-not-tensors',
                                'eval_metrics hands metric_fn %s, a Python value, not a tensor: a TPU sends every '
                                'eval_metrics tensor off the TPU through the outfeed, which fails on anything else '
                                '(off the TPU metric_fn gets it as it is) -> bind it in metric_fn (a closure or '
                                'functools.partial) and give eval_metrics tensors only.' % ', '.join(
                                    '`%s`' % syntax.render(part) for part in plain))

  def _check_string_predictions(self, module, fn, node):
    """A dict of predictions written out with a string tensor in it (`tf.constant([''], dtype=tf.string)`, a gather
    from a list of class names): the TPU has no string type, so it cannot send them off the TPU; one change at the
    statement that writes the dict (the strings made on the host from the ids instead)."""
    # Checks rule 15 (TPU dtypes).
    for origin in values.origins(self.program, module, fn, node):
      if not isinstance(origin.node, ast.Dict):
        continue
      named = [syntax.literal(key) for key, value in zip(origin.node.keys, origin.node.values)
               if key is not None and _string_tensor(self.program, origin.module, origin.fn, value, 0)]
      if named:
        self.collector.required(origin.module, origin.node, 'string-predictions',
                                '%s: the TPU has no string type, and TPU prediction sends every prediction off '
                                'the TPU through the outfeed -> predict the integer ids on the TPU and turn them into '
                                'strings on the host, after predict().' % (
                                    'the prediction `%s` is a string tensor' % named[0] if len(named) == 1 else
                                    'the predictions %s are string tensors' % ', '.join('`%s`' % n for n in named)))

  def _check_predictions(self, module, fn, call):
    """predictions that are one tensor, not a dict: TPU prediction refuses them (tpu_estimator.py
    _verify_tpu_spec_predictions: TypeError 'TPUEstimatorSpec.predictions must be dict of Tensors'); the CPU's
    Estimator and TPUEstimator off the TPU take them. A second change at the spec's statement."""
    # Checks rule 5 (TPUEstimatorSpec).
    node = syntax.argument(call, 1, 'predictions')  # (mode, predictions, ...) in both specs
    if _left_out_or_none(node):
      return
    self._check_string_predictions(module, fn, node)
    found = [o for o in values.origins(self.program, module, fn, node) if not _is_none(o.node)]
    tensors = [o for o in found if isinstance(o.node, ast.Call) and apis.is_tf(
        self.program.canonical(o.module, o.fn, o.node.func))]
    if found and len(tensors) == len(found):
      self.collector.required(module, call, 'predictions-not-dict',
                              'predictions=`%s` is one tensor (`%s`), not a dict: TPU prediction refuses it '
                              '(TypeError: TPUEstimatorSpec.predictions must be dict of Tensors) -> predictions={'
                              '\'NAME\': tensor}, and read that key where the program reads the predictions.' % (
                                  syntax.render(node), syntax.render(tensors[0].node.func)))

  def _check_optimizer(self, module, fn, call, receiver):
    # Checks rule 6 (gradient all-reduce).
    kind, detail = self._optimizer_kind(module, fn, receiver, (), 0)
    text = '`%s.%s(...)`' % (syntax.render(receiver), call.func.attr)
    self._report_optimizer(module, call, kind, detail, text)

  def _report_optimizer(self, module, call, kind, detail, text):
    # Checks rule 6 (gradient all-reduce).
    add = self.collector
    if kind == PLAIN:
      add.required(module, call, 'optimizer-not-cross-shard',
                   '%s with an optimizer no CrossShardOptimizer wraps: each TPU core would apply '
                   'only its own shard\'s gradients and the cores\' weights drift apart -> optimizer = '
                   'tf.tpu.CrossShardOptimizer(optimizer) when params[\'use_tpu\'] is true (it averages the '
                   'gradients over the cores, reduction=MEAN).' % text)
    elif kind == KERAS:
      add.required(module, call, 'keras-optimizer', '%s with a Keras optimizer (%s): CrossShardOptimizer takes only '
                   'tf.compat.v1.train optimizers (it raises TypeError for a Keras one) -> use the '
                   'tf.compat.v1.train optimizer, wrapped in tf.tpu.CrossShardOptimizer when params[\'use_tpu\'] '
                   'is true.' % (text, detail))
    elif kind == WRAPPED_ALWAYS:
      add.advice(module, call, 'cross-shard-always',
                 '%s: the optimizer is wrapped in CrossShardOptimizer unconditionally; off the TPU '
                 '(use_tpu=False, CPU tests) its cross-core sum has no kernel and training fails -> wrap only when '
                 'params[\'use_tpu\'] is true.' % text)
    elif kind == UNKNOWN:
      add.unknown(module, call, 'optimizer-unseen',
                  'whether the optimizer of %s is wrapped in CrossShardOptimizer: %s -> on a '
                  'TPU it must be: tf.tpu.CrossShardOptimizer(optimizer) when params[\'use_tpu\'] is true.'
                  % (text, detail))

  def _check_train_op_maker(self, module, fn, call, canonical, conditions):
    """tf.contrib.layers.optimize_loss and slim's create_train_op make the optimizer step themselves."""
    # Checks rule 6 (gradient all-reduce), rule 7 (summaries on the host).
    short = canonical.replace('tensorflow.', 'tf.', 1)
    optimizer = syntax.argument(call, 3 if apis.is_optimize_loss(canonical) else 1, 'optimizer')
    if optimizer is not None:
      value = syntax.literal(optimizer)
      canonical_class = self.program.canonical(module, fn, optimizer) if isinstance(
          optimizer, (ast.Name, ast.Attribute)) else None
      if isinstance(value, str) or apis.is_tf1_optimizer(canonical_class):
        kind, detail = PLAIN, ''  # a name ('Adam') or a class (tf.train.AdamOptimizer): it builds the optimizer
      else:
        kind, detail = self._optimizer_kind(module, fn, optimizer, conditions, 0)
      if kind == UNKNOWN and _only_names(self.program, module, fn, optimizer):
        kind, detail = PLAIN, ''  # `optimizer='Adam'` given by a builder's caller: optimize_loss builds it
      elif kind == UNKNOWN and apis.is_optimize_loss(canonical) and _settings_read(self.program, module, fn,
                                                                                    optimizer):
        kind, detail = PLAIN, ''  # a name (or class) from flags, params or a config: optimize_loss builds it
      if syntax.tpu_branch(conditions) != 'tpu':
        self._report_optimizer(module, call, kind, detail, '`%s(optimizer=%s)`' % (short, syntax.render(optimizer)))
    if apis.is_optimize_loss(canonical):
      summaries = syntax.keyword(call, 'summaries')
      empty = summaries is not None and isinstance(summaries, (ast.List, ast.Tuple)) and not summaries.elts
      if not empty:
        self.collector.required(module, call, 'summaries-of-optimize-loss',
                                '`%s` writes summaries (%s) inside model_fn: summary ops cannot run '
                                'inside the TPU computation (on a TPU they are silently left out) -> summaries=[], '
                                'and report the values through TPUEstimatorSpec(host_call=...).' % (
                                    short, syntax.render(summaries) if summaries is not None else 'its default '
                                    'loss, learning_rate and gradient norm'))
    elif syntax.literal(syntax.keyword(call, 'summarize_gradients')) is True:
      self.collector.required(module, call, 'summaries-of-create-train-op',
                              '`%s(summarize_gradients=True)` writes a histogram summary of every gradient inside '
                              'model_fn: summary ops cannot run inside the TPU computation -> '
                              'summarize_gradients=False, and report what you need through '
                              'TPUEstimatorSpec(host_call=...).' % short)

  def _optimizer_kind(self, module, fn, node, conditions, depth):
    """(kind, detail) of an optimizer expression; kinds are the constants above."""
    if depth > 3:
      return UNKNOWN, '`%s` is built through too many steps to follow' % syntax.render(node)
    if isinstance(node, ast.IfExp):
      kinds = [self._optimizer_kind(module, fn, branch, conditions, depth + 1) for branch in (node.body, node.orelse)]
      if any(k in (WRAPPED_IF, WRAPPED_ALWAYS) for k, _ in kinds):
        return WRAPPED_IF, ''
      return kinds[0]
    if isinstance(node, ast.Call):
      return self._constructed_kind(module, fn, node, conditions, depth)
    if isinstance(node, ast.Name):
      return self._name_kind(module, fn, node, depth)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == 'self':
      # `self.optimizer`, made in __init__ (an Estimator subclass that keeps its optimizer)
      kinds = [self._optimizer_kind(origin.module, origin.fn, origin.node, (), depth + 1)
               for origin in values.origins(self.program, module, fn, node) if origin.node is not node]
      if kinds:
        return _combine(kinds)
    return UNKNOWN, '`%s` is only known at run time' % syntax.render(node)

  def _constructed_kind(self, module, fn, call, conditions, depth):
    canonical = self.program.canonical(module, fn, call.func)
    if apis.is_cross_shard_optimizer(canonical):
      return (WRAPPED_IF if conditions else WRAPPED_ALWAYS), ''
    if apis.is_keras_optimizer(canonical):
      return KERAS, canonical.replace('tensorflow.', 'tf.', 1)
    if apis.is_tf1_optimizer(canonical) or apis.is_optimizer_maker(canonical):
      return PLAIN, ''
    found = self.program.find_def(canonical)
    if found and isinstance(found[1], ast.ClassDef):
      return PLAIN, ''  # an optimizer class of the project (e.g. BERT's AdamWeightDecayOptimizer)
    classes = self._optimizer_classes(module, fn, call.func, depth)
    if classes:
      return _combine(classes)
    kinds = []
    for callee in self.program.callables.called_defs(module, fn, call):
      for value in self.program.returned_values(callee.node):
        kinds.append(self._optimizer_kind(callee.module, callee.node, value, (), depth + 1))
    if kinds:
      return _combine(kinds)
    return UNKNOWN, '`%s` is not defined in the scanned files' % syntax.render(call.func)

  def _optimizer_classes(self, module, fn, func, depth):
    """Kinds of the optimizer classes a called expression can be: `params.get('optimizer', tf.train.AdamOptimizer)`
    (the default, and what the estimator's params dict gives that key), or a name assigned one of those."""
    candidates = []
    key = params_lib.key_read(func)
    if isinstance(func, ast.Call) and key is not None:
      if len(func.args) > 1:
        candidates.append(values.Value(module, fn, func.args[1]))
      candidates += self.params.values_of(key)
    elif isinstance(func, (ast.Subscript, ast.Attribute)) and key is not None and key not in DICT_METHODS:
      candidates += self.params.values_of(key)
    elif isinstance(func, ast.Name) and depth < 3:
      for value, _ in values.assignments(self.program, module, fn, func.id):
        if not isinstance(value, ast.Call) or params_lib.key_read(value) is not None:
          candidates.append(values.Value(module, fn, value))
    elif isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and depth < 3:
      # `optimizers[params.optimizer]` of `optimizers = {'adam': tf.train.AdamOptimizer, ...}`: the class at the
      # key read, or any of them for a key only known at run time
      key = syntax.subscript_key(func)
      for value, _ in values.assignments(self.program, module, fn, func.value.id):
        if isinstance(value, ast.Dict):
          held = value.values if key is syntax.NO_VALUE else containers.displayed_at(value, key)
          candidates += [values.Value(module, fn, each) for each in held]
    kinds = []
    for candidate in candidates:
      if isinstance(candidate.node, (ast.Call, ast.Subscript)):
        kinds += self._optimizer_classes(candidate.module, candidate.fn, candidate.node, depth + 1)
        continue
      canonical = self.program.canonical(candidate.module, candidate.fn, candidate.node)
      if apis.is_cross_shard_optimizer(canonical):
        kinds.append((WRAPPED_IF, ''))
      elif apis.is_keras_optimizer(canonical):
        kinds.append((KERAS, canonical.replace('tensorflow.', 'tf.', 1)))
      elif apis.is_tf1_optimizer(canonical):
        kinds.append((PLAIN, ''))
    return kinds

  def _name_kind(self, module, fn, name, depth):
    assignments = [(node.value, conditions) for node, conditions in syntax.walk_local(fn)
                   if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name.id
                                                           for t in node.targets)]
    if not assignments:
      kind, bound, owner_module, owner = self.program.lookup(module, fn, name.id)
      if kind == 'value' and owner is not None:
        return self._name_kind(owner_module, owner, name, depth + 1)
      if kind == 'param':
        # `get_train_op(optimizer, loss)` of a helper: the optimizers its scanned callers pass.
        passed = self._passed_kinds(name.id, bound, depth)
        if passed:
          return _combine(passed)
      return UNKNOWN, '`%s` is %s' % (name.id, 'a parameter, only known at run time' if kind == 'param'
                                       else 'not assigned in the scanned code')
    kinds = [self._optimizer_kind(module, fn, value, conditions, depth + 1) for value, conditions in assignments
             if not (params_lib.key_read(value) is not None and isinstance(value, ast.Call))]
    return _combine(kinds) if kinds else (UNKNOWN, '`%s` is only known at run time' % name.id)

  def _passed_kinds(self, name, fn, depth):
    """Kinds of what the scanned calls of `fn` pass as its parameter `name`."""
    kinds = []
    if depth > 3:
      return kinds
    for caller_module, caller, _, value in self.program.callables.passed(fn, name):
      if value is not None:
        kinds.append(self._optimizer_kind(caller_module, caller, value, (), depth + 1))
    return [k for k in kinds if k[0] != UNKNOWN] or kinds

  def _batch_reduction(self, module, fn, node, depth=0):
    """The reduction (rendered) a size is computed with from the data of the batch (`tf.reduce_max(lengths)`, the
    longest sequence), followed through names, `self.` attributes and arithmetic; None when it is not."""
    if node is None or depth > 4:
      return None
    key = (id(module), id(fn), id(node))
    seen = self._no_reduction.get(key)
    if seen is not None and seen[0] is node and seen[1] >= 4 - depth:
      return None  # already followed from here as far or further, and nothing found
    found = self._reduction_through_origins(module, fn, node, depth)
    if found is None:
      self._no_reduction[key] = (node, 4 - depth)
    return found

  def _reduction_through_origins(self, module, fn, node, depth):
    for origin in values.origins(self.program, module, fn, node):
      for inner in self._walk_past_shapes(origin.module, origin.fn, origin.node):
        if isinstance(inner, ast.Call) and self.program.canonical(
            origin.module, origin.fn, inner.func) in apis.BATCH_REDUCTIONS and inner.args and \
            not isinstance(inner.args[0], (ast.List, ast.Tuple)) and not syntax.is_literal(inner.args[0]) and \
            not self._static_size(origin.module, origin.fn, inner.args[0]):
          return syntax.render(inner)
        if inner is not origin.node and isinstance(inner, (ast.Name, ast.Attribute)) and \
            isinstance(getattr(inner, 'ctx', None), ast.Load):
          found = self._batch_reduction(origin.module, origin.fn, inner, depth + 1)
          if found:
            return found
    return None

  def _may_be_none(self, module, fn, node):
    """An argument left out or None, also where it is a parameter some scanned call leaves at its None default
    (`def decode(..., maximum_length=None)` called without it)."""
    if _left_out_or_none(node):
      return True
    if not isinstance(node, ast.Name):
      return False
    return any(_is_none(origin.node) for origin in values.origins(self.program, module, fn, node))

  def _walk_past_shapes(self, module, fn, node):
    """The nodes of an expression, not those inside a tensor's shape (tf.shape(x)[2], x.shape[1]): a TPU's
    tensors have static shapes, so whatever x is computed from, its shape is a constant."""
    pending = [node]
    while pending:
      current = pending.pop()
      if self._static_size(module, fn, current, shallow=True):
        continue  # (the expression itself too: `shape = np.array(tensor).shape`, an origin of a size)
      yield current
      pending.extend(ast.iter_child_nodes(current))

  def _static_size(self, module, fn, node, shallow=False):
    """Whether a reduced value is a tensor's shape (tf.shape(x), x.shape): static on a TPU, so XLA folds it.
    `shallow`: whether `node` itself is one."""
    for inner in [node] if shallow else ast.walk(node):
      if isinstance(inner, ast.Call) and apis.last(self.program.canonical(module, fn, inner.func) or '') in (
          'shape', 'size', 'shape_n'):
        return True
      if isinstance(inner, ast.Attribute) and inner.attr == 'shape':
        return True
    return False

  def report_unseen_optimizer(self):
    """A TRAIN spec whose train_op is built outside the scanned files: say the optimizer could not be checked."""
    # Checks rule 6 (gradient all-reduce).
    for module, call, train_op in self.train_ops:
      if syntax.literal(train_op) is None:
        continue
      origin, owner = train_op, self.program.enclosing_function(module, call)
      if isinstance(train_op, ast.Name):
        for node, _ in syntax.walk_local(owner or module.tree):
          if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == train_op.id
                                                  for t in node.targets):
            origin = node.value
      if not isinstance(origin, ast.Call) or apis.is_tf(self.program.canonical(module, owner, origin.func)):
        continue  # no optimizer call anywhere (e.g. tf.group of assignments): nothing to wrap
      self.collector.unknown(module, call, 'train-op-unseen',
                             'whether train_op `%s` wraps its optimizer in CrossShardOptimizer: '
                             'it is built by `%s`, outside the scanned files -> scan them too: on a TPU the optimizer '
                             'must be wrapped, only when params[\'use_tpu\'] is true.'
                             % (syntax.render(train_op), syntax.render(origin)))


# What an integer tensor inside model_fn is computed from (_DeviceWalk._int_tensor).
SHAPE, DATA = 'shape', 'data'


def _strongest(kinds):
  kinds = set(kinds)
  return DATA if DATA in kinds else SHAPE if SHAPE in kinds else None


def _holds(expression, node, names):
  """Whether `expression` is `node`, contains it, or reads one of `names` (a Name node stands for its name)."""
  for inner in ast.walk(expression):
    if inner is node or (isinstance(inner, ast.Name) and (inner.id in names or (
        isinstance(node, ast.Name) and inner.id == node.id))):
      return True
  return False


def _metric_builder(program, fn):
  """Whether `fn` is a function of the program whose every call only makes a metric for eval_metric_ops
  (`matrix = confusion(labels, predictions)`, `metrics = {'matrix': matrix}`, `EstimatorSpec(eval_metric_ops=
  metrics)`): the port moves those into metric_fn, which TPUEstimator runs on the host, outside the TPU loop."""
  if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  sites = program.callables.call_sites(fn)
  return bool(sites) and all(caller is not None and _only_into_eval_metric_ops(module, caller, call)
                             for module, caller, call in sites)


def _only_into_eval_metric_ops(module, caller, call):
  statement = module.statement_of(call)
  name = syntax.plain_target(statement)
  held = module.parents.get(id(call))
  if name is not None and isinstance(held, ast.Dict) and statement.value is held and call in held.values:
    call = held  # `eval_metric_ops = {'accuracy': ..., 'matrix': confusion(labels, predictions)}`
  if name is None or statement.value is not call:
    return False
  names, holders = set([name]), []
  nodes = [node for node, _ in syntax.walk_local(caller)]
  for _ in range(3):  # names of the dicts (tuples) that hold it
    for node in nodes:
      held_by = syntax.plain_target(node)
      if held_by and isinstance(node.value, (ast.Dict, ast.Tuple, ast.List)) and node not in holders and \
          any(isinstance(inner, ast.Name) and inner.id in names for inner in ast.walk(node.value)):
        holders.append(node)
        names.add(held_by)
  handed = False
  for node in nodes:
    if not (isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load)):
      continue
    if any(any(inner is node for inner in ast.walk(holder.value)) for holder in holders):
      continue
    parent = module.parents.get(id(node))
    if isinstance(parent, ast.keyword) and parent.arg == 'eval_metric_ops':
      handed = True
      continue
    return False
  return handed


def _inside_call(module, node, test):
  """Whether `node` is within a call, in its own statement, that `test(call)` accepts."""
  parent = module.parents.get(id(node))
  while parent is not None and not isinstance(parent, (ast.stmt,) + syntax.SCOPE_NODES):
    if isinstance(parent, ast.Call) and test(parent):
      return True
    parent = module.parents.get(id(parent))
  return False


PYTHON_NUMBER_CALLS = ('len', 'int', 'float', 'round', 'max', 'min', 'sum')


def _python_value(program, module, fn, node, depth):
  """Whether an expression surely holds a Python number or string, not a tensor: literals, len()/int()/... of
  anything, arithmetic of those, followed through names and the parameters every scanned call fills."""
  if depth > 4:
    return False
  value = syntax.literal(node)
  if value is not syntax.NO_VALUE:
    return isinstance(value, (int, float, str)) and not isinstance(value, bool)
  if isinstance(node, ast.Call):
    return isinstance(node.func, ast.Name) and node.func.id in PYTHON_NUMBER_CALLS and \
        program.lookup(module, fn, node.func.id)[0] not in ('value', 'param', 'def', 'import', 'class')
  if isinstance(node, ast.BinOp):
    return _python_value(program, module, fn, node.left, depth + 1) and \
        _python_value(program, module, fn, node.right, depth + 1)
  if isinstance(node, ast.Name):
    found = [o for o in values.origins(program, module, fn, node) if o.node is not node]
    return bool(found) and all(_python_value(program, o.module, o.fn, o.node, depth + 1) for o in found)
  return False


def _string_tensor(program, module, fn, node, depth):
  """Whether a TensorFlow expression is surely a string tensor: tf.constant / convert_to_tensor of strings (or
  dtype=tf.string), or a gather from them (`tf.gather(CLASS_NAMES, ids)`)."""
  if depth > 2:
    return False
  if isinstance(node, ast.Name):
    return any(_string_tensor(program, o.module, o.fn, o.node, depth + 1)
               for o in values.origins(program, module, fn, node) if o.node is not node)
  if not isinstance(node, ast.Call):
    return False
  canonical = program.canonical(module, fn, node.func) or ''
  if not apis.is_tf(canonical):
    return False
  short = apis.last(canonical)
  if short in ('constant', 'convert_to_tensor'):
    dtype = syntax.keyword(node, 'dtype')
    if dtype is not None:
      return dtypes.holds_string_dtype(program, module, fn, dtype)
    return bool(node.args) and _strings(program, module, fn, node.args[0])
  if short == 'gather' and node.args:
    return _strings(program, module, fn, node.args[0]) or _string_tensor(program, module, fn, node.args[0], depth + 1)
  return False


def _strings(program, module, fn, node):
  """Whether every origin of an expression is a string literal or a written list or tuple of them."""
  found = values.origins(program, module, fn, node)
  return bool(found) and all(isinstance(syntax.literal(o.node), str) or dtypes.string_literals(o.node) for o in found)


def _combine(kinds):
  """One kind for a name assigned several times (opt = Adam(); if use_tpu: opt = CrossShardOptimizer(opt))."""
  names = [k for k, _ in kinds]
  for kind in (WRAPPED_IF, WRAPPED_ALWAYS, KERAS, PLAIN):
    if kind in names:
      return kind, kinds[names.index(kind)][1]
  return kinds[0]


def _call_of(module, node):
  """The call whose function `node` is, else None."""
  parent = module.parents.get(id(node))
  return parent if isinstance(parent, ast.Call) and parent.func is node else None


def _initial_value(call, getter):
  """tf.Variable's initial_value, or tf.get_variable's initializer (its fourth positional argument)."""
  return syntax.argument(call, 3, 'initializer') if getter else syntax.argument(call, 0, 'initial_value')


def _one_argument_where(call):
  return len(call.args) == 1 and syntax.keyword(call, 'x') is None and syntax.keyword(call, 'y') is None


def _is_none(node):
  return syntax.literal(node) is None


def _left_out_or_none(node):
  """An argument left out (syntax.argument's None) or written as None."""
  return node is None or _is_none(node)


def _settings_read(program, module, fn, node):
  """Whether an expression reads a setting: `FLAGS.optimizer`, `params['optimizer']`, `params.get('optimizer',
  'Adam')`, `Config.train.optimizer`, `self.params.optimizer` (an attribute chain or subscript of a name that is not
  TensorFlow's, or .get on one). Settings hold what a command line or a file can: an optimizer's name, never an
  optimizer built around CrossShardOptimizer."""
  if isinstance(node, ast.Call):
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == 'get' and node.args and
            isinstance(syntax.literal(node.args[0]), str)):
      return False
    node = node.func.value
  elif not isinstance(node, (ast.Attribute, ast.Subscript)):
    return False
  hops = 0
  while isinstance(node, (ast.Attribute, ast.Subscript)):
    node, hops = node.value, hops + 1
  if not isinstance(node, ast.Name) or (node.id == 'self' and hops < 2):
    return False  # self.optimizer may be an optimizer an __init__ built; self.params.optimizer is a setting
  return not apis.is_tf(program.canonical(module, fn, node) or '')


def _only_names(program, module, fn, node):
  """Whether every value an optimizer expression can hold (followed to the builders' callers) is an optimizer's
  name, such as 'Adam': optimize_loss and create_train_op then build a plain optimizer themselves."""
  found = values.origins(program, module, fn, node)
  return bool(found) and all(isinstance(syntax.literal(origin.node), str) for origin in found)
