"""input_fn builders for TPUEstimator (mnist_tpu.py): TFRecords -> static-shaped batches of (features, labels).

Read it next to estimator_tpu/estimator/input_fn.py; every difference is a TPU rule:
  * The batch size comes from params['batch_size'], which TPUEstimator sets (global batch on CPU and for SLICED
    evaluation and prediction, per-core batch for per-host training input); the input_fns never read flags.
  * On a TPU, input_fn runs once per TPU host (PER_HOST_V2) and TPUEstimator does not split the data between the
    calls: each call reads its own shard, picked by params['context'] (see input_deployment).
  * Every training and evaluation batch has a fully static shape: XLA compiles one program for one shape, so a
    short last batch would not run. `batch(..., drop_remainder=True)` is what
    `tf.contrib.data.batch_and_drop_remainder` became.
  * Evaluation must not lose the remainder either: each call pads its shard with weight-0 rows up to the number
    of full steps the caller asks for, so every batch is full and every real example counts exactly once (BERT's
    "is_real_example" technique, which the TF porting guide recommends).
  * Images leave the host as float32 and labels as int32 (data/records.py), dtypes every TPU infeed takes.
"""
import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.data import records
from estimator_tpu.runtime.errors import UserError

AUTOTUNE = tf.data.experimental.AUTOTUNE
SHUFFLE_BUFFER = 10000
# What a padding row holds; its weight of 0 is what keeps it out of every metric.
PADDING_LABEL = 0


def input_deployment(params):
  """(invocation index, invocation count) of this input_fn call: which shard of the data it reads.

  TPU rule (per-host input): under PER_HOST_V2 TPUEstimator calls input_fn once per TPU host, each time with
  params['context'], a TPUContext whose current_input_fn_deployment() is (host device, invocation index,
  invocation count, replicas this call feeds); it does not shard the data itself
  (tensorflow_estimator/python/estimator/tpu/tpu_estimator.py, generate_per_host_v2_enqueue_ops_fn_for_host), so
  without a shard every host reads the same examples. SLICED input is one call (index 0 of 1) on host 0. On the
  CPU path (use_tpu=False, or evaluation with eval_on_tpu=False) there is no 'context': one call reads everything.
  The deployment, not `context.current_host`, is what to shard by: TF 2.15's current_host is the host id, which
  differs from the invocation index when a replica spans hosts (tpu_context.py, TPUContext.current_host).
  """
  context = params.get('context')
  if context is None:
    return 0, 1
  _, index, count, _ = context.current_input_fn_deployment()
  return index, count


def shard_size(num_examples, index, count):
  """How many of `num_examples` Dataset.shard(count, index) keeps: the examples index, index + count, ..."""
  return len(range(index, num_examples, count))


def input_fn_builder(data_dir, split, is_training):
  """Returns input_fn(params) reading this call's shard of `<data_dir>/<split>.tfrecords`.

  Training shuffles and repeats forever (TPUEstimator stops at max_steps). Without training, the shard is read
  once in order and a final partial batch is dropped; `eval_input_fn_builder` is the exact alternative.
  """
  path = records.split_path(data_dir, split)

  def input_fn(params):
    batch_size = params['batch_size']
    index, count = input_deployment(params)
    # TPU rule (per-host input): this call's shard, taken before cache and shuffle, so the hosts' shards are
    # disjoint and together cover the split. The split is one file, so the shard is by record; with many files,
    # shard the file names instead (as tensorflow/tpu's models/official/resnet/imagenet_input.py does).
    dataset = records.read_dataset(path).shard(count, index)
    if is_training:
      # The serialized shard is small (all of MNIST train: ~50 MB), so keep it in memory after the first epoch.
      dataset = dataset.cache().shuffle(SHUFFLE_BUFFER).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda serialized: model.parse_records(serialized, batch_size, path),
                          num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn


