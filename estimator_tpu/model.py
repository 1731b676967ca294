"""The mnist_tpu CNN and what every route shares about it: feature keys, metric_fn, the learning-rate schedule.

It lives outside any model_fn so that the Estimator, TPUEstimator and Keras programs train the very same network
and report the same metrics; the architecture constants are public for the same reason (keras/model.py rebuilds
the network from them).
"""
import inspect

import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu.data import records

IMAGE_SIZE = records.IMAGE_SIZE
NUM_PIXELS = records.NUM_PIXELS
NUM_CLASSES = records.NUM_CLASSES
CONV_FILTERS = (32, 64)
CONV_KERNEL = 5
DENSE_UNITS = 1024
DROPOUT_RATE = 0.4
# Pixels arrive as float32 in [0, 255] (the uint8 -> float cast happens on the host, because TPUs have no uint8);
# the network scales them itself so every caller (input_fn, serving signature, Keras) feeds the same raw values.
PIXEL_SCALE = 1.0 / 255.0

AUTOTUNE = tf.data.experimental.AUTOTUNE
FLOAT32, BFLOAT16 = 'float32', 'bfloat16'  # what the network computes in (--precision)
PRECISIONS = (FLOAT32, BFLOAT16)
COSINE, EXPONENTIAL = 'cosine', 'exponential'  # learning-rate schedules (learning_rate_schedule)
IMAGE_KEY = 'image'
# Per-example weight feature: 1.0 for real examples, 0.0 for padding rows added to fill the last static batch.
WEIGHT_KEY = 'weight'


def features_of(images):
  """The features dict every model_fn reads: {IMAGE_KEY: images}."""
  return {IMAGE_KEY: images}


def parse_records(serialized, batch_size, path):
  """(features, labels) of a batch of serialized examples of `path` (data/records.py's parse_batch)."""
  images, labels = records.parse_batch(serialized, batch_size, path)
  return features_of(images), labels


def example_weights(features):
  """{'weights': features[WEIGHT_KEY]} when the input weights its examples (exact evaluation), else {}."""
  return {'weights': features[WEIGHT_KEY]} if WEIGHT_KEY in features else {}


def padding_example():
  """A serialized example to pad an evaluation batch with: a black image, label 0; its weight 0 hides it."""
  return records.serialize_example(np.zeros((IMAGE_SIZE, IMAGE_SIZE), np.uint8), 0)


def padding_dataset(example, rows):
  """`rows` copies of the serialized `example` (padding_example()), each with its weight 0.0."""
  return tf.data.Dataset.from_tensors((tf.constant(example), tf.constant(0.0))).repeat(rows)


def parse_dataset(dataset, batch_size, path, weighted=False):
  """Batches of serialized examples of `path` -> (features, labels), parsed in parallel and prefetched.

  `batch_size` -1 leaves the batch dimension dynamic. `weighted`: the dataset's elements are (serialized,
  weights) and the weights become features[WEIGHT_KEY].
  """
  def parse(serialized, weights=None):
    features, labels = parse_records(serialized, batch_size, path)
    if weighted:
      features[WEIGHT_KEY] = weights
    return features, labels

  return dataset.map(parse, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)


def mnist_cnn(images, training, precision=FLOAT32):
  """Returns float32 logits [batch, 10] for `images` float32 [batch, 784] or [batch, 28, 28(, 1)], values 0..255.

  Conv 5x5x32 -> max-pool 2x2 -> conv 5x5x64 -> max-pool 2x2 -> dense 1024 -> dropout 0.4 -> dense 10.
  `training` switches dropout on. All shapes stay static when the batch dimension is static, which TPUs require.
  `precision` BFLOAT16 computes the network in bfloat16 under tf.tpu.bfloat16_scope(): its variables are created
  as float32 and read as bfloat16, so checkpoints and the optimizer stay float32, and the logits are cast back to
  float32 for the softmax and the loss.
  """
  if precision == BFLOAT16:
    # TPU rule 20 (bfloat16): the scope's custom getter makes every variable the layers ask for as bfloat16 a
    # float32 variable read through a cast (tensorflow/python/tpu/bfloat16.py); the layers take their dtype from
    # their input, so the pixels are cast first.
    with tf.tpu.bfloat16_scope():
      logits = _cnn(images, training, tf.bfloat16)
    return tf.cast(logits, tf.float32)
  return _cnn(images, training, tf.float32)


