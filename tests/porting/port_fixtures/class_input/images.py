"""Fixture for the port report (class_input): the input pipeline lives in a method of a dataset class, which the
input_fn instantiates; the batch size reaches it through functools.partial from the hyperparameters, not from
params['batch_size'], and the method batches without drop_remainder (cifar10_estimator's shape).

The dataset class; train.py drives it. Runs under TensorFlow 1.15 and 2.15, on random images made below.
"""
import numpy as np
import tensorflow.compat.v1 as tf

HEIGHT, WIDTH, DEPTH = 8, 8, 3


class ImageDataSet(object):
  """Random labelled images, repeated forever."""

  def __init__(self, subset, seed=0):
    self.subset = subset
    rng = np.random.RandomState(seed)
    self.images = rng.uniform(0, 255, size=(40, HEIGHT, WIDTH, DEPTH)).astype(np.float32)
    self.labels = rng.randint(0, 10, size=40).astype(np.int32)

  def preprocess(self, image, label):
    return tf.image.per_image_standardization(image), label

  def make_batch(self, batch_size):
    dataset = tf.data.Dataset.from_tensor_slices((self.images, self.labels)).repeat()
    dataset = dataset.map(self.preprocess)
    if self.subset == 'train':
      dataset = dataset.shuffle(buffer_size=3 * batch_size)
    return dataset.batch(batch_size)
