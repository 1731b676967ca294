"""Fixture for the port report (distribute_strategy): code that takes Estimator off the TPU loop.

The RunConfig carries a distribution strategy (train_distribute=), as the official models' GPU runs do: kept in a
tpu RunConfig, Estimator.train takes its distributed path, which TPUEstimator does not override. model_fn builds
one tower per device with tf.device and averages the towers' gradients by hand, which TPUEstimator's replication
and CrossShardOptimizer replace. Runs under TensorFlow 1.15 and 2.15 (one CPU tower).
"""
import numpy as np
import tensorflow.compat.v1 as tf

NUM_DEVICES = 1


def tower_loss(features, labels):
  logits = tf.layers.dense(features, 3, name='dense', reuse=tf.AUTO_REUSE)
  return tf.losses.sparse_softmax_cross_entropy(labels, logits)


def model_fn(features, labels, mode, params):
  optimizer = tf.train.GradientDescentOptimizer(params['learning_rate'])
  tower_grads, losses = [], []
  for i in range(NUM_DEVICES):
    with tf.device('/cpu:%d' % i):
      loss = tower_loss(features, labels)
      losses.append(loss)
      tower_grads.append(optimizer.compute_gradients(loss))
  grads = [(tf.add_n([g for g, _ in pairs]) / len(pairs), pairs[0][1]) for pairs in zip(*tower_grads)]
  train_op = optimizer.apply_gradients(grads, tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=tf.add_n(losses) / NUM_DEVICES, train_op=train_op)


def input_fn(params):
  rng = np.random.RandomState(0)
  dataset = tf.data.Dataset.from_tensor_slices((rng.uniform(size=(32, 4)).astype(np.float32),
                                                rng.randint(0, 3, size=32).astype(np.int32)))
  return dataset.repeat().batch(params['batch_size'], drop_remainder=True)


def main():
  strategy = tf.distribute.OneDeviceStrategy('/cpu:0')
  config = tf.estimator.RunConfig(train_distribute=strategy)
  estimator = tf.estimator.Estimator(model_fn, config=config, params={'learning_rate': 0.1})
  estimator.train(lambda: input_fn({'batch_size': 8}), max_steps=4)


if __name__ == '__main__':
  main()
