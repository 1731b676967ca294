"""A model_fn that trains through minimize or apply_gradients on one optimizer, as params choose: the port wraps
that optimizer in CrossShardOptimizer once (twice would average the gradients twice over the cores)."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def input_fn(params):
  x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat().batch(8)


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.train.GradientDescentOptimizer(0.1)
  if params['clip']:
    gradients = [(tf.clip_by_norm(g, 1.0), v) for g, v in optimizer.compute_gradients(loss)]
    train_op = optimizer.apply_gradients(gradients, global_step=tf.train.get_global_step())
  else:
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1], params={'clip': True})
  est.train(input_fn, max_steps=2)
  print('RESULT ' + json.dumps({'step': int(est.get_variable_value('global_step'))}))


if __name__ == '__main__':
  main()
