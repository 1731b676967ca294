"""The evaluation and prediction steps of one TPU core, compiled with XLA, and what leaves the TPU in every mode.

On the TPU, TPUEstimator runs model_fn's EVAL and PREDICT graphs for each core too, and sends tensors from the
cores to the host through the outfeed, where it concatenates the cores' tensors along their first dimension
(tpu_estimator.py, _OutfeedHostCall.create_tpu_hostcall):
  * eval_metrics tensors go to metric_fn on the host: each must be batch-major, with the core's batch first,
    or the concatenation mixes up examples;
  * predictions likewise, one row per example;
  * host_call tensors (summaries) need at least one dimension: a scalar cannot be concatenated (TensorFlow
    raises "All tensors outfed from TPU should preserve batch size dimension, but got scalar").
"""
import tensorflow.compat.v1 as tf
# The shard context TPUEstimator sets around model_fn (see step_checks.py).
from tensorflow.python.tpu import tpu_function

from estimator_tpu.porting.readiness import questions
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import step_checks
from estimator_tpu.porting.readiness import xla

MODE_NAMES = {tf.estimator.ModeKeys.EVAL: 'evaluation', tf.estimator.ModeKeys.PREDICT: 'prediction'}


def outfed_tensors(spec, mode):
  """{name: tensor} that leave the TPU for `mode`: eval_metrics' tensors, or the predictions."""
  if mode == tf.estimator.ModeKeys.PREDICT:
    predictions = spec.predictions
    return dict(predictions) if isinstance(predictions, dict) else {'predictions': predictions}
  if not getattr(spec, 'eval_metrics', None):
    return {}
  return named_tensors(spec.eval_metrics[1], 'eval_metrics')


def named_tensors(tensors, owner):
  """{name: tensor} of the tensors of an (fn, tensors) pair: a dict as it is, a list named `owner`[1][i]. A value
  that is not a list, tuple or dict (TensorFlow refuses it) is one entry named `owner`[1]."""
  if isinstance(tensors, dict):
    return dict(tensors)
  if isinstance(tensors, (list, tuple)):
    return {'%s[1][%d]' % (owner, i): t for i, t in enumerate(tensors)}
  return {'%s[1]' % owner: tensors}


def not_tensors(tensors):
  """The names of the values that are no tf.Tensor: TensorFlow's outfeed (_OutfeedHostCall.record) reads each
  one's .dtype and .shape, so a Python number, a list or a nested dict fails on a TPU with AttributeError, while
  the CPU path (create_cpu_hostcall) passes it to the host function as it is."""
  return sorted(name for name, value in tensors.items() if not isinstance(value, (tf.Tensor, tf.Variable)))


def check_outfed_values(name, tensors, owner, what):
  """None, or the failure for values of `owner` that TensorFlow cannot send off the TPU (not tensors)."""
  wrong = not_tensors(tensors)
  if not wrong:
    return None
  kinds = ', '.join('%s is %s' % (key, _a(type(tensors[key]).__name__)) for key in wrong)
  return check_results.failed(
      name, '%s: %s, not a tensor; on a TPU TensorFlow sends each %s tensor through the outfeed and fails on '
      "anything else (AttributeError in tpu_estimator.py's _OutfeedHostCall.record), though the CPU passes it to "
      'the function as it is.' % (what, kinds, owner),
      'give %s[1] a list or a flat dict of tensors of shape [batch, ...] (a constant: use it inside the function '
      'on the host, or tf.fill([batch], value)).' % owner)


def describe(tensors):
  return ', '.join('%s %s' % (name, _shape_text(tensors[name])) for name in sorted(tensors))


def _shape_text(value):
  if isinstance(value, (tf.Tensor, tf.Variable)):
    return check_results.format_shape(value.shape)
  return '(a %s, not a tensor)' % type(value).__name__


def not_batch_major(tensors, per_core_batch):
  return sorted(name for name, tensor in tensors.items()
                if not isinstance(tensor, (tf.Tensor, tf.Variable)) or tensor.shape.ndims is None
                or tensor.shape.ndims == 0 or tensor.shape[0] != per_core_batch)


def build_forward_step(model_fn, params, num_shards, batch, mode):
  """One core's EVAL or PREDICT computation for `batch` as an XLA cluster; returns (graph, ops, feed, outputs)."""
  graph = tf.Graph()
  with graph.as_default():
    step_checks.create_global_step()
    inputs = step_checks.placeholders_for(batch)

    def computation(*args):
      with tpu_function.tpu_shard_context(num_shards):
        spec = step_checks.call_model_fn(model_fn, args[0], args[1] if len(args) > 1 else None, mode, params)
      tensors = outfed_tensors(spec, mode)
      # What leaves the TPU (outfeed) must run, and in evaluation the loss, which TPUEstimator's loop sums (without
      # predictions, the loss too).
      loss = getattr(spec, 'loss', None)
      extra = [loss] if loss is not None and (mode == tf.estimator.ModeKeys.EVAL or not tensors) else []
      return tf.constant(0.0), [tensors[name] for name in sorted(tensors)] + extra

    output, ops = xla.compile_as_tpu_iteration(computation, inputs)
    # Local variables too, as the Estimator's Scaffold initialises them (metric variables a model_fn creates).
    init = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())
  feed = {placeholder.name: value for placeholder, value in zip(tf.nest.flatten(inputs), tf.nest.flatten(batch))}
  return graph, ops, feed, init.name, [output.name]


