"""Fixture for the port report (serving_scripts): predicts one example on the CPU with main.py's model; see
main.py."""
import functools

import tensorflow.compat.v1 as tf

from main import MODEL_DIR
from main import model_fn


def predict_input_fn(values):
  return {'x': tf.constant([values], dtype=tf.float32)}, None


if __name__ == '__main__':
  estimator = tf.estimator.Estimator(model_fn, MODEL_DIR, params={'classes': 3})
  for prediction in estimator.predict(functools.partial(predict_input_fn, [0.1, 0.2, 0.3, 0.4, 0.5])):
    print(prediction['class'])
    break  # the input repeats its one example forever
