"""An estimator the port must leave plain (its training batch size comes from a settings file read at run time,
which cannot be traced) and a second Estimator that only exports, both running one model_fn: porting that model_fn
(a TPUEstimatorSpec) would break both, since a plain Estimator refuses a TPUEstimatorSpec ("model_fn should return
an EstimatorSpec"), so the port leaves the model_fn, and both estimators, as they are (the held-out-3 autoencoder's
shape)."""
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
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'classes': tf.argmax(logits, 1)})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def serving_input_fn():
  x = tf.placeholder(tf.float32, [None, 4], name='x')
  return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})


def export(model_dir):
  exporter = tf.estimator.Estimator(model_fn, model_dir=model_dir)
  return exporter.export_saved_model(os.path.join(model_dir, 'export'), serving_input_fn)


def main():
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  est.train(input_fn, max_steps=2)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in est.evaluate(input_fn, steps=2).items())))
  print('RESULT ' + json.dumps({'exported': bool(export(sys.argv[1]))}))


if __name__ == '__main__':
  main()
