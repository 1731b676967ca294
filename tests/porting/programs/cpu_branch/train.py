"""A program already written for TPUEstimator that keeps a plain Estimator for its CPU branch (`use_tpu` false),
both fed by one input_fn whose CPU branch batches with the program's own batch size (a constant) and whose TPU
branch batches with params['batch_size']. Which the plain Estimator trains with cannot be traced, so the port leaves
it plain; the input_fn it shares must then stay as it is (a plain Estimator sets no params['batch_size']), and the
program runs as before."""
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
  return {'use_tpu': False}


BATCH = 8


def make_input_fn(options):
  def input_fn(params):
    x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.int32)
    dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
    if options['use_tpu']:
      return dataset.repeat().batch(params['batch_size'], drop_remainder=True)
    return dataset.repeat().batch(BATCH)
  return input_fn


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.train.GradientDescentOptimizer(0.1)
  if params.get('use_tpu'):
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, eval_metrics=(
      lambda labels, logits: {'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))}, [labels, logits]))


def main():
  options = settings()
  if options['use_tpu']:
    config = tf.estimator.tpu.RunConfig(model_dir=sys.argv[1])
    est = tf.estimator.tpu.TPUEstimator(model_fn, config=config, use_tpu=True, train_batch_size=BATCH,
                                        eval_batch_size=BATCH)
  else:
    est = tf.estimator.Estimator(lambda features, labels, mode, params: model_fn(
        features, labels, mode, params).as_estimator_spec(), model_dir=sys.argv[1], params={'use_tpu': False})
  est.train(make_input_fn(options), max_steps=2)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in est.evaluate(make_input_fn(options),
                                                                           steps=2).items())))


if __name__ == '__main__':
  main()
