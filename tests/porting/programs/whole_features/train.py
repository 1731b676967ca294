"""A model_fn that hands its features on whole (a tensor, not a dict) and one input builder that trains and
evaluates, called through two lambdas: padding evaluation adds a weight key to the features, which such a model_fn
cannot take out (and a tensor cannot take at all), so the port leaves evaluation unpadded with a TODO, and the
shared batch keeps its last short batch for evaluation. The port runs and evaluates every example as before."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def data_input_fn(rows, batch_size, training):
  x = np.random.RandomState(rows).rand(rows, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.float32)
  dataset = tf.data.Dataset.from_tensor_slices((x, y))
  if training:
    dataset = dataset.repeat()
  return dataset.batch(batch_size)


def model_fn(features, labels, mode):
  output = tf.squeeze(tf.layers.dense(features, 1), 1)
  loss = tf.losses.mean_squared_error(labels, output)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'mae': tf.metrics.mean_absolute_error(labels, output)})


def main():
  batch_size = 8
  estimator = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  estimator.train(input_fn=lambda: data_input_fn(64, batch_size, True), max_steps=2)
  metrics = estimator.evaluate(input_fn=lambda: data_input_fn(21, batch_size, False))  # 21: a short last batch
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in metrics.items())))


if __name__ == '__main__':
  main()
