"""Fixture for the port report (serving_scripts): exports main.py's model on the CPU; see main.py."""
import tensorflow.compat.v1 as tf

from main import MODEL_DIR
from main import model_fn


def serving_input_receiver_fn():
  x = tf.placeholder(tf.float32, [None, 5], name='x')
  return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})


if __name__ == '__main__':
  estimator = tf.estimator.Estimator(model_fn, MODEL_DIR, params={'classes': 3})
  estimator.export_saved_model('saved_model', serving_input_receiver_fn)
