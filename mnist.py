"""Trains, evaluates and predicts the MNIST CNN with a plain tf.estimator.Estimator on the local CPU.

  python mnist.py [--data_dir=DIR --model_dir=DIR --train_steps=N --batch_size=N ...]

The pre-TPU starting point of mnist_tpu.py: the same network, data, flags, optimiser and steps. Read it next to
mnist_tpu.py (and estimator_tpu/estimator/ next to estimator_tpu/tpu/): every difference is a TPU rule, named in a
comment and listed in docs/MIGRATION.md. The same Estimator trained by a TF_CONFIG cluster of processes is
tools/mnist_cluster.py.
"""
import os

import numpy as np
import tensorflow.compat.v1 as tf
from absl import app
from absl import flags
from absl import logging

from estimator_tpu import model
from estimator_tpu.data import prepare
from estimator_tpu.data import records
from estimator_tpu.distributed import training as distributed
from estimator_tpu.estimator import input_fn as input_fn_lib
from estimator_tpu.estimator import model_fn as model_fn_lib
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime import results
from estimator_tpu.runtime.errors import exit_on_user_error
from flags import mnist as mnist_flags
from flags import training

FLAGS = flags.FLAGS
RESULTS_FILE = 'mnist_results.json'
PREDICT_SPLIT = 'test'
KEEP_CHECKPOINT_MAX = 5


def build_estimator(fv, model_dir):
  """A plain Estimator from the flags.

  TPU rule (where and how to run): mnist_tpu.py builds `tf.estimator.tpu.RunConfig` with a `TPUConfig`
  (iterations_per_loop, num_shards) and a TPU master or cluster resolver, and a `TPUEstimator` that is told
  `use_tpu` and the train/eval/predict batch sizes, because it splits each batch across the TPU cores itself.
  """
  config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=fv.save_checkpoints_steps,
                                  keep_checkpoint_max=KEEP_CHECKPOINT_MAX)
  model_fn = model_fn_lib.model_fn_builder(
      learning_rate=fv.learning_rate, decay_steps=fv.lr_decay_steps, decay_rate=fv.lr_decay_rate)
  return tf.estimator.Estimator(model_fn=model_fn, config=config)


def prepare_data(fv):
  logging.info('Data directory: %s', fv.data_dir)
  prepare.ensure_data(fv.data_dir, fv.source_dir, fv.download_timeout, fv.validation_size)


def train(fv, estimator, max_steps):
  records.require_split(fv.data_dir, 'train')
  batch_size = training.effective_batch_size(fv.batch_size, use_tpu=False)
  logging.info('Training to step %d, batch %d, on CPU.', max_steps, batch_size)
  # max_steps is optional for a plain Estimator (it could also stop where the input ends); TPUEstimator on a TPU
  # refuses to train without max_steps or steps, because it runs iterations_per_loop steps per device call.
  estimator.train(input_fn_lib.input_fn_builder(fv.data_dir, 'train', True, batch_size), max_steps=max_steps)


def evaluate(fv, estimator):
  """Evaluation of the test split, read to its end; returns (metrics, examples counted)."""
  path = records.require_split(fv.data_dir, 'test')
  num_examples = records.count_examples(path)
  # TPU rule (eval steps): steps=None reads the split to its end, short last batch included. On a TPU,
  # TPUEstimator.evaluate needs `steps` and every batch full, so mnist_tpu.py pads the split and counts the batches.
  input_fn = input_fn_lib.input_fn_builder(fv.data_dir, 'test', False, fv.eval_batch_size)
  metrics = estimator.evaluate(input_fn, steps=None)
  logging.info('test accuracy %.4f, mean loss %.4f over %d examples (global step %d).',
               metrics['accuracy'], metrics['mean_loss'], num_examples, metrics['global_step'])
  return metrics, num_examples


def predict(fv, estimator):
  """Predicts the first --num_predictions test images (-1: all) and logs a few next to their labels."""
  images, labels = records.read_split(records.require_split(fv.data_dir, PREDICT_SPLIT))
  count = len(labels) if fv.num_predictions < 0 else min(fv.num_predictions, len(labels))
  if count == 0:
    return []
  pixels = images[:count].reshape(count, -1).astype(np.float32)

  def input_fn():
    # A short last batch is fine here; on a TPU, TPUEstimator.predict pads it itself.
    return tf.data.Dataset.from_tensor_slices(model.features(pixels)).batch(fv.eval_batch_size)

  outputs = estimator.predict(input_fn, yield_single_examples=True)
  predictions = results.prediction_rows(outputs, labels[:count])
  logging.info('Predicted %d %s images.', len(predictions), PREDICT_SPLIT)
  return predictions


def run_all(fv, model_dir):
  """Train, evaluate, predict; the results also go to <model_dir>/RESULTS_FILE."""
  prepare_data(fv)
  estimator = build_estimator(fv, model_dir)
  train(fv, estimator, fv.train_steps)
  metrics, counted = evaluate(fv, estimator)
  return results.write_run_summary(
      os.path.join(model_dir, RESULTS_FILE), metrics['global_step'], metrics['accuracy'], metrics['mean_loss'],
      counted, predict(fv, estimator))


def run(fv):
  distributed.task_from_tf_config(distributed=False)  # a cluster in TF_CONFIG is tools/mnist_cluster.py's
  model_dir = fv.model_dir or checkpoints.default_model_dir('mnist')
  logging.info('Model directory: %s', model_dir)
  return run_all(fv, model_dir)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  exit_on_user_error(run, FLAGS)


if __name__ == '__main__':
  mnist_flags.define_mnist_flags()
  app.run(main)
