"""Fixture for the port report (argparse_steps): a Cloud ML Engine style trainer driven by argparse and
tf.estimator.train_and_evaluate in a TF_CONFIG cluster.

--eval-steps defaults to None (argparse), so EvalSpec(steps=args.eval_steps) reads the evaluation input to its end,
which evaluation on a TPU refuses; the program reads TF_CONFIG for its cluster, which a TPU slice replaces. Runs under
TensorFlow 1.15 and 2.15 (without TF_CONFIG: one local process).
"""
import argparse
import json
import os

import numpy as np
import tensorflow.compat.v1 as tf


def session_config():
  tf_config = json.loads(os.environ.get('TF_CONFIG', '{}'))
  if tf_config.get('task', {}).get('type') == 'worker':
    return tf.ConfigProto(device_filters=['/job:ps', '/job:worker/task:%d' % tf_config['task']['index']])
  return None


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features, 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss)
  train_op = tf.train.AdamOptimizer(0.01).minimize(loss, tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def make_input_fn(batch_size, repeat):
  def input_fn(params):
    rng = np.random.RandomState(0)
    dataset = tf.data.Dataset.from_tensor_slices((rng.uniform(size=(24, 3)).astype(np.float32),
                                                  rng.randint(0, 2, size=24).astype(np.int32)))
    return dataset.repeat(repeat).batch(batch_size, drop_remainder=True)
  return input_fn


def train_and_evaluate(args):
  train_spec = tf.estimator.TrainSpec(make_input_fn(args.train_batch_size, None), max_steps=args.train_steps)
  eval_spec = tf.estimator.EvalSpec(make_input_fn(args.eval_batch_size, 1), steps=args.eval_steps, throttle_secs=0)
  config = tf.estimator.RunConfig(session_config=session_config(), model_dir=args.job_dir)
  estimator = tf.estimator.Estimator(model_fn, config=config, params={})
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)


if __name__ == '__main__':
  parser = argparse.ArgumentParser()
  parser.add_argument('--job-dir', default='job')
  parser.add_argument('--train-steps', type=int, default=4)
  parser.add_argument('--train-batch-size', type=int, default=8)
  parser.add_argument('--eval-batch-size', type=int, default=8)
  parser.add_argument('--eval-steps', type=int, help='evaluation batches; None: all of them')
  train_and_evaluate(parser.parse_args())