def _cnn(images, training, dtype):
  net = tf.cast(tf.cast(images, tf.float32) * PIXEL_SCALE, dtype)
  net = tf.reshape(net, [-1, IMAGE_SIZE, IMAGE_SIZE, 1])
  for filters in CONV_FILTERS:
    net = tf.layers.conv2d(net, filters, CONV_KERNEL, padding='same', activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, pool_size=2, strides=2)
  net = tf.layers.flatten(net)
  net = tf.layers.dense(net, DENSE_UNITS, activation=tf.nn.relu)
  net = tf.layers.dropout(net, rate=DROPOUT_RATE, training=training)
  return tf.layers.dense(net, NUM_CLASSES)


def metric_fn(labels, logits, weights=None):
  """Accuracy and mean cross-entropy of [batch] int32 labels and [batch, 10] logits.

  The Estimator route builds these metric ops inside model_fn; TPUEstimator calls metric_fn on the host CPU
  (TPUEstimatorSpec.eval_metrics). `weights` (optional, [batch] float) lets padded rows count zero, so evaluation
  over a padded split is exact.
  """
  predictions = tf.argmax(logits, axis=1, output_type=tf.int32)
  per_example_loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
  return {
      'accuracy': tf.metrics.accuracy(labels=labels, predictions=predictions, weights=weights),
      # 'loss' is taken: Estimator reports the mean of the per-batch losses under that name.
      'mean_loss': tf.metrics.mean(per_example_loss, weights=weights),
  }


def predictions(logits):
  """What PREDICT returns: class_ids [batch] int32 and probabilities [batch, 10]."""
  return {
      'class_ids': tf.argmax(logits, axis=1, output_type=tf.int32),
      'probabilities': tf.nn.softmax(logits),
  }


def learning_rate_schedule(initial_rate, decay_steps, decay_rate, schedule=EXPONENTIAL):
  """The learning rate at the global step.

  COSINE: from `initial_rate` down to 0 at step `decay_steps` along half a cosine, 0 after that (`decay_rate` is
  unused). EXPONENTIAL: `initial_rate * decay_rate ** (step / decay_steps)`, smoothly (no staircase).
  """
  step = tf.train.get_global_step()
  if schedule == COSINE:
    return tf.train.cosine_decay(initial_rate, step, decay_steps)
  return tf.train.exponential_decay(initial_rate, step, decay_steps=decay_steps, decay_rate=decay_rate)


def variable_shapes(model_fn):
  """Returns {name: shape} of every variable a TRAIN graph of `model_fn` saves (weights, optimizer slots, step).

  `model_fn` is an Estimator's or TPUEstimator's (it gets params, on the CPU, if it takes them). What
  runtime/checkpoints.check_checkpoint compares a checkpoint in model_dir with, before a run.
  """
  takes_params = 'params' in inspect.getfullargspec(model_fn).args
  with tf.Graph().as_default():
    tf.train.create_global_step()
    features = features_of(tf.zeros([1, NUM_PIXELS]))
    labels = tf.zeros([1], tf.int32)
    if takes_params:
      model_fn(features, labels, tf.estimator.ModeKeys.TRAIN, {'use_tpu': False, 'batch_size': 1})
    else:
      model_fn(features, labels, tf.estimator.ModeKeys.TRAIN)
    return {variable.op.name: variable.shape.as_list() for variable in tf.global_variables()}
