"""A linear (premade) or custom estimator chosen by an argument, trained with train_and_evaluate on numpy_input_fn
input: which estimator the specs feed cannot be told, and numpy_input_fn takes no params, so the custom estimator
must stay a plain Estimator (TPUEstimator would refuse the input_fn)."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf

X = np.random.RandomState(0).rand(40, 4).astype(np.float32)
Y = (X[:, 0] > 0.5).astype(np.int32)


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(params['learning_rate']).minimize(
      loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main(model_dir, kind='custom'):
  if kind == 'linear':
    estimator = tf.estimator.LinearClassifier([tf.feature_column.numeric_column('x', shape=[4])],
                                              model_dir=model_dir)
  else:
    estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir, params={'learning_rate': 0.1})
  train_input = tf.estimator.inputs.numpy_input_fn({'x': X}, Y, batch_size=8, num_epochs=None, shuffle=False)
  eval_input = tf.estimator.inputs.numpy_input_fn({'x': X}, Y, batch_size=8, num_epochs=1, shuffle=False)
  tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(train_input, max_steps=2),
                                  tf.estimator.EvalSpec(eval_input, steps=None, throttle_secs=0))
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in estimator.evaluate(eval_input).items())))


if __name__ == '__main__':
  main(sys.argv[1])
