"""An input_fn builder whose input_fn reads the builder's `mode` and returns an iterator's tensors (a short last
evaluation batch): the port must not hide `mode` behind a parameter of its own, nor call Dataset methods on the
tensors, nor drop the evaluation's last batch."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf

X = np.random.RandomState(0).rand(30, 4).astype(np.float32)
Y = (X[:, 0] > 0.5).astype(np.int32)


def read_dataset(mode, batch_size=8):
  def _input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(({'x': X}, Y))
    if mode == tf.estimator.ModeKeys.TRAIN:
      dataset = dataset.repeat()
    dataset = dataset.map(lambda features, label: (features, label)).batch(batch_size)
    return tf.data.make_one_shot_iterator(dataset).get_next()
  return _input_fn


def model_fn(features, labels, mode):
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main():
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  est.train(read_dataset(tf.estimator.ModeKeys.TRAIN), max_steps=2)
  result = est.evaluate(read_dataset(tf.estimator.ModeKeys.EVAL))
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in result.items())))


if __name__ == '__main__':
  main()
