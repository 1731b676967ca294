"""An input_fn builder whose batch size is a parameter left to its default (`make_input_fn(mode)` with
`batch_size=BATCH_SIZE`): the port traces the default, so the TPUEstimator it builds gets train_batch_size (one
built without it cannot train even on the CPU: its step logging multiplies by the batch size)."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf

BATCH_SIZE = 8


def data():
  x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
  return {'x': x}, (x[:, 0] > 0.5).astype(np.int32)


def make_input_fn(mode, batch_size=BATCH_SIZE):
  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(data())
    if mode == tf.estimator.ModeKeys.TRAIN:
      return dataset.repeat().batch(batch_size)
    return dataset.batch(batch_size)
  return input_fn


def model_fn(features, labels, mode):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main():
  # A run from scratch first, in a folder of its own (a smoke test of the input and the model), logging its step
  # rate every step: a TPUEstimator without train_batch_size cannot (examples/sec: None * steps/sec).
  check = tf.estimator.RunConfig(model_dir=sys.argv[1] + '_check', log_step_count_steps=1)
  tf.estimator.Estimator(model_fn, config=check).train(make_input_fn(tf.estimator.ModeKeys.TRAIN), max_steps=3)
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  est.train(make_input_fn(tf.estimator.ModeKeys.TRAIN), max_steps=2)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in est.evaluate(
      make_input_fn(tf.estimator.ModeKeys.EVAL)).items())))


if __name__ == '__main__':
  main()
