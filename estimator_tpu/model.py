"""The mnist_tpu CNN: the inference function shared by every mode, by mnist.py and by the Keras version.

It lives outside any model_fn so that the Estimator, TPUEstimator and Keras programs train the very same network;
the architecture constants are public for the same reason.
"""
import tensorflow.compat.v1 as tf

IMAGE_SIZE = 28
NUM_PIXELS = IMAGE_SIZE * IMAGE_SIZE
NUM_CLASSES = 10
CONV_FILTERS = (32, 64)
CONV_KERNEL = 5
DENSE_UNITS = 1024
DROPOUT_RATE = 0.4
# Pixels arrive as float32 in [0, 255] (the uint8 -> float cast happens on the host, because TPUs have no uint8);
# the network scales them itself so every caller (input_fn, serving signature, Keras) feeds the same raw values.
PIXEL_SCALE = 1.0 / 255.0


def mnist_cnn(images, training, conv2d=tf.layers.conv2d, dense=tf.layers.dense):
  """Returns logits [batch, 10] for `images` float32 [batch, 784] or [batch, 28, 28(, 1)] with values 0..255.

  Conv 5x5x32 -> max-pool 2x2 -> conv 5x5x64 -> max-pool 2x2 -> dense 1024 -> dropout 0.4 -> dense 10.
  `training` switches dropout on. All shapes stay static when the batch dimension is static, which TPUs require.
  `conv2d`/`dense` may be replaced by layer functions with the same arguments and variables (the benchmark's
  CPU lever, bench/cpu_gradients.py, swaps in other gradient arrangements); the defaults are what everything runs.
  """
  net = tf.reshape(tf.cast(images, tf.float32) * PIXEL_SCALE, [-1, IMAGE_SIZE, IMAGE_SIZE, 1])
  for filters in CONV_FILTERS:
    net = conv2d(net, filters, CONV_KERNEL, padding='same', activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, pool_size=2, strides=2)
  net = tf.layers.flatten(net)
  net = dense(net, DENSE_UNITS, activation=tf.nn.relu)
  net = tf.layers.dropout(net, rate=DROPOUT_RATE, training=training)
  return dense(net, NUM_CLASSES)
