"""An Estimator given params={'batch_size': ...}, which TPUEstimator refuses (ValueError): the port leaves it
a plain Estimator with TODOs, and changes nothing its CPU run depends on."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def input_fn(params):
  x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(params['batch_size'])


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], params['classes'])
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main():
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1], params={'batch_size': 8, 'classes': 2})
  est.train(input_fn, max_steps=2)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in est.evaluate(input_fn).items())))


if __name__ == '__main__':
  main()
