"""The TPU training step, built as TPUEstimator builds it for one TPU core, then checked and compiled with XLA.

On a TPU, TPUEstimator calls model_fn(features, labels, TRAIN, params) with params['use_tpu'] = True and the
per-core batch, inside a shard context that says how many cores there are, and compiles the whole step with XLA:
forward pass, loss, gradients, CrossShardOptimizer's cross-core sum and the optimizer update. The step is built the
same way here, as one `tf.xla.experimental.compile` computation (inside TPUEstimator's loop: xla.compile_as_tpu_iteration),
fed one real batch from input_fn, and then
  * every op is looked up in XLA's kernel registry (all rejected ops at once, by name),
  * every tensor is checked for a static shape and a dtype the TPU has,
  * the step is compiled and run once with XLA on the CPU (xla.compile_and_run explains the one substitution).
"""
import copy

import tensorflow.compat.v1 as tf
# TPUEstimator tells model code how many cores share the batch through this context; CrossShardOptimizer reads
# it to average gradients over the cores (and warns when it is missing). There is no public API for it.
from tensorflow.python.tpu import tpu_function

from estimator_tpu.porting.readiness import questions
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import xla

# Ops whose value XLA knows while compiling (from static shapes), so an unknown static shape on them, or on
# arithmetic over them (e.g. BroadcastGradientArgs in gradients), is no dynamic shape at run time.
COMPILE_TIME_OPS = frozenset(['Const', 'Shape', 'ShapeN', 'Size', 'Rank'])
# Outputs whose static shape TensorFlow never infers although the kernel gives them one from its inputs' shapes:
# FusedBatchNormV3's reserve_space_3, which only its gradient reads (and which XLA sizes when it compiles).
SHAPE_LEFT_TO_THE_KERNEL = {'FusedBatchNormV3': frozenset([5])}
MAX_LISTED = 5


class TpuStep(object):
  """One TPU core's training step as a graph: the ops XLA compiles, and the names to initialise, feed and fetch."""

  def __init__(self, graph, ops, feed, loss_name, loss_dtype, init_name, global_step_name):
    self.graph = graph
    self.ops = ops
    self.feed = feed
    self.loss_name = loss_name
    self.loss_dtype = loss_dtype
    self.init_name = init_name
    self.global_step_name = global_step_name


def build_tpu_step(model_fn, params, num_shards, batch):
  """Builds the step for `batch` = (features, labels) numpy values from input_fn; returns a TpuStep."""
  graph = tf.Graph()
  dtypes = []

  def step_fn(*args):
    loss, train_op = train_step(model_fn, params, num_shards, *args)
    dtypes.append(loss.dtype.name)
    # TPUEstimator's loop carries the loss as float32 (its initial value, _INITIAL_LOSS, is one).
    return tf.cast(loss, tf.float32), [train_op]

  with graph.as_default():
    global_step = create_global_step()
    inputs = placeholders_for(batch)
    loss, ops = xla.compile_as_tpu_iteration(step_fn, inputs)
    # TPUEstimator's Scaffold initialises local variables too (local_init_op): tf.metrics' counters in training.
    init = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())
    step_value = global_step.read_value()
  feed = {placeholder.name: value for placeholder, value in zip(tf.nest.flatten(inputs), tf.nest.flatten(batch))}
  return TpuStep(graph, ops, feed, loss.name, dtypes[0], init.name, step_value.name)


def call_model_fn(model_fn, features, labels, mode, params):
  """model_fn called with a deep copy of params, as Estimator (and TPUEstimator) hand each call its own
  (estimator.py's `params` property): a model_fn that writes into params or takes keys out builds again."""
  try:
    params = copy.deepcopy(params)
  except Exception:  # pylint: disable=broad-except  (what cannot be copied is passed as it is)
    pass
  return model_fn(features, labels, mode, params)


def train_step(model_fn, params, num_shards, features, labels=None):
  """Calls model_fn as TPUEstimator does on each core; returns (loss, train_op)."""
  with tpu_function.tpu_shard_context(num_shards):
    spec = call_model_fn(model_fn, features, labels, tf.estimator.ModeKeys.TRAIN, params)
  # TPU training takes an EstimatorSpec's loss and train_op as it takes a TPUEstimatorSpec's, unless it carries
  # training_chief_hooks (tpu_estimator.py, _ModelFnWrapper._verify_estimator_spec); evaluation and prediction on a
  # TPU refuse it, which TensorFlow's own graph of those modes says (deployment_checks).
  # (TPUEstimatorSpec is no EstimatorSpec subclass.)
  taken = isinstance(spec, tf.estimator.tpu.TPUEstimatorSpec) or (
      isinstance(spec, tf.estimator.EstimatorSpec) and not spec.training_chief_hooks)
  if not taken:
    raise NotATpuEstimatorSpec(spec)
  if spec.train_op is None:
    raise ValueError('model_fn returned no train_op in TRAIN mode.')
  return spec.loss, spec.train_op


