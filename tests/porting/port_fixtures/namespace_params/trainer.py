"""Fixture for the port report (namespace_params): the parsed command line (an argparse Namespace) handed to the
estimator as params. A plain Estimator passes it through; TPUEstimator tests `key in params` and stores its keys
with params[key] = value, which a Namespace does not support. Runs under TensorFlow 1.15 and 2.15.
"""
import argparse

import numpy as np
import tensorflow.compat.v1 as tf


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features, 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.AdamOptimizer(params.learning_rate).minimize(loss, tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(params):
  rng = np.random.RandomState(0)
  dataset = tf.data.Dataset.from_tensor_slices((rng.uniform(size=(32, 3)).astype(np.float32),
                                                rng.randint(0, 2, size=32).astype(np.int32)))
  return dataset.repeat().batch(params.train_batch_size, drop_remainder=True)


def main(argv=None):
  parser = argparse.ArgumentParser()
  parser.add_argument('--learning_rate', type=float, default=0.01)
  parser.add_argument('--train_batch_size', type=int, default=8)
  parser.add_argument('--train_steps', type=int, default=4)
  args = parser.parse_args(argv)
  estimator = tf.estimator.Estimator(model_fn, params=args)
  estimator.train(input_fn, max_steps=args.train_steps)


if __name__ == '__main__':
  main([])
