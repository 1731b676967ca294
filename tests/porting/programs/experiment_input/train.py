"""A core Estimator run by contrib.learn's Experiment, its input_fns made by a maker and taking no params. The
Experiment is not a use the port changes (its rule 8 change is a human's), so the input_fns keep no params, and a
TPUEstimator would refuse them: the port leaves the estimator plain, and the program runs as before. TensorFlow
1.15 only (tf.contrib)."""
import json
import sys

import numpy as np
import tensorflow as tf


def get_input_fn(batch_size, repeat):
  def input_fn():
    x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.int32)
    dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
    return (dataset.repeat() if repeat else dataset).batch(batch_size)
  return input_fn


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main():
  config = tf.estimator.RunConfig(model_dir=sys.argv[1], save_checkpoints_steps=2)
  estimator = tf.estimator.Estimator(model_fn=model_fn, config=config, params={})
  experiment = tf.contrib.learn.Experiment(estimator=estimator, train_input_fn=get_input_fn(8, True),
                                           eval_input_fn=get_input_fn(8, False), train_steps=2, eval_steps=2)
  metrics, _ = experiment.train_and_evaluate()
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in metrics.items())))


if __name__ == '__main__':
  main()