class NotATpuEstimatorSpec(TypeError):
  """model_fn returned in TRAIN mode what TPU training refuses: an EstimatorSpec with training_chief_hooks, or
  anything that is no spec. (An EstimatorSpec without them trains on a TPU; evaluation and prediction, which refuse
  it, are judged by TensorFlow's own graph of those modes.)"""

  def __init__(self, spec):
    self.returned = type(spec).__name__
    self.estimator_spec = isinstance(spec, tf.estimator.EstimatorSpec)
    super(NotATpuEstimatorSpec, self).__init__('model_fn returned %s' % self.returned)

  def result(self):
    # Checks rule 5 (TPUEstimatorSpec).
    what = 'a tf.estimator.EstimatorSpec with training_chief_hooks' if self.estimator_spec else 'a %s' % self.returned
    return check_results.failed(
        'model_fn_spec', 'model_fn returned %s in TRAIN mode, not a tf.estimator.tpu.TPUEstimatorSpec: TPU '
        'training refuses it (tpu_estimator.py, _verify_estimator_spec), as evaluation and prediction on a TPU '
        'refuse any EstimatorSpec.' % what,
        'return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=..., train_op=...) in every mode, with '
        'eval_metrics=(metric_fn, tensors) instead of eval_metric_ops= and summaries through host_call.')


def placeholders_for(batch):
  """[features] or [features, labels] as placeholders with the exact shapes and dtypes of the numpy batch."""
  features, labels = batch
  inputs = [placeholders_like(features, 'features')]
  if labels is not None:
    inputs.append(placeholders_like(labels, 'labels'))
  return inputs


def create_global_step():
  # A resource variable, as TPUEstimator creates it: XLA can only update resource variables.
  return tf.get_variable(tf.GraphKeys.GLOBAL_STEP, shape=[], dtype=tf.int64, initializer=tf.zeros_initializer(),
                         trainable=False, use_resource=True,
                         collections=[tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.GLOBAL_STEP])


def placeholders_like(values, prefix):
  """Placeholders with the exact shapes and dtypes of a (nested) numpy batch."""
  counter = iter(range(len(tf.nest.flatten(values))))
  return tf.nest.map_structure(
      lambda value: tf.placeholder(tf.as_dtype(value.dtype), value.shape, name='%s_%d' % (prefix, next(counter))),
      values)


# Ops that read a checkpoint: a TPU step holds one when model_fn calls tf.train.init_from_checkpoint itself.
RESTORE_OPS = frozenset(['RestoreV2', 'Restore', 'RestoreSlice'])


def check_xla_compile(step, per_shard_batch):
  """Every op of the step has an XLA kernel, and the step compiles and runs one training step.

  Returns the xla_compile result, followed by the global_step result (skipped when the step did not run).
  """
  # The registry lookup runs first because it names every op without a kernel, whatever the compile error
  # says; the compile has the last word (it also catches ops whose arguments XLA cannot handle).
  # Checks rule 9 (steps), rule 18 (XLA ops).
  rejected = [(op.type, op.name) for op in xla.ops_without_xla_kernel(step.ops)]
  restores = [op.name for op in step.graph.get_operations() if op.type in RESTORE_OPS]
  if restores:
    # tf.train.init_from_checkpoint called in model_fn: its restore is built where model_fn is, in the TPU
    # computation, where no restore runs (and this graph cannot even initialise its variables).
    return [check_results.failed(
        'xla_compile', 'model_fn restores variables from a checkpoint inside the TPU training step (%s: '
        'tf.train.init_from_checkpoint called in model_fn); XLA has no kernel for a restore.' % ', '.join(
            restores[:3]), "when params['use_tpu'] is true, call init_from_checkpoint in a function returned as "
        'TPUEstimatorSpec(scaffold_fn=...), which TPUEstimator runs on the host (keep the direct call for the CPU).'),
            check_results.skipped('global_step', 'the step did not run.')]
  try:
    (loss,), (global_step,) = xla.compile_and_run(
        step.graph.as_graph_def(), step.init_name, step.feed, [step.loss_name], [step.global_step_name])
  except tf.errors.OpError as e:
    rejected += [pair for pair in xla.rejected_ops_in_error(e.message) if pair not in rejected]
    return [compile_failure(rejected, xla.first_error_line(e.message)),
            check_results.skipped('global_step', 'the step did not run.')]
  collectives = sum(op.type in xla.TPU_COLLECTIVES for op in step.ops)
  return [check_results.passed(
      'xla_compile',
      'the TPU training step (%d ops, %d examples per core) compiled with XLA on the CPU and ran once: loss %.4g, '
      'global step 0 -> %d%s.' % (len(step.ops), per_shard_batch, loss, global_step,
                                  '; its %d CrossReplicaSum ops, which only the TPU backend compiles, ran as '
                                  'identities (one core)' % collectives if collectives else '')),
          check_global_step_advances(global_step)]


