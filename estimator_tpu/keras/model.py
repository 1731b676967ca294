"""The mnist_cnn network as a Keras model, for mnist_keras.py (TF 2.x, TPUStrategy or the default
strategy).

TPU rule 10 (Keras layers): why not reuse model.mnist_cnn itself? It is a graph-mode function built
from `tf.compat.v1.layers`, which make new variables on every call through `tf.get_variable`. Keras
only trains, saves and distributes variables that its layers track; wrapped in a `Lambda` layer,
those variables would be invisible to Keras (TF 2.x Keras refuses such a Lambda outright: "created
within a Lambda layer ... but are not tracked"), and under TPUStrategy every variable must be
created by a tracked layer inside `strategy.scope()` so that it is replicated onto the TPU cores. So
the same architecture is rebuilt here from model.py's constants;
tests/lesson/test_migration_keras.py checks that both have the same variables, shape by shape.

TF 2.x only (Rescaling, the new Keras optimizers, steps_per_execution); mnist_keras.py checks the
version first.
"""
import tensorflow as tf

from estimator_tpu import model
from estimator_tpu.model import IMAGE_KEY

# tf.train.AdamOptimizer's epsilon (Keras defaults to 1e-7), so all three programs run the same
# optimiser.
ADAM_EPSILON = 1e-8


def build_keras_cnn(precision=model.FLOAT32):
  """Returns a functional Keras model: {'image': float32 [batch, 784] in 0..255} -> logits [batch,
  10], float32.

  The input is named like the input_fn's feature (model_fn.IMAGE_KEY), so the TPUEstimator datasets
  feed it as they are. `precision` model.BFLOAT16 gives every layer but the last Keras'
  'mixed_bfloat16' policy: float32 variables, bfloat16 computation.
  """
  # TPU rule 20 (bfloat16): the policy per layer, not set_global_policy, so nothing else changes;
  # the output layer stays float32, so the logits (and the loss) are float32.
  policy = 'mixed_bfloat16' if precision == model.BFLOAT16 else None
  images = tf.keras.Input(shape=(model.NUM_PIXELS,), name=IMAGE_KEY)
  net = tf.keras.layers.Rescaling(model.PIXEL_SCALE)(images)  # in float32, as model.mnist_cnn
  net = tf.keras.layers.Reshape((model.IMAGE_SIZE, model.IMAGE_SIZE, 1), dtype=policy)(net)
  for filters in model.CONV_FILTERS:
    net = tf.keras.layers.Conv2D(filters, model.CONV_KERNEL, padding='same', activation='relu',
                                 dtype=policy)(net)
    net = tf.keras.layers.MaxPooling2D(pool_size=2, strides=2, dtype=policy)(net)
  net = tf.keras.layers.Flatten(dtype=policy)(net)
  net = tf.keras.layers.Dense(model.DENSE_UNITS, activation='relu', dtype=policy)(net)
  net = tf.keras.layers.Dropout(model.DROPOUT_RATE, dtype=policy)(net)
  logits = tf.keras.layers.Dense(model.NUM_CLASSES, dtype='float32')(net)
  return tf.keras.Model(inputs=images, outputs=logits, name='mnist_cnn')


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
