"""The networks of model.py (--model) as Keras models, for mnist_keras.py (TF 2.x, TPUStrategy or
the default strategy).

TPU rule 10 (Keras layers): why not reuse model.mnist_cnn itself? It is a graph-mode function built
from `tf.compat.v1.layers`, which make new variables on every call through `tf.get_variable`. Keras
only trains, saves and distributes variables that its layers track; wrapped in a `Lambda` layer,
those variables would be invisible to Keras (TF 2.x Keras refuses such a Lambda outright: "created
within a Lambda layer ... but are not tracked"), and under TPUStrategy every variable must be
created by a tracked layer inside `strategy.scope()` so that it is replicated onto the TPU cores. So
the same architecture is rebuilt here from model.py's constants;
tests/lesson/test_migration_keras.py checks that both have the same variables, shape by shape. The
dense network is rebuilt the same way; VGG16 is Keras' own application on every route.

TF 2.x only (Rescaling, the new Keras optimizers, steps_per_execution); mnist_keras.py checks the
version first.
"""
import tensorflow as tf

from estimator_tpu import model
from estimator_tpu.data import spec as data_spec
from estimator_tpu.model import IMAGE_KEY

# tf.train.AdamOptimizer's epsilon (Keras defaults to 1e-7), so all three programs run the same
# optimiser.
ADAM_EPSILON = 1e-8


def build_keras_network(name=model.CNN, spec=data_spec.MNIST, precision=model.FLOAT32):
  """Returns --model `name` as a functional Keras model: {'image': float32 [batch, pixels] in
  0..255} -> logits [batch, classes], float32, for the images and classes of `spec`.

  The input is named like the input_fn's feature (model_fn.IMAGE_KEY), so the TPUEstimator datasets
  feed it as they are. `precision` model.BFLOAT16 gives every layer but the last Keras'
  'mixed_bfloat16' policy: float32 variables, bfloat16 computation.
  """
  model.network(name, spec)  # the same refusal as the Estimator routes' (VGG16 on small images)
  # TPU rule 20 (bfloat16): the policy per layer, not set_global_policy, so nothing else changes;
  # the output layer stays float32, so the logits (and the loss) are float32.
  policy = 'mixed_bfloat16' if precision == model.BFLOAT16 else None
  images = tf.keras.Input(shape=(spec.num_pixels,), name=IMAGE_KEY)
  net = tf.keras.layers.Rescaling(model.PIXEL_SCALE)(images)  # in float32, as model.mnist_cnn
  net = tf.keras.layers.Reshape(tuple(spec.image_shape), dtype=policy)(net)
  if name == model.VGG16:
    logits = _vgg16(net, spec, policy)
  else:
    logits = {model.CNN: _cnn, model.DENSE: _dense}[name](net, spec, policy)
  keras_name = 'mnist_cnn' if name == model.CNN else name
  return tf.keras.Model(inputs=images, outputs=logits, name=keras_name)


def build_keras_cnn(precision=model.FLOAT32):
  """The CNN on MNIST: build_keras_network's default."""
  return build_keras_network(model.CNN, data_spec.MNIST, precision)


def _cnn(net, spec, policy):
  for filters in model.CONV_FILTERS:
    net = tf.keras.layers.Conv2D(filters, model.CONV_KERNEL, padding='same', activation='relu',
                                 dtype=policy)(net)
    net = tf.keras.layers.MaxPooling2D(pool_size=2, strides=2, dtype=policy)(net)
  net = tf.keras.layers.Flatten(dtype=policy)(net)
  net = tf.keras.layers.Dense(model.DENSE_UNITS, activation='relu', dtype=policy)(net)
  net = tf.keras.layers.Dropout(model.DROPOUT_RATE, dtype=policy)(net)
  return tf.keras.layers.Dense(spec.num_classes, dtype='float32')(net)


def _dense(net, spec, policy):
  net = tf.keras.layers.Flatten(dtype=policy)(net)
  net = tf.keras.layers.Dense(model.DENSE_HIDDEN_UNITS, activation='relu', dtype=policy)(net)
  return tf.keras.layers.Dense(spec.num_classes, dtype='float32')(net)


def _vgg16(net, spec, policy):
  """Keras' VGG16 as model.vgg16 builds it, its softmax taken off; under bfloat16 its layers are
  made with the mixed_bfloat16 policy (it takes no dtype) and the logits cast to float32."""
  previous = tf.keras.mixed_precision.global_policy()
  tf.keras.mixed_precision.set_global_policy(policy or previous)
  try:
    application = tf.keras.applications.VGG16(weights=None, input_shape=tuple(spec.image_shape),
                                              classes=spec.num_classes, classifier_activation=None)
  finally:
    tf.keras.mixed_precision.set_global_policy(previous)
  return tf.keras.layers.Activation('linear', dtype='float32')(application(net))


def compile_model(keras_model, learning_rate, decay_steps, decay_rate, steps_per_execution,
                  schedule=model.EXPONENTIAL):
  """Compiles with tpu/model_fn.py's loss, metric and optimiser; call it inside strategy.scope().

  `steps_per_execution` is TPUConfig.iterations_per_loop's TF2 counterpart: that many steps run on
  the device per call from the host, and callbacks (checkpoints, TensorBoard) only see the
  boundaries between calls.
  """
  rate = learning_rate_schedule(learning_rate, decay_steps, decay_rate, schedule)
  keras_model.compile(
      optimizer=tf.keras.optimizers.Adam(rate, epsilon=ADAM_EPSILON),
      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
      # metric_fn's 'accuracy' and 'mean_loss'. As weighted metrics they honour the sample weights
      # of the exact evaluation input (padding rows weigh 0); Keras' own 'loss' would divide by the
      # padded batch instead.
      weighted_metrics=[
          tf.keras.metrics.SparseCategoricalAccuracy(name='accuracy'),
          tf.keras.metrics.SparseCategoricalCrossentropy(from_logits=True, name='mean_loss')],
      steps_per_execution=steps_per_execution)


def learning_rate_schedule(learning_rate, decay_steps, decay_rate, schedule):
  """The curves of model.learning_rate_schedule (tf.compat.v1.train.cosine_decay /
  exponential_decay, not staircase) as Keras schedules, driven by the optimiser's step counter
  instead of the global step."""
  if schedule == model.COSINE:
    return tf.keras.optimizers.schedules.CosineDecay(learning_rate, decay_steps)
  return tf.keras.optimizers.schedules.ExponentialDecay(learning_rate, decay_steps, decay_rate)
