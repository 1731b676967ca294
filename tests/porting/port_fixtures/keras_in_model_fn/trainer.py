"""Fixture for the port report (never run): a Keras model called inside an Estimator model_fn, with a Keras
optimizer, a histogram summary, a logging hook, a data-dependent mask and flags read inside the functions.
The estimator API is imported as `est` and TF through tensorflow.compat.v1.
"""
import numpy as np
import tensorflow.compat.v1 as tf
from absl import app
from absl import flags
from tensorflow import estimator as est

FLAGS = flags.FLAGS
flags.DEFINE_integer('batch_size', 64, 'Examples per batch.')
flags.DEFINE_float('learning_rate', 1e-3, 'Adam learning rate.')
flags.DEFINE_string('model_dir', '/tmp/keras_in_model_fn', 'Where checkpoints go.')


def build_keras_model(num_classes):
  return tf.keras.Sequential([
      tf.keras.layers.Dense(128, activation='relu'),
      tf.keras.layers.Dropout(0.2),
      tf.keras.layers.Dense(num_classes),
  ])


def model_fn(features, labels, mode):
  model = build_keras_model(10)
  logits = model(features['x'], training=(mode == est.ModeKeys.TRAIN))
  probabilities = tf.nn.softmax(logits)
  if mode == est.ModeKeys.PREDICT:
    confident = tf.boolean_mask(probabilities, tf.reduce_max(probabilities, axis=1) > 0.9)
    return est.EstimatorSpec(mode, predictions={'probabilities': probabilities, 'confident': confident})

  loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
  tf.summary.histogram('logits', logits)
  if mode == est.ModeKeys.EVAL:
    accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, axis=1))
    return est.EstimatorSpec(mode, loss=loss, eval_metric_ops={'accuracy': accuracy})

  optimizer = tf.keras.optimizers.Adam(FLAGS.learning_rate)
  train_op = optimizer.minimize(lambda: loss, var_list=model.trainable_variables)
  logging_hook = tf.train.LoggingTensorHook({'loss': loss}, every_n_iter=100)
  return est.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[logging_hook])


def input_fn(images, labels, training):
  dataset = tf.data.Dataset.from_tensor_slices(({'x': images.astype(np.float32)}, labels.astype(np.int32)))
  if training:
    dataset = dataset.shuffle(10000).repeat()
  return dataset.batch(FLAGS.batch_size, drop_remainder=True)


def main(_):
  (x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
  x_train, x_test = x_train.reshape(-1, 784) / 255.0, x_test.reshape(-1, 784) / 255.0
  classifier = est.Estimator(model_fn, model_dir=FLAGS.model_dir,
                             config=est.RunConfig(save_summary_steps=100))
  classifier.train(lambda: input_fn(x_train, y_train, True), max_steps=2000)
  print(classifier.evaluate(lambda: input_fn(x_test, y_test, False), steps=100))


if __name__ == '__main__':
  app.run(main)
