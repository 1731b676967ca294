"""A model_fn whose eval metrics read params (a scale the program chose), assigned to a name before the spec, and
an evaluation whose last batch is short (36 examples, batches of 8). The port cannot move such metrics into a
metric_fn (params is not a tensor: a rule-5 TODO), so it must not pad the evaluation either: padded rows nothing
weights would count in the accuracy (rule 9 stays a TODO), and the port evaluates the original's 36 examples."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def input_fn(features, labels, training, batch_size=8):
  dataset = tf.data.Dataset.from_tensor_slices(({'x': features}, labels))
  if training:
    dataset = dataset.repeat()
  return dataset.batch(batch_size)


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  predictions = tf.argmax(logits, 1, output_type=tf.int32)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  hits = tf.cast(tf.equal(labels, predictions), tf.float32)
  metrics = {'accuracy': tf.metrics.accuracy(labels, predictions),
             'scaled_hits': tf.metrics.mean(hits * params['scale'])}
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def main():
  x = np.random.RandomState(0).rand(36, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  estimator = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1], params={'scale': 2.0})
  estimator.train(input_fn=lambda: input_fn(x, y, True), max_steps=3)
  metrics = estimator.evaluate(lambda: input_fn(x, y, False))
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in metrics.items())))


if __name__ == '__main__':
  main()
