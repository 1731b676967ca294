"""An input function that batches at the batch_size attribute of a settings object, which the lambdas given to
train and evaluate hand it: the lambda is the one rule-3 change (docs/PORT_REPORT.md's lambda row, extended after
the eighteenth set), the batch call none of its own. The port cannot hand TPUEstimator's batch through an object of
the program's class, so it leaves a TODO at the batch; the program runs as before on the CPU."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


class Settings(object):

  def __init__(self, batch_size, learning_rate):
    self.batch_size = batch_size
    self.learning_rate = learning_rate


def input_fn(features, labels, settings, training):
  dataset = tf.data.Dataset.from_tensor_slices(({'x': features}, labels))
  if training:
    dataset = dataset.repeat()
  return dataset.batch(settings.batch_size, drop_remainder=True)


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  settings = Settings(batch_size=8, learning_rate=0.1)
  x = np.random.RandomState(0).rand(32, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  estimator = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  estimator.train(input_fn=lambda: input_fn(x, y, settings, True), max_steps=3)
  metrics = estimator.evaluate(lambda: input_fn(x, y, settings, False), steps=4)
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in metrics.items())))


if __name__ == '__main__':
  main()
