"""An EstimatorSpec with a metric dict built in two statements, training_chief_hooks and a Scaffold, and
one input_fn that trains and evaluates: the TPUEstimatorSpec gets every metric, the hooks and a scaffold_fn
together, and the padded evaluation its own name (rebinding input_fn would make it local to main)."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def input_fn():
  x = np.random.RandomState(0).rand(64, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat().batch(8)


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.train.AdamOptimizer(0.01)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  predictions = tf.argmax(logits, 1)
  metrics = {'accuracy': tf.metrics.accuracy(labels, predictions)}
  metrics['recall'] = tf.metrics.recall(labels, predictions)
  hook = tf.train.LoggingTensorHook({'loss': loss}, every_n_iter=2)
  scaffold = tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=2))
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics,
                                    training_chief_hooks=[hook], scaffold=scaffold)


def main():
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  est.train(input_fn, max_steps=4)
  print("RESULT " + json.dumps(dict((k, float(v)) for k, v in est.evaluate(input_fn, steps=2).items())))


if __name__ == '__main__':
  main()
