"""The inference function alone: shapes, dtypes, parameter count, dropout switch, input scaling."""
import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from support.graphs import rates_at

# conv1 5*5*1*32+32, conv2 5*5*32*64+64, dense 3136*1024+1024, logits 1024*10+10
EXPECTED_PARAMETERS = 832 + 51264 + 3212288 + 10250


def build(batch, training, input_shape=(784,)):
  graph = tf.Graph()
  with graph.as_default():
    images = tf.placeholder(tf.float32, [batch] + list(input_shape))
    logits = model.mnist_cnn(images, training=training)
  return graph, images, logits


def test_logits_shape_and_dtype_are_static():
  graph, _, logits = build(16, training=True)
  assert logits.shape.as_list() == [16, 10]
  assert logits.dtype == tf.float32
  with graph.as_default():
    assert sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables()) == EXPECTED_PARAMETERS


def test_accepts_image_grids_as_well_as_flat_vectors():
  _, _, logits = build(4, training=False, input_shape=(28, 28))
  assert logits.shape.as_list() == [4, 10]


def test_dropout_only_in_training():
  for training, expect_deterministic in ((False, True), (True, False)):
    graph, images, logits = build(8, training=training)
    with graph.as_default(), tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      feed = {images: np.random.RandomState(0).uniform(0, 255, (8, 784))}
      first, second = sess.run(logits, feed), sess.run(logits, feed)
    assert np.allclose(first, second) == expect_deterministic


def test_pixels_are_scaled_inside_the_model():
  """Raw 0..255 input must give the same logits as the model applied to [0,1] input scaled back up."""
  graph, images, logits = build(2, training=False)
  with graph.as_default(), tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    first_conv_input = graph.get_tensor_by_name('Reshape:0')
    scaled = sess.run(first_conv_input, {images: np.full((2, 784), 255.0)})
  assert np.allclose(scaled, 1.0)


def test_cosine_schedule_falls_from_the_initial_rate_to_zero_and_stays_there():
  rates = rates_at([0, 500, 1000, 1500, 2000, 2500], 2e-3, 2000, None, model.COSINE)
  np.testing.assert_allclose(rates, [2e-3, 2e-3 * (1 + np.cos(np.pi / 4)) / 2, 1e-3,
                                     2e-3 * (1 - np.cos(np.pi / 4)) / 2, 0.0, 0.0], rtol=1e-5, atol=1e-12)


def test_exponential_schedule_decays_smoothly_by_the_rate_every_decay_steps():
  rates = rates_at([0, 500, 1000, 2000], 1e-3, 1000, 0.5, model.EXPONENTIAL)
  np.testing.assert_allclose(rates, [1e-3, 1e-3 * 0.5 ** 0.5, 5e-4, 2.5e-4], rtol=1e-5)