def compile_failure(rejected, error_line):
  # Checks rule 18 (XLA ops).
  return questions.xla_failure('xla_compile', 'the TPU training step', rejected, error_line)


def list_ops(pairs):
  return questions.list_ops(pairs)


def fix_for_rejected(op_types):
  return questions.fix_for_rejected(op_types)


def check_step_shapes(step):
  """Every tensor of the step has a static shape; names the ops where a dynamic shape starts."""
  # Checks rule 4 (static shapes).
  dynamic = dynamic_tensors(step.ops)
  if not dynamic:
    return check_results.passed('step_shapes', 'all %d tensors of the TPU training step have static shapes.'
                          % sum(len(op.outputs) for op in step.ops))
  dynamic_names = set(t.name for t in dynamic)
  origins = [t for t in dynamic if not any(i.name in dynamic_names for i in t.op.inputs)]
  shown = ', '.join("'%s' (%s) has shape %s" % (t.name, t.op.type, check_results.format_shape(t.shape))
                    for t in origins[:MAX_LISTED])
  return check_results.failed(
      'step_shapes', 'the TPU compiles one program for fixed shapes, but %s, which depends on the data%s.'
      % (shown, ' (%d tensors after it are dynamic too)' % (len(dynamic) - len(origins))
         if len(dynamic) > len(origins) else ''),
      'keep every shape independent of the data: instead of tf.unique, tf.boolean_mask or one-argument tf.where, '
      'use fixed-size masks and weights, segment sums with a fixed num_segments, or pad to a fixed maximum.')


def dynamic_tensors(ops):
  """Tensors of `ops` (in topological order) whose shape is unknown and not computable at compile time."""
  compile_time = set()
  kernel_shaped = set()  # names of tensors shaped only by a kernel (SHAPE_LEFT_TO_THE_KERNEL) and of those made
  dynamic = []           # from them alone (TF 2's gradients take a ZerosLike of reserve_space_3)
  for op in ops:
    if op.type in RESTORE_OPS:
      compile_time.add(op.name)  # a checkpoint read in the step (and what only passes it on): xla_compile's finding
      continue
    if op.type in COMPILE_TIME_OPS or (op.inputs and not op.op_def.is_stateful
                                       and all(i.op.name in compile_time for i in op.inputs)) or \
        _sized_at_compile_time(op, compile_time):
      compile_time.add(op.name)
      continue
    unknown_inputs = [i for i in op.inputs if _unknown(i)]
    inherited = bool(unknown_inputs) and all(i.name in kernel_shaped for i in unknown_inputs)
    for t in op.outputs:
      if not _unknown(t):
        continue
      if inherited or t.value_index in SHAPE_LEFT_TO_THE_KERNEL.get(op.type, ()):
        kernel_shaped.add(t.name)
      else:
        dynamic.append(t)
  return dynamic


def _sized_at_compile_time(op, compile_time):
  """A TensorArraySizeV3 of a TensorArray made with a size known when XLA compiles (dynamic_rnn's, the time steps of
  a static input): XLA sizes the array then, so the range TensorArrayStack gathers over has a static length."""
  if op.type != 'TensorArraySizeV3':
    return False
  handle = op.inputs[0].op
  while handle.type in ('Enter', 'RefEnter', 'Identity') and handle.inputs:
    handle = handle.inputs[0].op
  return handle.type == 'TensorArrayV3' and handle.inputs[0].op.name in compile_time


def _unknown(tensor):
  return tensor.dtype not in (tf.resource, tf.variant) and not tensor.shape.is_fully_defined()


