"""A premade estimator with train_and_evaluate: it stays premade (a TODO), so its input_fns must keep
calling without params (params['batch_size'] would be a KeyError)."""
import json
import sys

import numpy as np
import tensorflow.compat.v1 as tf


def input_fn():
  x = np.random.RandomState(0).rand(30, 4).astype(np.float32)
  y = (x[:, 0] > 0.5).astype(np.int32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(8)


def main():
  columns = [tf.feature_column.numeric_column('x', shape=[4])]
  est = tf.estimator.LinearClassifier(columns, model_dir=sys.argv[1])
  tf.estimator.train_and_evaluate(est, tf.estimator.TrainSpec(input_fn, max_steps=2),
                                  tf.estimator.EvalSpec(input_fn, steps=None))
  print('RESULT ' + json.dumps(dict((k, float(v)) for k, v in est.evaluate(input_fn).items())))


if __name__ == '__main__':
  main()
