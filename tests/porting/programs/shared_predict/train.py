"""One input_fn builder that trains and predicts (10 examples, batches of 4): training needs
drop_remainder=True, prediction must keep its last two examples (TPUEstimator pads that batch itself)."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf

X = np.random.RandomState(0).rand(10, 4).astype(np.float32)
Y = (X[:, 0] > 0.5).astype(np.int32)


def input_fn(batch_size, labels=True):
  def fn():
    data = ({'x': X}, Y) if labels else {'x': X}
    return tf.data.Dataset.from_tensor_slices(data).batch(batch_size)
  return fn


def model_fn(features, labels, mode):
  logits = tf.layers.dense(features['x'], 2)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'class': tf.argmax(logits, 1)})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  est.train(input_fn(4), max_steps=2)
  predictions = [int(p['class']) for p in est.predict(input_fn(4, labels=False))]
  print('RESULT ' + json.dumps({'predictions': predictions}))


if __name__ == '__main__':
  main()
