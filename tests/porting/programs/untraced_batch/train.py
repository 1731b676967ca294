"""A batch size the reading cannot trace (it comes out of a settings file read at run time): a TPUEstimator built
without train_batch_size cannot train, even on the CPU (its step logging multiplies by the batch size: TypeError),
so the port leaves the estimator a plain Estimator with TODOs, and the program runs as before."""
import json
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def settings():
  path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'settings.json')
  if os.path.exists(path):
    with open(path) as f:
      return json.load(f)
  return {'batch': 8}


def input_fn():
  x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat().batch(settings()['batch'])


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main():
  # A run from scratch first, in a folder of its own (a smoke test of the input and the model), logging its step
  # rate every step: a TPUEstimator without train_batch_size cannot (examples/sec: None * steps/sec).
  check = tf.estimator.RunConfig(model_dir=sys.argv[1] + '_check', log_step_count_steps=1)
  tf.estimator.Estimator(model_fn, config=check).train(input_fn, max_steps=3)
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  est.train(input_fn, max_steps=2)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in est.evaluate(input_fn, steps=2).items())))


if __name__ == '__main__':
  main()
