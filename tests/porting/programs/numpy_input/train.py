"""An Estimator fed by numpy_input_fn, which takes no params (TPUEstimator refuses it, and the port cannot add one):
the estimator stays a plain Estimator with TODOs, so the program runs as before."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf

X = np.random.RandomState(0).rand(40, 4).astype(np.float32)
Y = (X[:, 0] > 0.5).astype(np.int32)


def model_fn(features, labels, mode):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main():
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  train_input = tf.estimator.inputs.numpy_input_fn({'x': X}, Y, batch_size=8, num_epochs=None, shuffle=False)
  eval_input = tf.estimator.inputs.numpy_input_fn({'x': X}, Y, batch_size=8, num_epochs=1, shuffle=False)
  est.train(train_input, max_steps=2)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in est.evaluate(eval_input).items())))


if __name__ == '__main__':
  main()
