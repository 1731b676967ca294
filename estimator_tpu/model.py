"""The networks (--model) and what every route shares about them: feature keys, metric_fn, the learning-rate
schedule.

They live outside any model_fn so that the Estimator, TPUEstimator and Keras programs train the very same network
and report the same metrics; the architecture constants are public for the same reason (keras/model.py rebuilds
the CNN and the dense network from them; VGG16 is Keras' own application on every route). Every network takes
the shape and classes of the data it is given (data/spec.py), MNIST's by default.
"""
import contextlib
import functools
import inspect
import os

import numpy as np
import tensorflow.compat.v1 as tf
import tensorflow.compat.v2 as tf_v2

from estimator_tpu.data import records
from estimator_tpu.data import spec as data_spec
from estimator_tpu.runtime.errors import UserError

IMAGE_SIZE = records.IMAGE_SIZE
NUM_PIXELS = records.NUM_PIXELS
NUM_CLASSES = records.NUM_CLASSES
CONV_FILTERS = (32, 64)
CONV_KERNEL = 5
DENSE_UNITS = 1024
DROPOUT_RATE = 0.4
DENSE_HIDDEN_UNITS = 128  # the dense network: flatten -> dense 128 relu -> dense classes (Keras' first tutorial)
CNN, DENSE, VGG16 = 'cnn', 'dense', 'vgg16'  # --model
NETWORKS = (CNN, DENSE, VGG16)
VGG16_MIN_SIDE = 32  # Keras' VGG16 takes no smaller image (five 2x2 poolings)
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


def parse_records(serialized, batch_size, path, spec=data_spec.MNIST):
  """(features, labels) of a batch of serialized examples of `path` (data/records.py's parse_batch)."""
  images, labels = records.parse_batch(serialized, batch_size, path, spec)
  return features_of(images), labels


def example_weights(features):
  """{'weights': features[WEIGHT_KEY]} when the input weights its examples (exact evaluation), else {}."""
  return {'weights': features[WEIGHT_KEY]} if WEIGHT_KEY in features else {}


def padding_example(path=None):
  """A serialized example to pad an evaluation batch of the split at `path` (MNIST's without one) with: a black
  image of its shape, label 0; its weight 0 hides it."""
  spec = data_spec.read(os.path.dirname(path)) if path else data_spec.MNIST
  return records.serialize_example(np.zeros(spec.serving_shape, np.uint8), 0)


def padding_dataset(example, rows):
  """`rows` copies of the serialized `example` (padding_example()), each with its weight 0.0."""
  return tf.data.Dataset.from_tensors((tf.constant(example), tf.constant(0.0))).repeat(rows)


def parse_dataset(dataset, batch_size, path, weighted=False):
  """Batches of serialized examples of `path` -> (features, labels), parsed in parallel and prefetched.

  `batch_size` -1 leaves the batch dimension dynamic. `weighted`: the dataset's elements are (serialized,
  weights) and the weights become features[WEIGHT_KEY]. The shape and classes are those of the dataset.json
  beside `path`.
  """
  spec = data_spec.read(os.path.dirname(path))

  def parse(serialized, weights=None):
    features, labels = parse_records(serialized, batch_size, path, spec)
    if weighted:
      features[WEIGHT_KEY] = weights
    return features, labels

  return dataset.map(parse, num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE)


def network(name=CNN, spec=data_spec.MNIST):
  """The network `name` (NETWORKS) for images and classes of `spec`: a function (images, training,
  precision=FLOAT32) -> logits, as mnist_cnn. A network that cannot take these images is a UserError."""
  if name == VGG16 and min(spec.height, spec.width) < VGG16_MIN_SIDE:
    raise UserError('--model=vgg16 takes images of at least %dx%d pixels; %s.'
                    % (VGG16_MIN_SIDE, VGG16_MIN_SIDE, spec.describe()),
                    'use --model=cnn or --model=dense, or prepare the data at %d pixels or more '
                    '(tools.prepare_data --image_size for a folder of images).' % VGG16_MIN_SIDE)
  return functools.partial({CNN: mnist_cnn, DENSE: dense_network, VGG16: vgg16}[name], spec=spec)


def mnist_cnn(images, training, precision=FLOAT32, spec=data_spec.MNIST):
  """Returns float32 logits [batch, classes] for `images` float32 [batch, pixels] or [batch, height, width(,
  channels)], values 0..255; MNIST's 28x28x1 and 10 classes unless `spec` says otherwise.

  Conv 5x5x32 -> max-pool 2x2 -> conv 5x5x64 -> max-pool 2x2 -> dense 1024 -> dropout 0.4 -> dense 10.
  `training` switches dropout on. All shapes stay static when the batch dimension is static, which TPUs require.
  `precision` BFLOAT16 computes the network in bfloat16 under tf.tpu.bfloat16_scope(): its variables are created
  as float32 and read as bfloat16, so checkpoints and the optimizer stay float32, and the logits are cast back to
  float32 for the softmax and the loss.
  """
  return _in_precision(_cnn, images, training, precision, spec)


def dense_network(images, training, precision=FLOAT32, spec=data_spec.MNIST):
  """The small dense network of Keras' first tutorials: flatten -> dense 128 relu -> dense classes; as mnist_cnn
  otherwise (no dropout, so `training` changes nothing)."""
  return _in_precision(_dense, images, training, precision, spec)


