"""Fixture for the port report (bound_method_input): an input object whose `input_fn` method TPUEstimator gets as a
bound method (`input_fn=train_input.input_fn`), defined in a base class, as Google's TPU ResNet does. Already a
TPUEstimator program: nothing is required. Runs under TensorFlow 1.15 and 2.15 (use_tpu=False on a CPU)."""
import numpy as np
import tensorflow.compat.v1 as tf


class BaseInput(object):
  """Batches of params['batch_size'], every dimension static."""

  def __init__(self, is_training):
    self.is_training = is_training

  def make_source(self):
    raise NotImplementedError

  def input_fn(self, params):
    dataset = self.make_source()
    if self.is_training:
      dataset = dataset.repeat()
    return dataset.batch(params['batch_size'], drop_remainder=True)


class RandomInput(BaseInput):

  def make_source(self):
    rng = np.random.RandomState(0)
    images = rng.uniform(size=(64, 16)).astype(np.float32)
    labels = rng.randint(0, 4, size=64).astype(np.int32)
    return tf.data.Dataset.from_tensor_slices((images, labels))
