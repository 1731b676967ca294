"""Trains, evaluates and predicts the MNIST CNN with TPUEstimator -- on a Cloud TPU or on the local CPU.

Local:      python mnist_tpu.py --use_tpu=false --master=''
Cloud TPU:  python mnist_tpu.py --tpu_name=NAME [--tpu_zone=Z --gcp_project=P] \
                --data_dir=gs://BUCKET/mnist --model_dir=gs://BUCKET/mnist/model
Check:      python mnist_tpu.py --check_tpu [the Cloud TPU flags]   (TPU readiness on this CPU, no TPU needed)

The same TPUEstimator runs in both cases; `--use_tpu=false` makes it run model_fn on the CPU.
"""
import datetime
import json
import os
import sys
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf
from absl import app
from absl import flags
from absl import logging

from estimator_tpu import failures
from estimator_tpu import input_pipeline
from estimator_tpu import model_fn as model_fn_lib
from estimator_tpu import prepare
from estimator_tpu import readiness
from estimator_tpu import records
from estimator_tpu import run_config as run_config_lib
from estimator_tpu.errors import UserError
from flags import mnist_tpu as mnist_tpu_flags
from flags import training

FLAGS = flags.FLAGS
RESULTS_FILE = 'mnist_tpu_results.json'


def default_model_dir():
  stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
  return os.path.join(tempfile.gettempdir(), 'estimator_tpu', 'mnist_tpu-%s' % stamp)


def connect_tpu():
  """Resolves --tpu_name and checks that the TPU answers: seconds, instead of TPUEstimator's minutes of retries."""
  cluster = None
  if FLAGS.tpu_name:
    cluster = run_config_lib.resolve_tpu_cluster(FLAGS.tpu_name, FLAGS.tpu_zone, FLAGS.gcp_project)
  run_config_lib.require_tpu_reachable(FLAGS.master, cluster)
  return cluster


def build_model_fn():
  return model_fn_lib.model_fn_builder(
      learning_rate=FLAGS.learning_rate, decay_steps=FLAGS.lr_decay_steps, decay_rate=FLAGS.lr_decay_rate)


def build_estimator(model_dir, batch_size, cluster=None):
  """TPUEstimator from the flags; on CPU (use_tpu=False) it runs model_fn as a plain Estimator would."""
  config = run_config_lib.build_run_config(
      model_dir=model_dir, iterations_per_loop=FLAGS.iterations, num_shards=FLAGS.num_shards,
      save_checkpoints_steps=FLAGS.save_checkpoints_steps, master=FLAGS.master, cluster=cluster)
  model_fn = build_model_fn()
  failures.check_checkpoint(model_dir, model_fn)
  return tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, use_tpu=FLAGS.use_tpu, train_batch_size=batch_size,
      eval_batch_size=FLAGS.eval_batch_size, predict_batch_size=FLAGS.eval_batch_size)


def predict_input_fn_builder(images):
  """Predicts on in-memory images (a finite dataset); TPUEstimator pads a short last batch on TPU itself."""

  def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices({model_fn_lib.IMAGE_KEY: images.astype(np.float32)})
    return dataset.batch(params['batch_size'])

  return input_fn


def log_predictions(estimator, test_path, count):
  """Predicts the first `count` test images and logs them next to their labels."""
  if count == 0:
    return []
  images, labels = records.read_split(test_path)
  images = images[:count].reshape(-1, 784)
  results = []
  for i, prediction in enumerate(estimator.predict(predict_input_fn_builder(images), yield_single_examples=True)):
    class_id = int(prediction['class_ids'])
    results.append({'index': i, 'label': int(labels[i]), 'class_id': class_id,
                    'probability': float(prediction['probabilities'][class_id])})
    logging.info('Prediction %d: class %d (p=%.3f), label %d', i, class_id, results[-1]['probability'], labels[i])
  return results


def write_json_atomically(path, payload):
  tmp_path = path + '.tmp'
  with tf.io.gfile.GFile(tmp_path, 'w') as f:
    f.write(json.dumps(payload, indent=2, sort_keys=True))
  tf.io.gfile.rename(tmp_path, path, overwrite=True)


def eval_steps_for(num_examples):
  """Full eval batches in the split: TPU evaluation takes only full batches (the readiness check reports the rest)."""
  return num_examples // FLAGS.eval_batch_size


def run():
  # Before any data or graph work: an unreachable TPU must fail in seconds.
  cluster = connect_tpu() if FLAGS.use_tpu else None
  model_dir = FLAGS.model_dir or default_model_dir()
  # TensorFlow errors a user can fix (damaged data, NaN loss, ...) end as one UserError line, not a traceback.
  with failures.TensorFlowErrors(FLAGS.data_dir, model_dir) as guard:
    train_evaluate_predict(model_dir, cluster, guard.hooks)


def train_evaluate_predict(model_dir, cluster, hooks):
  batch_size = training.effective_batch_size(FLAGS.batch_size, FLAGS.use_tpu)
  logging.info('Data directory: %s', FLAGS.data_dir)
  logging.info('Model directory: %s', model_dir)
  failures.require_writable_dir(model_dir, 'model_dir')  # before a download or a training run could be wasted
  prepare.ensure_data(FLAGS.data_dir, FLAGS.source_dir, FLAGS.download_timeout, FLAGS.validation_size)
  train_path = records.require_split(FLAGS.data_dir, 'train')
  test_path = records.require_split(FLAGS.data_dir, 'test')
  del train_path

  estimator = build_estimator(model_dir, batch_size, cluster)
  logging.info('Training %d steps, batch %d, on %s.', FLAGS.train_steps, batch_size,
               'TPU' if FLAGS.use_tpu else 'CPU')
  estimator.train(input_pipeline.input_fn_builder(FLAGS.data_dir, 'train', is_training=True),
                  max_steps=FLAGS.train_steps, hooks=hooks)

  num_test = records.count_examples(test_path)
  eval_steps = eval_steps_for(num_test)
  if eval_steps == 0:
    raise UserError('the test split has %d examples, fewer than one eval batch (%d).'
                    % (num_test, FLAGS.eval_batch_size), 'lower --eval_batch_size.')
  metrics = estimator.evaluate(input_pipeline.input_fn_builder(FLAGS.data_dir, 'test', is_training=False),
                               steps=eval_steps)
  logging.info('Test accuracy %.4f, loss %.4f over %d examples (global step %d).', metrics['accuracy'],
               metrics['mean_loss'], eval_steps * FLAGS.eval_batch_size, metrics['global_step'])

  predictions = log_predictions(estimator, test_path, FLAGS.num_predictions)
  write_json_atomically(os.path.join(model_dir, RESULTS_FILE), {
      'global_step': int(metrics['global_step']),
      'eval': {'accuracy': float(metrics['accuracy']), 'loss': float(metrics['mean_loss']),
               'examples': eval_steps * FLAGS.eval_batch_size},
      'predictions': predictions,
  })


def check_tpu():
  """--check_tpu: checks on this CPU whether the run the flags describe would work on a TPU; returns exit status."""
  plan = readiness.TpuPlan(
      num_shards=FLAGS.num_shards, train_batch_size=training.effective_batch_size(FLAGS.batch_size, use_tpu=True),
      eval_batch_size=FLAGS.eval_batch_size, predict_batch_size=FLAGS.eval_batch_size,
      iterations_per_loop=FLAGS.iterations, save_checkpoints_steps=FLAGS.save_checkpoints_steps,
      model_dir=FLAGS.model_dir, data_dir=FLAGS.data_dir, tpu_name=FLAGS.tpu_name, tpu_zone=FLAGS.tpu_zone,
      gcp_project=FLAGS.gcp_project, master=FLAGS.master)
  data_dir = FLAGS.data_dir
  test_path = records.split_path(data_dir, 'test')
  if tf.io.gfile.exists(test_path):
    plan.eval_examples = records.count_examples(test_path)
    plan.eval_steps = eval_steps_for(plan.eval_examples)
  train_input_fn = input_pipeline.input_fn_builder(data_dir, 'train', is_training=True)

  def input_fn(params):
    records.require_split(data_dir, 'train')  # the check reads the data; it never prepares it
    return train_input_fn(params)

  return readiness.print_results(readiness.check_tpu_readiness(build_model_fn(), input_fn, plan))


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  try:
    if FLAGS.check_tpu:
      sys.exit(check_tpu())
    run()
  except UserError as e:
    sys.stderr.write('error: %s\n' % e)
    sys.exit(1)


if __name__ == '__main__':
  mnist_tpu_flags.define_mnist_tpu_flags()
  app.run(main)
