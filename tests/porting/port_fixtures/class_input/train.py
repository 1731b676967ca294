"""Fixture for the port report (class_input): see images.py. The input_fn takes the data set object's batches;
functools.partial binds the batch size from the hyperparameters. Runs under TensorFlow 1.15 and 2.15."""
import functools

import tensorflow.compat.v1 as tf

import images


def input_fn(subset, batch_size):
  with tf.device('/cpu:0'):
    dataset = images.ImageDataSet(subset)
    return dataset.make_batch(batch_size)


def model_fn(features, labels, mode, params):
  net = tf.layers.conv2d(features, 4, 3, activation=tf.nn.relu)
  logits = tf.layers.dense(tf.layers.flatten(net), 10)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.train.MomentumOptimizer(params['learning_rate'], 0.9)
  train_op = optimizer.minimize(loss, tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  hparams = {'learning_rate': 0.01, 'train_batch_size': 8}
  train_input_fn = functools.partial(input_fn, 'train', batch_size=hparams['train_batch_size'])
  estimator = tf.estimator.Estimator(model_fn, params=hparams)
  estimator.train(train_input_fn, max_steps=5)


if __name__ == '__main__':
  main()
