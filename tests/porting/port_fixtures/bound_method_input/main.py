"""Fixture for the port report (bound_method_input): see inputs.py. Runs under TensorFlow 1.15 and 2.15."""
import tensorflow.compat.v1 as tf

import inputs


def metric_fn(labels, logits):
  return {'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))}


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features, 4)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.tpu.TPUEstimatorSpec(mode, predictions={'logits': logits})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
  optimizer = tf.train.AdamOptimizer(0.01)
  optimizer = tf.tpu.CrossShardOptimizer(optimizer) if params['use_tpu'] else optimizer
  return tf.estimator.tpu.TPUEstimatorSpec(
      mode, loss=loss, train_op=optimizer.minimize(loss, tf.train.get_global_step()))


def main(use_tpu=False):
  config = tf.estimator.tpu.RunConfig(
      master='', model_dir='gs://bucket/model' if use_tpu else None,
      tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=5))
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, use_tpu=use_tpu, train_batch_size=16, eval_batch_size=16)
  train_input, eval_input = [inputs.RandomInput(is_training) for is_training in (True, False)]
  estimator.train(input_fn=train_input.input_fn, max_steps=5)
  print(estimator.evaluate(input_fn=eval_input.input_fn, steps=2))


if __name__ == '__main__':
  main()