def eval_steps(num_examples, global_batch_size, invocations=1):
  """Steps of full global batches that let each of `invocations` input_fn calls feed its whole shard.

  Each call feeds global_batch_size / invocations examples per step (its cores' share), and the largest shard,
  the first, sets the pace: every call runs the same number of steps.
  """
  per_step = global_batch_size // invocations
  return -(-shard_size(num_examples, 0, invocations) // per_step)  # ceil


def eval_padding(num_examples, global_batch_size):
  """Returns (steps, padding rows) that cover `num_examples` with full batches of `global_batch_size`, for the one
  input_fn call of evaluation on the CPU or with SLICED input on the TPU."""
  steps = eval_steps(num_examples, global_batch_size)
  return steps, steps * global_batch_size - num_examples


def invocation_padding(num_examples, global_batch_size, steps, index, count):
  """Weight-0 rows that call `index` of `count` appends to its shard so that it feeds exactly `steps` steps.

  Raises a UserError when the shard does not fit into `steps` steps: then some examples would never be scored,
  so evaluation could no longer be exact.
  """
  per_step = global_batch_size // count
  shard = shard_size(num_examples, index, count)
  if shard > steps * per_step:
    raise UserError(
        'exact evaluation is impossible: input_fn call %d of %d holds %d examples, but %d steps of %d '
        '(the global eval batch %d over %d calls) take only %d.' % (index, count, shard, steps, per_step,
                                                                   global_batch_size, count, steps * per_step),
        'evaluate for eval_steps(num_examples, global batch, %d) = %d steps; the number of input_fn calls comes '
        'from the TPU configuration (1 with SLICED evaluation input or evaluation on the CPU).'
        % (count, eval_steps(num_examples, global_batch_size, count)))
  return steps * per_step - shard


def require_even_split(params, global_batch_size, kind):
  """UserError unless the examples this call feeds per step split evenly over the TPU cores it feeds.

  TPU rule (sliced input): with SLICED input TensorFlow splits the global batch into one slice per core
  (tpu_estimator.py, generate_broadcast_enqueue_ops_fn) and, unlike for per-host input, does not check first
  that it divides (tpu_context.py, _validate_tpu_configuration): with TPUConfig(num_shards=None) this is where an
  uneven batch is caught.
  """
  context = params.get('context')
  if context is None:
    return
  _, _, count, replicas = context.current_input_fn_deployment()
  per_call = global_batch_size // count
  if per_call % replicas:
    raise UserError('the %s batch %d does not split evenly over the %d TPU cores.' % (kind, global_batch_size,
                                                                                   context.num_replicas),
                    'pass --eval_batch_size divisible by %d.' % context.num_replicas)


def eval_input_fn_builder(data_dir, split, num_examples, global_batch_size, steps):
  """Returns input_fn(params) for exact evaluation of the first `num_examples` examples of the split in `steps`.

  Each call reads its shard (input_deployment): its examples carry features[WEIGHT_KEY] 1.0, followed by weight-0
  padding rows up to `steps` steps of its share of `global_batch_size`, the global eval batch (TPUEstimator's
  eval_batch_size). Then every call feeds the same number of full batches and the weight-1 rows of all calls are
  each example exactly once. Pass the steps for the calls the configuration makes: eval_padding(...)[0] for one
  call (CPU, or SLICED on the TPU); a call whose shard does not fit raises a UserError instead of dropping rows.
  """
  path = records.split_path(data_dir, split)
  padding_record = records.serialize_example(
      np.zeros((model.IMAGE_SIZE, model.IMAGE_SIZE), np.uint8), PADDING_LABEL)

  def input_fn(params):
    batch_size = params['batch_size']
    index, count = input_deployment(params)
    require_even_split(params, global_batch_size, 'eval')
    num_padding = invocation_padding(num_examples, global_batch_size, steps, index, count)
    real = records.read_dataset(path).take(num_examples).shard(count, index)
    real = real.map(lambda serialized: (serialized, tf.constant(1.0)))
    padding = tf.data.Dataset.from_tensors((tf.constant(padding_record), tf.constant(0.0))).repeat(num_padding)
    dataset = real.concatenate(padding).batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda serialized, weights: _with_weights(serialized, weights, batch_size, path),
                          num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn


def _with_weights(serialized, weights, batch_size, path):
  features, labels = model.parse_records(serialized, batch_size, path)
  features[model.WEIGHT_KEY] = weights
  return features, labels


def predict_input_fn_builder(data_dir, split, num_examples, global_batch_size=None):
  """Returns input_fn(params) with the first `num_examples` examples of the split (-1: all), read once.

  The last batch may be short: the dataset is finite, as TPUEstimator.predict requires, and on TPU TPUEstimator
  pads that batch to the static shape itself and drops the padded predictions (tpu_estimator.py,
  _InputsWithStoppingSignals). Prediction is one call (CPU, or SLICED on the TPU): predictions come back in input
  order only from one call, so several calls are refused. With `global_batch_size` (TPUEstimator's
  predict_batch_size) it also checks that the batch splits evenly over the cores.
  """
  path = records.split_path(data_dir, split)

  def input_fn(params):
    _, count = input_deployment(params)
    if count != 1:
      raise UserError('prediction input would be read by %d input_fn calls, one per TPU host.' % count,
                      'predict with TPUConfig(eval_training_input_configuration=SLICED), as '
                      'tpu/run_config.py:build_run_config does; TensorFlow also refuses per-host prediction on '
                      'more than one host.')
    if global_batch_size is not None:
      require_even_split(params, global_batch_size, 'predict')
    dataset = records.read_dataset(path).take(num_examples)
    dataset = dataset.batch(params['batch_size'])
    dataset = dataset.map(lambda serialized: model.parse_records(serialized, -1, path)[0],
                          num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn
