"""Trains, evaluates and predicts the MNIST CNN with Keras and tf.distribute -- the TF 2.x route (no Estimator).

Local:      python mnist_keras.py --use_tpu=false --master=''
Cloud TPU:  python mnist_keras.py --tpu_name=NAME [--tpu_zone=Z --gcp_project=P] \
                --data_dir=gs://BUCKET/mnist --model_dir=gs://BUCKET/mnist/keras

The flags, data and network are mnist_tpu.py's. tf.estimator is gone from TensorFlow 2.16 on; this is what
replaces TPUEstimator: TPUClusterResolver -> connect_to_cluster -> initialize_tpu_system -> TPUStrategy, a model
built and compiled inside strategy.scope(), and steps_per_execution for iterations_per_loop. Off TPU the default
strategy runs the very same code. TensorFlow 2.x only; on TF 1.x it stops with a message.
"""
import datetime
import os
import tempfile

import numpy as np
import tensorflow as tf
from absl import app
from absl import flags
from absl import logging

from estimator_tpu import input_pipeline
from estimator_tpu import keras_model
from estimator_tpu import prepare
from estimator_tpu import records
from estimator_tpu import results
from estimator_tpu import run_config
from estimator_tpu.errors import UserError
from estimator_tpu.errors import exit_on_user_error
from flags import mnist_keras as mnist_keras_flags
from flags import training

FLAGS = flags.FLAGS
RESULTS_FILE = 'mnist_keras_results.json'
KEEP_CHECKPOINT_MAX = 5


def require_tf2(version):
  if int(version.split('.')[0]) < 2:
    raise UserError('mnist_keras.py is the TensorFlow 2 route (tf.distribute.TPUStrategy, Keras '
                    'steps_per_execution); this is TensorFlow %s.' % version,
                    'run it with TensorFlow 2.x, e.g. `bash scripts/make_venv.sh tf2` and '
                    '`.venv-tf2/bin/python mnist_keras.py ...`; on TensorFlow 1.x use mnist_tpu.py.')


def default_model_dir():
  stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
  return os.path.join(tempfile.gettempdir(), 'estimator_tpu', 'mnist_keras-%s' % stamp)


def build_strategy(tpu=None, tpu_zone=None, gcp_project=None):
  """TPUStrategy for a TPU name or grpc:// address; the default strategy (this machine) when `tpu` is None.

  TPUEstimator did the first three steps itself from RunConfig(cluster=...) or master=...; in TF2 they are the
  program's job, and the order matters: resolve the TPU's address, make its devices known to this process, then
  initialise the TPU system (which also wipes its memory) before the strategy places anything on it.
  """
  if not tpu:
    return tf.distribute.get_strategy()
  resolver = run_config.resolve_tpu_cluster(tpu, tpu_zone, gcp_project)
  try:
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
  except (tf.errors.OpError, ValueError, RuntimeError) as e:
    raise UserError('could not connect to TPU %r: %s' % (tpu, e),
                    'check that the TPU is up (gcloud compute tpus list) and runs a TF 2 runtime matching this '
                    'TensorFlow.')
  return tf.distribute.TPUStrategy(resolver)


def check_batches_split(strategy, batch_sizes):
  """Each global batch is split evenly over the replicas (TPU cores), as under TPUEstimator."""
  replicas = strategy.num_replicas_in_sync
  for batch_size in batch_sizes:
    if batch_size % replicas:
      raise UserError('batch size %d does not split evenly over %d TPU cores.' % (batch_size, replicas),
                      'pass --batch_size and --eval_batch_size divisible by %d.' % replicas)


def make_dataset(data_dir, split, is_training, batch_size):
  """mnist_tpu.py's input_fn itself, at the global batch: TPUStrategy splits each batch over the cores.

  Static shapes (drop_remainder) are not required under TPUStrategy -- its dynamic padder copes with a short
  batch -- but they let XLA compile one program and waste no padding, as under TPUEstimator.
  """
  return input_pipeline.input_fn_builder(data_dir, split, is_training)({'batch_size': batch_size})


def build_model(strategy, learning_rate, decay_steps, decay_rate, steps_per_execution):
  """Creates and compiles the model inside strategy.scope().

  Inside the scope the strategy creates every variable, the model's and the optimiser's: under TPUStrategy one
  copy on each TPU core, kept in sync. A model built outside the scope would live on the host only.
  """
  with strategy.scope():
    model = keras_model.build_keras_cnn()
    keras_model.compile_model(model, learning_rate, decay_steps, decay_rate, steps_per_execution)
  return model


def build_checkpoint_manager(model, model_dir):
  """Checkpoints of the model and its optimiser (whose step counter is the TF2 global step) in model_dir.

  TPUEstimator checkpointed and restored by itself; with Keras the program does it.
  """
  checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
  return tf.train.CheckpointManager(checkpoint, model_dir, max_to_keep=KEEP_CHECKPOINT_MAX)


class SaveCheckpoints(tf.keras.callbacks.Callback):
  """Saves through a CheckpointManager every `every_steps` steps and at the end, named by the step.

  With steps_per_execution > 1 Keras calls on_train_batch_end once per execution, so -- as with TPUEstimator's
  iterations_per_loop -- a checkpoint can only fall on those boundaries.
  """

  def __init__(self, manager, every_steps):
    super(SaveCheckpoints, self).__init__()
    self._manager = manager
    self._every_steps = every_steps
    self._last_saved = None

  def _save_if(self, due):
    step = int(self.model.optimizer.iterations.numpy())
    if due(step - self._last_saved):
      self._manager.save(checkpoint_number=step)
      self._last_saved = step

  def on_train_begin(self, logs=None):
    self._last_saved = int(self.model.optimizer.iterations.numpy())

  def on_train_batch_end(self, batch, logs=None):
    self._save_if(lambda unsaved_steps: unsaved_steps >= self._every_steps)

  def on_train_end(self, logs=None):
    self._save_if(lambda unsaved_steps: unsaved_steps > 0)


def train(model, manager, dataset, train_steps, save_checkpoints_steps, summary_every):
  """Trains until the optimiser has taken `train_steps` steps in total, resuming from model_dir (max_steps)."""
  manager.checkpoint.restore(manager.latest_checkpoint)
  done = int(model.optimizer.iterations.numpy())
  if manager.latest_checkpoint:
    logging.info('Restored %s (step %d).', manager.latest_checkpoint, done)
  if done >= train_steps:
    logging.info('Already trained %d steps; nothing to do.', done)
    return
  callbacks = [SaveCheckpoints(manager, save_checkpoints_steps),
               # Counterpart of host_call: Keras writes these summaries on the host, from the values each
               # execution returns ('batch_loss', 'batch_accuracy'), never from inside the TPU computation.
               tf.keras.callbacks.TensorBoard(log_dir=manager.directory, update_freq=summary_every)]
  model.fit(dataset, epochs=1, steps_per_epoch=train_steps - done, callbacks=callbacks, verbose=2)


def log_predictions(model, test_path, count, batch_size):
  """Predicts the first `count` test images and logs them next to their labels."""
  if count == 0:
    return []
  images, labels = records.read_split(test_path)
  images = images[:count].reshape(-1, 784).astype(np.float32)
  # A short last batch is fine even on a TPU: TPUStrategy pads it (its dynamic padder, on by default), as
  # TPUEstimator.predict did itself.
  probabilities = tf.nn.softmax(model.predict(images, batch_size=batch_size, verbose=0)).numpy()
  rows = []
  for i, row in enumerate(probabilities):
    class_id = int(np.argmax(row))
    rows.append({'index': i, 'label': int(labels[i]), 'class_id': class_id, 'probability': float(row[class_id])})
    logging.info('Prediction %d: class %d (p=%.3f), label %d', i, class_id, row[class_id], labels[i])
  return rows


def run():
  batch_size = training.effective_batch_size(FLAGS.batch_size, FLAGS.use_tpu)
  model_dir = FLAGS.model_dir or default_model_dir()
  logging.info('Data directory: %s', FLAGS.data_dir)
  logging.info('Model directory: %s', model_dir)
  prepare.ensure_data(FLAGS.data_dir, FLAGS.source_dir, FLAGS.download_timeout, FLAGS.validation_size)
  records.require_split(FLAGS.data_dir, 'train')
  test_path = records.require_split(FLAGS.data_dir, 'test')

  strategy = build_strategy((FLAGS.tpu_name or FLAGS.master) if FLAGS.use_tpu else None,
                            FLAGS.tpu_zone, FLAGS.gcp_project)
  check_batches_split(strategy, [batch_size, FLAGS.eval_batch_size])
  model = build_model(strategy, FLAGS.learning_rate, FLAGS.lr_decay_steps, FLAGS.lr_decay_rate,
                      steps_per_execution=FLAGS.iterations)
  manager = build_checkpoint_manager(model, model_dir)
  logging.info('Training %d steps, batch %d, on %d replica(s) of %s.', FLAGS.train_steps, batch_size,
               strategy.num_replicas_in_sync, type(strategy).__name__)
  train(model, manager, make_dataset(FLAGS.data_dir, 'train', True, batch_size), FLAGS.train_steps,
        FLAGS.save_checkpoints_steps, summary_every=FLAGS.iterations)

  num_test = records.count_examples(test_path)
  eval_steps = num_test // FLAGS.eval_batch_size
  if eval_steps == 0:
    raise UserError('the test split has %d examples, fewer than one eval batch (%d).'
                    % (num_test, FLAGS.eval_batch_size), 'lower --eval_batch_size.')
  eval_examples = eval_steps * FLAGS.eval_batch_size
  # Like TPUEstimator.evaluate on a TPU, Keras needs the number of steps when steps_per_execution > 1: it runs
  # whole executions and cannot find the end of the input inside one.
  metrics = model.evaluate(make_dataset(FLAGS.data_dir, 'test', False, FLAGS.eval_batch_size), steps=eval_steps,
                           return_dict=True, verbose=0)
  global_step = int(model.optimizer.iterations.numpy())
  logging.info('Test accuracy %.4f, loss %.4f over %d examples (global step %d).', metrics['accuracy'],
               metrics['loss'], eval_examples, global_step)

  predictions = log_predictions(model, test_path, FLAGS.num_predictions, FLAGS.eval_batch_size)
  results.write_run_summary(os.path.join(model_dir, RESULTS_FILE), global_step, metrics['accuracy'],
                            metrics['loss'], eval_examples, predictions)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  exit_on_user_error(run)


if __name__ == '__main__':
  # Before the flags are parsed: on TF 1.x the program cannot run whatever they say.
  exit_on_user_error(require_tf2, tf.__version__)
  mnist_keras_flags.define_mnist_keras_flags()
  app.run(main)
