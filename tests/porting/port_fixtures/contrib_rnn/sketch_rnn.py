"""Fixture for the port report (contrib_rnn): an RNN classifier from the tf.contrib era (TF 1.x only: TF 2 has no
tf.contrib, so this runs under TensorFlow 1.15 alone).

A fused LSTM cell (LSTMBlockFusedCell: its BlockLSTM op has no XLA kernel, so a TPU cannot run it);
tf.contrib.layers.optimize_loss, which builds an unwrapped optimizer and writes summaries inside model_fn; an
HParams object as params, holding 'batch_size', which TPUEstimator reserves; the config a subclass of
tf.contrib.learn.RunConfig, which TPUEstimator refuses. Tiny random sequences, a few steps.
"""
import numpy as np
import tensorflow as tf


class RunConfig(tf.contrib.learn.RunConfig):
  """The config, with a fixed random seed."""

  def __init__(self, **kwargs):
    super(RunConfig, self).__init__(tf_random_seed=1, **kwargs)


def model_fn(features, labels, mode, params):
  inputs = tf.transpose(features, [1, 0, 2])  # time-major
  cell = tf.contrib.rnn.LSTMBlockFusedCell(params.num_units)
  outputs, _ = cell(inputs, dtype=tf.float32)
  logits = tf.layers.dense(outputs[-1], params.num_classes)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.contrib.layers.optimize_loss(
      loss=loss, global_step=tf.train.get_global_step(), learning_rate=params.learning_rate, optimizer='Adam',
      summaries=['learning_rate', 'loss'])
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def input_fn(params):
  rng = np.random.RandomState(0)
  dataset = tf.data.Dataset.from_tensor_slices((rng.uniform(size=(16, 5, 3)).astype(np.float32),
                                                rng.randint(0, 2, size=16).astype(np.int32)))
  return dataset.repeat().batch(params.batch_size, drop_remainder=True)


def main():
  hparams = tf.contrib.training.HParams(num_units=8, num_classes=2, learning_rate=0.01, batch_size=4)
  estimator = tf.estimator.Estimator(model_fn, config=RunConfig(model_dir='sketch_model'), params=hparams)
  estimator.train(input_fn, max_steps=4)
  print(estimator.evaluate(input_fn, steps=2))


if __name__ == '__main__':
  main()
