"""bench/cpu_gradients.py, the TF 1.15 CPU lever: its rearranged gradients must equal TensorFlow's own, and its
layers must create exactly the variables of the layers they replace (so the network is the same network)."""
import functools

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from bench import cpu_gradients
from estimator_tpu import model


def gradients_of_both(build_ours, build_reference, *shapes):
  """Gradients of sum(output * weights) w.r.t. every input, through our op and TensorFlow's, on random data."""
  rng = np.random.RandomState(0)
  values = [rng.uniform(-1, 1, shape).astype(np.float32) for shape in shapes]
  with tf.Graph().as_default(), tf.Session() as sess:
    inputs = [tf.constant(v) for v in values]
    ours, reference = build_ours(*inputs), build_reference(*inputs)
    weights = tf.constant(rng.uniform(-1, 1, ours.shape.as_list()).astype(np.float32))
    results = sess.run([ours, reference, tf.gradients(tf.reduce_sum(ours * weights), inputs),
                        tf.gradients(tf.reduce_sum(reference * weights), inputs)])
  return results


@pytest.mark.parametrize('input_shape, kernel_shape', [
    ((3, 28, 28, 1), (5, 5, 1, 32)),   # the first convolution of mnist_cnn
    ((3, 14, 14, 32), (5, 5, 32, 64)),  # the second
    ((2, 7, 9, 3), (3, 3, 3, 4)),       # not square, another kernel size
])
def test_convolution_gradients_equal_tensorflows(input_shape, kernel_shape):
  reference = functools.partial(tf.nn.conv2d, strides=[1, 1, 1, 1], padding='SAME')
  ours, theirs, our_grads, their_grads = gradients_of_both(cpu_gradients.conv2d_same, reference, input_shape,
                                                           kernel_shape)
  np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
  for mine, expected in zip(our_grads, their_grads):
    assert mine.shape == expected.shape
    np.testing.assert_allclose(mine, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_matmul_gradients_equal_tensorflows():
  ours, theirs, our_grads, their_grads = gradients_of_both(cpu_gradients.matmul, tf.matmul, (8, 50), (50, 30))
  np.testing.assert_allclose(ours, theirs, rtol=1e-5)
  for mine, expected in zip(our_grads, their_grads):
    np.testing.assert_allclose(mine, expected, rtol=1e-4, atol=1e-5)


def variables_of(network):
  with tf.Graph().as_default():
    network(tf.zeros([2, model.NUM_PIXELS]), training=True)
    return [(v.name, v.shape.as_list()) for v in tf.global_variables()]


def test_lever_network_has_the_variables_of_mnist_cnn():
  assert variables_of(cpu_gradients.mnist_cnn) == variables_of(model.mnist_cnn)


def test_lever_network_computes_the_same_logits_from_the_same_weights():
  images = np.random.RandomState(1).uniform(0, 255, (4, model.NUM_PIXELS)).astype(np.float32)
  with tf.Graph().as_default(), tf.Session() as sess:
    with tf.variable_scope('reference'):
      expected = model.mnist_cnn(tf.constant(images), training=False)
    with tf.variable_scope('lever'):
      lever = cpu_gradients.mnist_cnn(tf.constant(images), training=False)
    sess.run(tf.global_variables_initializer())
    sess.run([b.assign(a) for a, b in zip(tf.global_variables('reference'), tf.global_variables('lever'))])
    np.testing.assert_allclose(*sess.run([lever, expected]), rtol=1e-4, atol=1e-4)


def test_conv2d_refuses_what_it_does_not_implement():
  with tf.Graph().as_default():
    with pytest.raises(ValueError, match='odd kernels'):
      cpu_gradients.conv2d(tf.zeros([1, 8, 8, 1]), 4, 4)