def vgg16(images, training, precision=FLOAT32, spec=data_spec.MNIST):
  """Keras' VGG16 application (weights=None, input_shape and classes from `spec`), its softmax taken off so that
  it returns logits like the others; as mnist_cnn otherwise. Under TPUEstimator it is built inside model_fn, so it
  follows the TPU rules there as the CNN does (static shapes, CrossShardOptimizer, host_call, bfloat16)."""
  return _in_precision(_vgg16, images, training, precision, spec)


def _in_precision(build, images, training, precision, spec):
  if precision == BFLOAT16:
    # TPU rule 20 (bfloat16): the scope's custom getter makes every variable the layers ask for as bfloat16 a
    # float32 variable read through a cast (tensorflow/python/tpu/bfloat16.py); the layers take their dtype from
    # their input, so the pixels are cast first.
    with tf.tpu.bfloat16_scope():
      logits = build(images, training, tf.bfloat16, spec)
    return tf.cast(logits, tf.float32)
  return build(images, training, tf.float32, spec)


def _scaled_images(images, dtype, spec):
  net = tf.cast(tf.cast(images, tf.float32) * PIXEL_SCALE, dtype)
  return tf.reshape(net, [-1] + spec.image_shape)


def _dense(images, training, dtype, spec):
  del training  # no dropout
  net = tf.layers.flatten(_scaled_images(images, dtype, spec))
  net = tf.layers.dense(net, DENSE_HIDDEN_UNITS, activation=tf.nn.relu)
  return tf.layers.dense(net, spec.num_classes)


def _vgg16(images, training, dtype, spec):
  del training  # VGG16 has neither dropout nor batch normalisation
  # TPU rule 4 (static shapes): built on the input tensor itself (input_tensor=), not on a Keras Input: that
  # would be a placeholder of batch None inside the TPU computation, which XLA cannot compile.
  # Keras layers take no custom getter: bfloat16 comes from Keras' own mixed_bfloat16 policy (float32 variables,
  # bfloat16 computation), set while the layers are made.
  options = {'classifier_activation': None} if _takes('classifier_activation') else {}
  with _keras_policy('mixed_bfloat16' if dtype == tf.bfloat16 else None):
    application = tf.keras.applications.VGG16(weights=None, input_tensor=_scaled_images(images, dtype, spec),
                                              input_shape=tuple(spec.image_shape), classes=spec.num_classes,
                                              **options)
  output = application.output
  # TF 1.15's VGG16 always ends in a softmax; the loss wants what goes into it.
  return output.op.inputs[0] if output.op.type == 'Softmax' else output


def _takes(argument):
  return argument in inspect.signature(tf.keras.applications.VGG16).parameters


@contextlib.contextmanager
def _keras_policy(name):
  """Keras' global dtype policy `name` while the block makes layers. TF 2 only: TF 1.15's Keras refuses a global
  mixed policy outside TensorFlow 2 behaviour ("can only be set to a non-infer policy in TensorFlow 2")."""
  if name is None:
    yield
    return
  mixed = tf_v2.keras.mixed_precision
  if not hasattr(mixed, 'set_global_policy'):
    raise UserError('--model=vgg16 computes in bfloat16 through Keras\' mixed_bfloat16 policy, which TensorFlow %s '
                    'cannot set for a Keras application.' % tf.__version__,
                    'use --precision=float32 here, or TensorFlow 2.15 (the TPU VM route) for bfloat16.')
  previous = mixed.global_policy()
  mixed.set_global_policy(name)
  try:
    yield
  finally:
    mixed.set_global_policy(previous)


def _cnn(images, training, dtype, spec):
  net = _scaled_images(images, dtype, spec)
  for filters in CONV_FILTERS:
    net = tf.layers.conv2d(net, filters, CONV_KERNEL, padding='same', activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, pool_size=2, strides=2)
  net = tf.layers.flatten(net)
  net = tf.layers.dense(net, DENSE_UNITS, activation=tf.nn.relu)
  net = tf.layers.dropout(net, rate=DROPOUT_RATE, training=training)
  return tf.layers.dense(net, spec.num_classes)


def metric_fn(labels, logits, weights=None):
  """Accuracy and mean cross-entropy of [batch] int32 labels and [batch, classes] logits.

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
  """What PREDICT returns: class_ids [batch] int32 and probabilities [batch, classes]."""
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


def variable_shapes(model_fn, spec=data_spec.MNIST):
  """Returns {name: shape} of every variable a TRAIN graph of `model_fn` saves (weights, optimizer slots, step).

  `model_fn` is an Estimator's or TPUEstimator's (it gets params, on the CPU, if it takes them). What
  runtime/checkpoints.check_checkpoint compares a checkpoint in model_dir with, before a run.
  """
  takes_params = 'params' in inspect.getfullargspec(model_fn).args
  with tf.Graph().as_default():
    tf.train.create_global_step()
    features = features_of(tf.zeros([1, spec.num_pixels]))
    labels = tf.zeros([1], tf.int32)
    if takes_params:
      model_fn(features, labels, tf.estimator.ModeKeys.TRAIN, {'use_tpu': False, 'batch_size': 1})
    else:
      model_fn(features, labels, tf.estimator.ModeKeys.TRAIN)
    return {variable.op.name: variable.shape.as_list() for variable in tf.global_variables()}
