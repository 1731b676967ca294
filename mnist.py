"""Trains, evaluates and predicts the MNIST CNN with a plain tf.estimator.Estimator on the local CPU.

  python mnist.py [--data_dir=DIR --model_dir=DIR --train_steps=N --batch_size=N ...]
  TF_CONFIG=... python mnist.py --distributed --model_dir=SHARED ...   (one task of a multi-process cluster)

With --distributed, every task of the cluster runs this program with the same flags; TF_CONFIG tells each
which task it is (estimator_tpu/distributed.py). The chief then evaluates the final checkpoint on the test split
and writes the results, as a local run does; local_cluster.py starts all tasks on this machine.

The pre-TPU starting point of mnist_tpu.py: the same network, data, flags, optimiser and steps. Read it next to
mnist_tpu.py (and estimator_tpu/estimator_model_fn.py, estimator_input.py next to model_fn.py, input_pipeline.py):
every difference is a TPU rule, named in a comment and listed in docs/MIGRATION.md.
"""
import datetime
import os
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf
from absl import app
from absl import flags
from absl import logging

from estimator_tpu import distributed
from estimator_tpu import estimator_input
from estimator_tpu import estimator_model_fn
from estimator_tpu import model_fn as model_fn_lib
from estimator_tpu import prepare
from estimator_tpu import records
from estimator_tpu import results
from estimator_tpu import tf_config
from estimator_tpu.errors import exit_on_user_error
from flags import mnist as mnist_flags
from flags import training

FLAGS = flags.FLAGS
RESULTS_FILE = 'mnist_results.json'
KEEP_CHECKPOINT_MAX = 5


def default_model_dir():
  stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
  return os.path.join(tempfile.gettempdir(), 'estimator_tpu', 'mnist-%s' % stamp)


def build_estimator(model_dir):
  """A plain Estimator from the flags.

  TPU rule (where and how to run): mnist_tpu.py builds `tf.estimator.tpu.RunConfig` with a `TPUConfig`
  (iterations_per_loop, num_shards) and a TPU master or cluster resolver, and a `TPUEstimator` that is told
  `use_tpu` and the train/eval/predict batch sizes, because it splits each batch across the TPU cores itself.
  """
  config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=FLAGS.save_checkpoints_steps,
                                  keep_checkpoint_max=KEEP_CHECKPOINT_MAX)
  model_fn = estimator_model_fn.model_fn_builder(
      learning_rate=FLAGS.learning_rate, decay_steps=FLAGS.lr_decay_steps, decay_rate=FLAGS.lr_decay_rate)
  return tf.estimator.Estimator(model_fn=model_fn, config=config)


def predict_input_fn_builder(images, batch_size):
  """Predicts on in-memory images; a short last batch is fine here (TPUEstimator pads it on a TPU)."""

  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices({model_fn_lib.IMAGE_KEY: images.astype(np.float32)})
    return dataset.batch(batch_size)

  return input_fn


def log_predictions(estimator, test_path, count, batch_size):
  """Predicts the first `count` test images and logs them next to their labels."""
  if count == 0:
    return []
  images, labels = records.read_split(test_path)
  images = images[:count].reshape(-1, 784)
  rows = []
  input_fn = predict_input_fn_builder(images, batch_size)
  for i, prediction in enumerate(estimator.predict(input_fn, yield_single_examples=True)):
    class_id = int(prediction['class_ids'])
    rows.append({'index': i, 'label': int(labels[i]), 'class_id': class_id,
                 'probability': float(prediction['probabilities'][class_id])})
    logging.info('Prediction %d: class %d (p=%.3f), label %d', i, class_id, rows[-1]['probability'], labels[i])
  return rows


def require_data(task):
  """Local runs prepare the data if needed. In a cluster the tasks only read it (preparing it in several tasks at
  once would race), and a ps, which only holds variables, reads nothing."""
  if task is None:
    prepare.ensure_data(FLAGS.data_dir, FLAGS.source_dir, FLAGS.download_timeout, FLAGS.validation_size)
  elif task.type == tf_config.PS:
    return
  for split in ('train', 'test') if task is None else ('train', 'validation', 'test'):
    records.require_split(FLAGS.data_dir, split)


def train_in_cluster(estimator, task, batch_size):
  """This task's part of tf.estimator.train_and_evaluate: train, evaluate each checkpoint, or serve variables."""
  logging.info('Task %s: training until global step %d, batch %d per step and task.', task.name, FLAGS.train_steps,
               batch_size)
  distributed.train_and_evaluate(
      estimator, task,
      train_input_fn=estimator_input.input_fn_builder(FLAGS.data_dir, 'train', True, batch_size),
      eval_input_fn=estimator_input.input_fn_builder(FLAGS.data_dir, 'validation', False, FLAGS.eval_batch_size),
      max_steps=FLAGS.train_steps, eval_throttle_secs=FLAGS.eval_throttle_secs,
      wait_for_workers_secs=FLAGS.wait_for_workers_secs)


def run():
  task = distributed.task_from_tf_config(FLAGS.distributed)  # None: a local run
  batch_size = training.effective_batch_size(FLAGS.batch_size, use_tpu=False)
  model_dir = FLAGS.model_dir or default_model_dir()
  logging.info('Data directory: %s', FLAGS.data_dir)
  logging.info('Model directory: %s', model_dir)
  require_data(task)
  test_path = records.split_path(FLAGS.data_dir, 'test')

  estimator = build_estimator(model_dir)
  if task is not None:
    train_in_cluster(estimator, task, batch_size)
    if not task.is_chief:
      return  # a worker or the evaluator is done; the chief evaluates the final checkpoint below
  else:
    logging.info('Training %d steps, batch %d, on CPU.', FLAGS.train_steps, batch_size)
    # max_steps is optional for a plain Estimator (it could also stop where the input ends); TPUEstimator on a TPU
    # refuses to train without max_steps or steps, because it runs iterations_per_loop steps per device call.
    estimator.train(estimator_input.input_fn_builder(FLAGS.data_dir, 'train', True, batch_size),
                    max_steps=FLAGS.train_steps)

  # TPU rule (eval steps): steps=None reads the split to its end, short last batch included. On a TPU,
  # TPUEstimator.evaluate needs `steps` and every batch full, so mnist_tpu.py computes the number of batches.
  num_test = records.count_examples(test_path)
  metrics = estimator.evaluate(
      estimator_input.input_fn_builder(FLAGS.data_dir, 'test', False, FLAGS.eval_batch_size), steps=None)
  logging.info('Test accuracy %.4f, loss %.4f over %d examples (global step %d).', metrics['accuracy'],
               metrics['mean_loss'], num_test, metrics['global_step'])

  predictions = log_predictions(estimator, test_path, FLAGS.num_predictions, FLAGS.eval_batch_size)
  results.write_run_summary(os.path.join(model_dir, RESULTS_FILE), metrics['global_step'], metrics['accuracy'],
                            metrics['mean_loss'], num_test, predictions)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  exit_on_user_error(run)


if __name__ == '__main__':
  mnist_flags.define_mnist_flags()
  app.run(main)
