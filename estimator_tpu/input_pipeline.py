"""input_fn builders: TFRecords -> static-shaped batches of (features, labels).

TPU rules honoured here:
  * The batch size comes from params['batch_size'], which TPUEstimator sets (global batch on CPU, per-core batch
    on TPU); the input_fns never read flags.
  * Every training and evaluation batch has a fully static shape: XLA compiles one program for one shape, so a
    short last batch would not run. `batch(..., drop_remainder=True)` is what
    `tf.contrib.data.batch_and_drop_remainder` became.
  * Evaluation must not lose the remainder either: the split is padded with weight-0 rows up to a multiple of the
    global eval batch, so every batch is full and every real example counts exactly once (BERT's
    "is_real_example" technique, which the TF porting guide recommends).
  * Images leave the host as float32 and labels as int32: TPUs take neither uint8 nor int64.
"""
import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu import records
from estimator_tpu.model_fn import IMAGE_KEY
from estimator_tpu.model_fn import WEIGHT_KEY

AUTOTUNE = tf.data.experimental.AUTOTUNE
FEATURE_SPEC = {
    'image_raw': tf.io.FixedLenFeature([], tf.string),
    'label': tf.io.FixedLenFeature([], tf.int64),
}
SHUFFLE_BUFFER = 10000
READ_BUFFER_BYTES = 8 * 1024 * 1024
# What a padding row holds; its weight of 0 is what keeps it out of every metric.
PADDING_LABEL = 0


def decode_images(image_raw, batch_size):
  """[batch] strings of 784 uint8 bytes -> float32 [batch_size, 784]; batch_size -1 leaves the batch dynamic."""
  pixels = tf.io.decode_raw(image_raw, tf.uint8)
  # The reshape pins the static shape [batch_size, 784] that decode_raw cannot know.
  return tf.cast(tf.reshape(pixels, [batch_size, model.NUM_PIXELS]), tf.float32)


# Start of the message of a failed label check; failures.py recognises it and names the file.
LABEL_RANGE_ERROR = 'labels outside 0-%d in' % (model.NUM_CLASSES - 1)


def parse_batch(serialized, batch_size, source='the input'):
  """Parses a [batch_size] vector of serialized Examples at once (one op per batch, not per example).

  `source` (the file name) goes into the error raised when a label is not a class id.
  """
  parsed = tf.io.parse_example(serialized, FEATURE_SPEC)
  images = decode_images(parsed['image_raw'], batch_size)
  labels = check_labels(tf.reshape(parsed['label'], [batch_size]), source)
  return {IMAGE_KEY: images}, tf.cast(labels, tf.int32)


def check_labels(labels, source):
  """Returns `labels`, failing (InvalidArgumentError) when one is not in [0, NUM_CLASSES).

  The loss cannot be trusted to do this: only the CPU kernel of sparse_softmax_cross_entropy checks the range;
  on GPU and TPU a bad label silently gives a wrong loss or NaN. The input pipeline runs on the host CPU in
  every mode, so the check here holds on TPU too, and costs one comparison per label.
  """
  bad = tf.logical_or(labels < 0, labels >= model.NUM_CLASSES)
  check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(bad)),
                              ['%s %s: found' % (LABEL_RANGE_ERROR, source), tf.boolean_mask(labels, bad)])
  with tf.control_dependencies([check]):
    return tf.identity(labels)


def input_fn_builder(data_dir, split, is_training):
  """Returns input_fn(params) reading `<data_dir>/<split>.tfrecords`.

  Training shuffles and repeats forever (TPUEstimator stops at max_steps). Without training, the split is read
  once in order and a final partial batch is dropped; `eval_input_fn_builder` is the exact alternative.
  """
  path = records.split_path(data_dir, split)

  def input_fn(params):
    batch_size = params['batch_size']
    dataset = tf.data.TFRecordDataset(path, buffer_size=READ_BUFFER_BYTES)
    if is_training:
      # The serialized split is small (MNIST train: ~50 MB), so keep it in memory after the first epoch.
      dataset = dataset.cache().shuffle(SHUFFLE_BUFFER).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda serialized: parse_batch(serialized, batch_size, path), num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn


def eval_padding(num_examples, global_batch_size):
  """Returns (steps, padding rows) that cover `num_examples` with full batches of `global_batch_size`."""
  steps = -(-num_examples // global_batch_size)  # ceil
  return steps, steps * global_batch_size - num_examples


def eval_input_fn_builder(data_dir, split, num_examples, global_batch_size):
  """Returns input_fn(params) for exact evaluation of the split's `num_examples` examples.

  Each example carries features[WEIGHT_KEY]: 1.0, followed by weight-0 padding rows up to a multiple of
  `global_batch_size`, the global eval batch (TPUEstimator's eval_batch_size). It must be the global batch: on TPU,
  params['batch_size'] is the per-core batch and one step takes a per-core batch for every core, so only a multiple
  of the global batch leaves no step short. Evaluate for eval_padding(...)[0] steps.
  """
  path = records.split_path(data_dir, split)
  _, num_padding = eval_padding(num_examples, global_batch_size)
  padding_record = records.serialize_example(
      np.zeros((model.IMAGE_SIZE, model.IMAGE_SIZE), np.uint8), PADDING_LABEL)

  def input_fn(params):
    batch_size = params['batch_size']
    real = tf.data.TFRecordDataset(path, buffer_size=READ_BUFFER_BYTES).take(num_examples)
    real = real.map(lambda serialized: (serialized, tf.constant(1.0)))
    padding = tf.data.Dataset.from_tensors((tf.constant(padding_record), tf.constant(0.0))).repeat(num_padding)
    dataset = real.concatenate(padding).batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda serialized, weights: _with_weights(parse_batch(serialized, batch_size), weights),
                          num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn


def _with_weights(features_and_labels, weights):
  features, labels = features_and_labels
  features[WEIGHT_KEY] = weights
  return features, labels


def predict_input_fn_builder(data_dir, split, num_examples):
  """Returns input_fn(params) with the first `num_examples` examples of the split (-1: all), read once.

  The last batch may be short: the dataset is finite, as TPUEstimator.predict requires, and on TPU TPUEstimator
  pads that batch to the static shape itself and drops the padded predictions.
  """
  path = records.split_path(data_dir, split)

  def input_fn(params):
    dataset = tf.data.TFRecordDataset(path, buffer_size=READ_BUFFER_BYTES).take(num_examples)
    dataset = dataset.batch(params['batch_size'])
    dataset = dataset.map(lambda serialized: parse_batch(serialized, -1)[0], num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn
