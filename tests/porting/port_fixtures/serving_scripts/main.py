"""Fixture for the port report (serving_scripts): a training program with two scripts beside it that only serve:
export.py exports a SavedModel and interact.py predicts a sentence, each with a plain Estimator of its own, on the
CPU. Only main.py trains: the serving scripts need no TPUEstimator (though a plain Estimator will refuse the
TPUEstimatorSpec the ported model_fn returns: advice). Runs under TensorFlow 1.15 and 2.15: main.py, then export.py
and interact.py, in one folder.
"""
import numpy as np
import tensorflow.compat.v1 as tf

MODEL_DIR = 'results/model'


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], params['classes'])
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'class': tf.argmax(logits, 1)}, export_outputs={
        'classify': tf.estimator.export.PredictOutput({'class': tf.argmax(logits, 1)})})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.AdamOptimizer(0.01).minimize(loss, tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  rng = np.random.RandomState(0)
  dataset = tf.data.Dataset.from_tensor_slices(({'x': rng.uniform(size=(32, 5)).astype(np.float32)},
                                                rng.randint(0, 3, size=32).astype(np.int32)))
  return dataset.repeat().batch(8)


if __name__ == '__main__':
  estimator = tf.estimator.Estimator(model_fn, MODEL_DIR, params={'classes': 3})
  estimator.train(input_fn, max_steps=4)