def check_step_dtypes(step):
  """The TPU has no float64: the step must compute in float32 (or bfloat16)."""
  # xla.compile passes each input through an Identity; a float64 input is the input check's finding.
  # Checks rule 15 (TPU dtypes).
  inputs = passing_inputs_on(step.ops)
  wide = [(op.type, op.name) for op in step.ops
          if op.name not in inputs and any(t.dtype == tf.float64 for t in op.outputs)]
  return questions.float64_in_step(wide, 'the TPU training step')


def passing_inputs_on(ops):
  """Names of the ops (in topological order) that only hand the step's inputs on: xla.compile's Identity of each
  input and, inside TPUEstimator's loop, the Enter that brings it into the loop."""
  in_step = set(op.name for op in ops)
  passing = set()
  for op in ops:
    if op.type in ('Identity', 'Enter') and op.inputs and (op.inputs[0].op.name not in in_step or
                                                          op.inputs[0].op.name in passing):
      passing.add(op.name)
  return passing


def check_precision(step, requested):
  """bfloat16 where --precision asks for it, float32 variables and loss (model.mnist_cnn's bfloat16_scope)."""
  # Checks rule 20 (bfloat16).
  variables = set(v.dtype.base_dtype.name for v in step.graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES))
  compute = set(t.dtype.name for op in step.ops for t in op.outputs if t.dtype.is_floating)
  return questions.precision(requested, variables, compute, step.loss_dtype, 'tf.tpu.bfloat16_scope()')


def check_all_reduce(step, num_shards):
  """With several cores, gradients must be combined across them (CrossShardOptimizer), or each core trains alone."""
  # Checks rule 6 (gradient all-reduce).
  variables = step.graph.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)
  collectives = [op for op in step.ops if op.type in xla.TPU_COLLECTIVES]
  if num_shards == 1:
    return check_results.passed('gradient_all_reduce', 'one core: no gradients to combine across cores.')
  if variables and not collectives:
    return check_results.failed(
        'gradient_all_reduce', 'the step updates %s but never combines gradients across the %d cores, so each '
        'core would train its own copy on its slice of the batch.' % (check_results.plural(len(variables), 'variable'),
                                                                       num_shards),
        "wrap the optimizer when params['use_tpu']: optimizer = tf.tpu.CrossShardOptimizer(optimizer) "
        '(what tf.contrib.tpu.CrossShardOptimizer became).')
  return check_results.passed(
      'gradient_all_reduce', 'gradients of %s are combined across the %d cores by %d CrossReplicaSum ops. With '
      "tf.tpu.CrossShardOptimizer's default reduction (MEAN) each core's loss is first scaled by 1/%d, so the update "
      'uses the mean gradient over the global batch, and the learning rate means what it means on one device at '
      'that batch (tensorflow/python/tpu/tpu_optimizer.py).' % (check_results.plural(len(variables), 'variable'),
                                                                 num_shards, len(collectives), num_shards))


def check_global_step_advances(step_value):
  """TPUEstimator stops at max_steps by the global step; a train_op that never increments it never stops."""
  # Checks rule 9 (steps).
  if step_value == 1:
    return check_results.passed('global_step', 'one training step advanced the global step by 1.')
  return check_results.failed('global_step', 'one training step moved the global step from 0 to %d.' % step_value,
                        'pass global_step=tf.train.get_global_step() to optimizer.minimize (or apply_gradients).')


def summaries_in_train_step(model_fn, params, num_shards, batch):
  """The summary ops model_fn creates in TRAIN mode, found by building it once outside XLA.

  Inside an XLA (TPU) computation, tf.summary calls return an empty constant instead of a summary op, so on a TPU
  these summaries are silently missing; they never show up in the compiled step at all.
  """
  graph = tf.Graph()
  with graph.as_default():
    create_global_step()
    train_step(model_fn, params, num_shards, *placeholders_for(batch))
  return [op for op in graph.get_operations() if 'Summary' in op.type]


def check_step_summaries(summary_ops):
  # Checks rule 7 (summaries on the host).
  if summary_ops:
    return check_results.failed(
        'step_summaries', 'model_fn writes %s in the TRAIN step (%s); inside the TPU computation tf.summary does '
        'nothing, so they would silently be missing.' % (check_results.plural(len(summary_ops), 'summary'), ', '.join(
            "'%s'" % op.name for op in summary_ops[:MAX_LISTED])),
        'pass the tensors to TPUEstimatorSpec(host_call=(fn, [tensors])) and write the summaries in fn, which runs '
        'on the host (give scalars a leading batch dimension: tf.reshape(x, [1])).')
  return check_results.passed('step_summaries', 'no tf.summary calls in the TRAIN step (they would be dropped on TPU).')
