"""Fixture for the port report (logging_hooks): session hooks that fetch tensors model_fn makes, which a TPU cannot
serve (the tensors live inside the TPU computation, where nothing can be fetched).

The shapes of the official models and tutorials: training_hooks=[LoggingTensorHook({'loss': loss, ...})] in the
EstimatorSpec; model_fn naming tensors with tf.identity(..., name=...) only so that hooks built elsewhere (hooks.py,
a helper module: see test_port.py for the scan without it) fetch them by name; a hook maker given the names of
tensors to log; and host-side hooks (StopAtStepHook), which are fine. Runs under TensorFlow 1.15 and 2.15.
"""
import numpy as np
import tensorflow.compat.v1 as tf

import hooks as hooks_lib


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 3)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  learning_rate = tf.train.exponential_decay(params['learning_rate'], tf.train.get_or_create_global_step(), 10, 0.9)
  tf.identity(learning_rate, name='learning_rate')
  tf.identity(loss, name='cross_entropy')
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss)
  train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss, tf.train.get_global_step())
  logging_hook = tf.train.LoggingTensorHook({'loss': loss, 'learning_rate': learning_rate}, every_n_iter=2)
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[logging_hook])


def input_fn():
  rng = np.random.RandomState(0)
  features = {'x': rng.uniform(size=(32, 4)).astype(np.float32)}
  labels = rng.randint(0, 3, size=32).astype(np.int32)
  return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(8, drop_remainder=True)


def main():
  estimator = tf.estimator.Estimator(model_fn, params={'learning_rate': 0.1})
  train_hooks = hooks_lib.get_train_hooks(['LoggingTensorHook'])
  estimator.train(input_fn, hooks=train_hooks, max_steps=4)
  estimator.train(input_fn, hooks=[tf.train.StopAtStepHook(last_step=6)])
  estimator.train(input_fn, hooks=hooks_lib.logging_hooks(tensors_to_log={'loss': 'cross_entropy'}), max_steps=8)
  print(estimator.evaluate(input_fn, steps=2))


if __name__ == '__main__':
  main()