def check_forward_step(name, model_fn, params, num_shards, batch, spec, mode):
  """`spec` is model_fn's spec as TensorFlow's TPUEstimator built it for one core on the planned slice."""
  what = MODE_NAMES[mode]
  per_core = params['batch_size']
  tensors = outfed_tensors(spec, mode)
  refused = check_outfed_values(name, tensors, 'eval_metrics' if mode == tf.estimator.ModeKeys.EVAL else
                                'predictions', 'the %s values that leave the TPU' % what)
  if refused is not None:
    return refused
  wrong = not_batch_major(tensors, per_core)
  if wrong:
    return check_results.failed(
        name, 'the %s tensors that leave the TPU are %s; %s do%s not start with the batch dimension (%d per core), '
        'but TensorFlow concatenates each over the cores along its first dimension for the host.'
        % (what, describe(tensors), ', '.join(wrong), 'es' if len(wrong) == 1 else '', per_core),
        'return per-example tensors of shape [batch, ...] (for a per-batch value, tf.fill([batch], value) or '
        'compute it in metric_fn on the host).')
  try:
    graph, ops, feed, init, outputs = build_forward_step(model_fn, params, num_shards, batch, mode)
  except Exception as e:  # pylint: disable=broad-except -- user code: report it as a check
    return check_results.failed(name, 'model_fn failed to build the TPU %s step: %s: %s' % (what, type(e).__name__, e),
                          "make model_fn(features, labels, %s, params) build with params['use_tpu'] = True." % mode)
  rejected = [(op.type, op.name) for op in xla.ops_without_xla_kernel(ops)]
  try:
    xla.compile_and_run(graph.as_graph_def(), init, feed, outputs, [])
  except tf.errors.OpError as e:
    rejected += [pair for pair in xla.rejected_ops_in_error(e.message) if pair not in rejected]
    return questions.xla_failure(name, 'the TPU %s step' % what, rejected, xla.first_error_line(e.message))
  return check_results.passed(name,
                              'the TPU %s step (%d ops, %d examples per core) compiled with XLA on the CPU and ran '
                              'once; the tensors that leave the TPU are batch-major: %s.'
                        % (what, len(ops), per_core, describe(tensors)))


def host_call_tensors(spec):
  """{name: tensor} of the spec's host_call ({} without one)."""
  if not getattr(spec, 'host_call', None):
    return {}
  return named_tensors(spec.host_call[1], 'host_call')


def scalar_host_call_tensors(spec):
  return sorted(name for name, tensor in host_call_tensors(spec).items()
                if isinstance(tensor, (tf.Tensor, tf.Variable)) and not tensor.shape.ndims)


def check_host_call(spec, num_shards, every_n_steps, graph_error=None):
  """host_call's tensors have a leading dimension; `graph_error`: what TensorFlow raised building TRAIN, if any."""
  # Checks rule 7 (summaries on the host).
  if spec is None:
    # (the step the xla_compile line judges is built by the judge itself; the host_call is read from TensorFlow's)
    return check_results.skipped('host_call', 'TensorFlow\'s TPUEstimator built no training graph around model_fn%s, '
                                 'so there is no host_call to read.' % (
                                     ' (%s)' % graph_error.rstrip('.') if graph_error else ' (see train_input)'))
  if isinstance(spec, tf.estimator.EstimatorSpec):
    return check_results.passed('host_call', 'model_fn returns an EstimatorSpec in training, which has no host_call: '
                                'only the loss leaves the TPU.')
  if not isinstance(spec, tf.estimator.tpu.TPUEstimatorSpec):
    return check_results.skipped('host_call', 'model_fn returned no TPUEstimatorSpec (see model_fn_spec).')
  if not spec.host_call:
    return check_results.passed('host_call', 'model_fn returns no host_call: only the loss leaves the TPU.')
  tensors = host_call_tensors(spec)
  refused = check_outfed_values('host_call', tensors, 'host_call', 'host_call tensors')
  if refused is not None:
    return refused
  scalars = scalar_host_call_tensors(spec)
  if scalars:
    return check_results.failed(
        'host_call', 'host_call tensors %s are scalars; TensorFlow concatenates every host_call tensor over the '
        '%d cores along its first dimension and refuses scalars ("should preserve batch size dimension").'
        % (', '.join(scalars), num_shards), 'give each a leading dimension: tf.reshape(x, [1]).')
  if graph_error:
    return check_results.failed('host_call', graph_error, 'make host_call=(fn, tensors) match fn\'s arguments.')
  cadence = ('every step' if every_n_steps == 1 else
             'every %d steps (TPUConfig.experimental_host_call_every_n_steps)' % every_n_steps)
  return check_results.passed('host_call', 'host_call tensors %s each have a leading dimension, along which TensorFlow '
                                     'concatenates them over the %d cores for fn on the host; they leave the TPU '
                                     '%s.' % (describe(tensors), num_shards, cadence))


def _a(noun):
  return ('an ' if noun[:1] in 'aeiou' else 'a ') + noun
