"""An input function whose batch size is a parameter left to its default, called by a lambda (training) and by a
def nested in main (evaluation), neither taking params: each is the one rule-3 change (docs/PORT_REPORT.md's lambda
row), and the port hands params['batch_size'] on by keyword, with the default as the global batch."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def input_fun(features, labels, training=True, batch_size=8):
  dataset = tf.data.Dataset.from_tensor_slices(({'x': features}, labels))
  if training:
    dataset = dataset.repeat()
  return dataset.batch(batch_size)


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main():
  x = np.random.RandomState(0).rand(36, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  estimator = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  estimator.train(input_fn=lambda: input_fun(x, y), max_steps=3)

  def eval_input():
    return input_fun(x, y, training=False)
  metrics = estimator.evaluate(eval_input)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in metrics.items())))


if __name__ == '__main__':
  main()
