"""Entry points of the custom_estimator fixture (iris_classifier.py) for the port proofs: tiny CSV data, its
model_fn with the params its main() gives it, and its input_fns on that data, as its main() calls them.

`import iris_classifier` finds the original or the ported copy: whichever folder the proof runs in.
"""
import inspect
import os
import random

import tensorflow.compat.v1 as tf

import iris_classifier

TRAIN_CSV, TEST_CSV = 'iris_training.csv', 'iris_test.csv'


def write_data(data_dir, train_rows=60, test_rows=25, seed=0):
  """Iris-shaped CSVs (a header line, four measurements and the class), three separable classes."""
  generator = random.Random(seed)
  for name, rows in ((TRAIN_CSV, train_rows), (TEST_CSV, test_rows)):
    lines = ['%d,4,setosa,versicolor,virginica' % rows]
    for row in range(rows):
      label = row % 3
      values = [4.5 + label + generator.random(), 3.0 + generator.random(), 1.0 + 2 * label + generator.random(),
                0.2 + 0.8 * label + 0.2 * generator.random()]
      lines.append(','.join('%.1f' % v for v in values) + ',%d' % label)
    with open(os.path.join(data_dir, name), 'w') as f:
      f.write('\n'.join(lines) + '\n')


def model_fn(features, labels, mode, params, config):
  """my_model_fn with main()'s params (feature columns cannot be given as JSON), and what else it takes."""
  columns = [tf.feature_column.numeric_column(key=key) for key in iris_classifier.COLUMNS[:4]]
  offered = dict(features=features, labels=labels, mode=mode, config=config,
                 params=dict(params, feature_columns=columns, hidden_units=[10, 10], n_classes=3))
  names = inspect.signature(iris_classifier.my_model_fn).parameters
  return iris_classifier.my_model_fn(**dict((n, offered[n]) for n in names))


def _data(data_dir):
  return iris_classifier.load_data(os.path.join(data_dir, TRAIN_CSV), os.path.join(data_dir, TEST_CSV))


def train_input_fn_builder(data_dir, batch_size):
  """main()'s training input: the original batches with batch_size, the port with params['batch_size']."""
  (train_x, train_y), _ = _data(data_dir)

  def input_fn(params=None):
    return iris_classifier.train_input_fn(train_x, train_y, (params or {}).get('batch_size', batch_size))

  return input_fn


def eval_input_fn_builder(data_dir, batch_size):
  """main()'s evaluation input (the test split, to its end)."""
  _, (test_x, test_y) = _data(data_dir)

  def input_fn(params=None):
    return iris_classifier.eval_input_fn(test_x, test_y, (params or {}).get('batch_size', batch_size))

  return input_fn
