"""A graph-level lever for stock TensorFlow 1.15.5 on CPU: the same layers, with gradients it computes faster.

What a traced training step shows on TF 1.15.5 (bench/levers.py, README "Benchmarks"): the forward convolutions
and matmuls reach about 200 GFLOP/s on 2 cores, but Conv2DBackpropFilter/Conv2DBackpropInput reach about 85, and
a MatMul with transpose_b=True of the dense layer's input-gradient shape about 35. The same arithmetic in a
different arrangement runs on the fast kernels:
  * input gradient of a 'same', stride-1 convolution = a forward 'same' convolution of the output gradient with
    the kernel flipped in space and its in/out channels swapped;
  * kernel gradient = a forward 'valid' convolution in which the batch plays the channel role: the padded input
    as [in_channels, H + k - 1, W + k - 1, batch] convolved with the output gradient as a [H, W, batch, out] filter
    gives [in, k, k, out];
  * dense input gradient = (W . dy^T)^T, which avoids the slow transpose_b shape.
The layers create the variables tf.layers.conv2d/dense create (same names, shapes, initialisers), so checkpoints
move freely between them. `mnist_cnn` is the project's network built with them: inside `rearranged_layers()`,
tf.layers.conv2d/dense are this module's, so model.mnist_cnn, which looks them up when it runs, builds the variant
without the network carrying any benchmark parameter. This is a CPU experiment only: on a TPU, XLA compiles the convolution gradients itself,
and TF 2.15's oneDNN kernels make it unnecessary there (tests/test_cpu_gradients.py checks the gradients agree).
"""
import contextlib

import tensorflow.compat.v1 as tf

from estimator_tpu import model


@tf.custom_gradient
def conv2d_same(inputs, kernel):
  """Stride-1 'same' convolution (odd kernel) whose gradients are forward convolutions."""
  outputs = tf.nn.conv2d(inputs, kernel, [1, 1, 1, 1], 'SAME')

  def grad(output_grad):
    flipped = tf.transpose(tf.reverse(kernel, [0, 1]), [0, 1, 3, 2])
    input_grad = tf.nn.conv2d(output_grad, flipped, [1, 1, 1, 1], 'SAME')
    pad = int(kernel.shape[0]) // 2
    padded = tf.pad(inputs, [[0, 0], [pad, pad], [pad, pad], [0, 0]])
    batch_as_channels = tf.transpose(padded, [3, 1, 2, 0])
    grad_as_filter = tf.transpose(output_grad, [1, 2, 0, 3])
    kernel_grad = tf.nn.conv2d(batch_as_channels, grad_as_filter, [1, 1, 1, 1], 'VALID')
    return input_grad, tf.transpose(kernel_grad, [1, 2, 0, 3])

  return outputs, grad


@tf.custom_gradient
def matmul(inputs, kernel):
  """inputs . kernel, with the input gradient computed as (kernel . dy^T)^T."""

  def grad(output_grad):
    input_grad = tf.transpose(tf.matmul(kernel, output_grad, transpose_b=True))
    return input_grad, tf.matmul(inputs, output_grad, transpose_a=True)

  return tf.matmul(inputs, kernel), grad


def _activate(outputs, activation):
  return activation(outputs) if activation else outputs


def conv2d(inputs, filters, kernel_size, padding='same', activation=None):
  """tf.layers.conv2d for stride 1, 'same' padding, a square odd kernel and NHWC input."""
  if padding != 'same' or kernel_size % 2 != 1:
    raise ValueError('this conv2d implements stride-1 "same" convolutions with odd kernels only')
  with tf.variable_scope(None, default_name='conv2d'):
    channels = inputs.shape.as_list()[-1]
    kernel = tf.get_variable('kernel', [kernel_size, kernel_size, channels, filters],
                             initializer=tf.glorot_uniform_initializer())
    bias = tf.get_variable('bias', [filters], initializer=tf.zeros_initializer())
    return _activate(tf.nn.bias_add(conv2d_same(inputs, kernel), bias), activation)


def dense(inputs, units, activation=None):
  """tf.layers.dense for 2-D inputs."""
  with tf.variable_scope(None, default_name='dense'):
    kernel = tf.get_variable('kernel', [inputs.shape.as_list()[-1], units],
                             initializer=tf.glorot_uniform_initializer())
    bias = tf.get_variable('bias', [units], initializer=tf.zeros_initializer())
    return _activate(tf.nn.bias_add(matmul(inputs, kernel), bias), activation)


@contextlib.contextmanager
def rearranged_layers():
  """Within it, graph code that calls tf.layers.conv2d/dense (model.mnist_cnn, any model_fn using it) gets
  this module's layers."""
  usual = tf.layers.conv2d, tf.layers.dense
  tf.layers.conv2d, tf.layers.dense = conv2d, dense
  try:
    yield
  finally:
    tf.layers.conv2d, tf.layers.dense = usual


def mnist_cnn(images, training):
  """model.mnist_cnn with the rearranged gradients: the same variables, the same logits."""
  with rearranged_layers():
    return model.mnist_cnn(images, training)
