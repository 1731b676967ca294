"""Estimators wrapped by `add_metrics` (a plain Estimator around the model_fn, which passes no params of its own):
the port leaves them plain with a TODO at each wrapper. A TPUEstimator inside the wrapper would train without its
batch sizes (the port cannot trace them through the wrapper; its step logging then multiplies None) or read a
params['batch_size'] the wrapper never passes."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def input_fn(params):
  del params  # the wrapper's Estimator passes no params of its own
  x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat().batch(8)


def eval_input_fn():
  x = np.random.RandomState(1).rand(32, 4).astype(np.float32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, (x[:, 0] > 0.5).astype(np.int32))).batch(8)


def model_fn(features, labels, mode):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, predictions={'logits': logits})


def mean_logit(labels, predictions):
  del labels
  return {'mean_logit': tf.metrics.mean(predictions['logits'])}


def main():
  # A short run from scratch in a folder of its own, logging its step rate every step: a TPUEstimator without
  # train_batch_size cannot (examples/sec: None * steps/sec).
  check = tf.estimator.RunConfig(model_dir=sys.argv[1] + '_check', log_step_count_steps=1)
  tf.estimator.add_metrics(tf.estimator.Estimator(model_fn, config=check), mean_logit).train(input_fn, max_steps=3)
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  est = tf.estimator.add_metrics(est, mean_logit)
  est.train(input_fn, max_steps=2)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in est.evaluate(eval_input_fn).items())))


if __name__ == '__main__':
  main()
