"""Fixture for the port report (reserved_params): params TPUEstimator refuses, and what the port changes under a
model_fn that reads them, as the official ResNet does.

The params dict holds 'batch_size' (TPUEstimator reserves it and raises ValueError); model_fn computes its learning
rate from params['batch_size'], meant as the global batch: once TPUEstimator owns the key it holds the per-core
batch, so the learning rate would change. A reshape to params['batch_size'] is a per-core size, right as it is.
Runs under TensorFlow 1.15 and 2.15.
"""
import numpy as np
import tensorflow.compat.v1 as tf


def learning_rate_schedule(batch_size, base_rate=0.1, reference_batch=256):
  return base_rate * batch_size / reference_batch


def model_fn(features, labels, mode, params):
  images = tf.reshape(features, [params['batch_size'], 16])
  logits = tf.layers.dense(images, 4)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  learning_rate = learning_rate_schedule(params['batch_size'])
  train_op = tf.train.MomentumOptimizer(learning_rate, 0.9).minimize(loss, tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(params):
  rng = np.random.RandomState(0)
  dataset = tf.data.Dataset.from_tensor_slices((rng.uniform(size=(64, 16)).astype(np.float32),
                                                rng.randint(0, 4, size=64).astype(np.int32)))
  return dataset.repeat().batch(params['batch_size'], drop_remainder=True)


def main(batch_size=16):
  estimator = tf.estimator.Estimator(
      model_fn=model_fn, params={'batch_size': batch_size, 'resnet_size': 8})
  estimator.train(input_fn, max_steps=4)


if __name__ == '__main__':
  main()
