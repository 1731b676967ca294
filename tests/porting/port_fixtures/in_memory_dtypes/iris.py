"""Fixture for the port report (in_memory_dtypes): in-memory data whose dtypes the TPU infeed refuses.

Features read with np.loadtxt, which reads float64 (pandas' read_csv does the same for decimal columns: the
custom_estimator fixture has that shape), and sliced into a Dataset in another function; labels made uint8 and fed
through numpy_input_fn, as the MNIST tutorials' read_data_sets labels are (TensorFlow 1.15's infeed refuses uint8).
A cast inside model_fn happens on the TPU, too late. Runs under TensorFlow 1.15 and 2.15, on CSV text written below.
"""
import io

import numpy as np
import tensorflow.compat.v1 as tf

NAMES = ['SepalLength', 'SepalWidth', 'PetalLength', 'PetalWidth']
CSV = """5.1,3.5,1.4,0.2,0
6.4,3.2,4.5,1.5,1
6.3,3.3,6.0,2.5,2
4.9,3.0,1.4,0.2,0
5.5,2.3,4.0,1.3,1
6.5,3.0,5.8,2.2,2
"""


def load_data():
  table = np.loadtxt(io.StringIO(CSV), delimiter=',')
  return table[:, :4], table[:, 4].astype(np.int32)


def train_input_fn(features, labels, batch_size):
  dataset = tf.data.Dataset.from_tensor_slices(({'flowers': features}, labels))
  return dataset.shuffle(10).repeat().batch(batch_size)


def model_fn(features, labels, mode):
  logits = tf.layers.dense(tf.cast(features['flowers'], tf.float32), 3)
  loss = tf.losses.sparse_softmax_cross_entropy(tf.cast(labels, tf.int32), logits)
  train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  train_x, train_y = load_data()
  classifier = tf.estimator.Estimator(model_fn)
  classifier.train(input_fn=lambda: train_input_fn(train_x, train_y, 3), steps=4)
  pixels = np.random.RandomState(0).uniform(size=(6, 4)).astype(np.float32)
  digits = np.arange(6, dtype=np.uint8) % 3
  input_fn = tf.estimator.inputs.numpy_input_fn(x={'flowers': pixels}, y=digits, batch_size=3, shuffle=False)
  classifier.train(input_fn, steps=2)


if __name__ == '__main__':
  main()
