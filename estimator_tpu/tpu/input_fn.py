"""input_fn builders for TPUEstimator (mnist_tpu.py): TFRecords -> static-shaped batches of (features, labels).

Read it next to estimator_tpu/estimator/input_fn.py; every difference is a TPU rule:
  * The batch size comes from params['batch_size'], which TPUEstimator sets (global batch on CPU, per-core batch
    on TPU); the input_fns never read flags.
  * Every training and evaluation batch has a fully static shape: XLA compiles one program for one shape, so a
    short last batch would not run. `batch(..., drop_remainder=True)` is what
    `tf.contrib.data.batch_and_drop_remainder` became.
  * Evaluation must not lose the remainder either: the split is padded with weight-0 rows up to a multiple of the
    global eval batch, so every batch is full and every real example counts exactly once (BERT's
    "is_real_example" technique, which the TF porting guide recommends).
  * Images leave the host as float32 and labels as int32 (data/records.py): TPUs take no uint8.
"""
import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.data import records

AUTOTUNE = tf.data.experimental.AUTOTUNE
SHUFFLE_BUFFER = 10000
# What a padding row holds; its weight of 0 is what keeps it out of every metric.
PADDING_LABEL = 0


def input_fn_builder(data_dir, split, is_training):
  """Returns input_fn(params) reading `<data_dir>/<split>.tfrecords`.

  Training shuffles and repeats forever (TPUEstimator stops at max_steps). Without training, the split is read
  once in order and a final partial batch is dropped; `eval_input_fn_builder` is the exact alternative.
  """
  path = records.split_path(data_dir, split)

  def input_fn(params):
    batch_size = params['batch_size']
    dataset = records.read_dataset(path)
    if is_training:
      # The serialized split is small (MNIST train: ~50 MB), so keep it in memory after the first epoch.
      dataset = dataset.cache().shuffle(SHUFFLE_BUFFER).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda serialized: _features_and_labels(serialized, batch_size, path),
                          num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn


def _features_and_labels(serialized, batch_size, path):
  images, labels = records.parse_batch(serialized, batch_size, path)
  return model.features_of(images), labels


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
    real = records.read_dataset(path).take(num_examples)
    real = real.map(lambda serialized: (serialized, tf.constant(1.0)))
    padding = tf.data.Dataset.from_tensors((tf.constant(padding_record), tf.constant(0.0))).repeat(num_padding)
    dataset = real.concatenate(padding).batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda serialized, weights: _with_weights(serialized, weights, batch_size, path),
                          num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn


def _with_weights(serialized, weights, batch_size, path):
  features, labels = _features_and_labels(serialized, batch_size, path)
  features[model.WEIGHT_KEY] = weights
  return features, labels


def predict_input_fn_builder(data_dir, split, num_examples):
  """Returns input_fn(params) with the first `num_examples` examples of the split (-1: all), read once.

  The last batch may be short: the dataset is finite, as TPUEstimator.predict requires, and on TPU TPUEstimator
  pads that batch to the static shape itself and drops the padded predictions.
  """
  path = records.split_path(data_dir, split)

  def input_fn(params):
    dataset = records.read_dataset(path).take(num_examples)
    dataset = dataset.batch(params['batch_size'])
    dataset = dataset.map(lambda serialized: _features_and_labels(serialized, -1, path)[0],
                          num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn
