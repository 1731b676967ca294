"""Trains, evaluates and predicts the MNIST CNN with Keras and tf.distribute: the TF 2.x route.

  python mnist_keras.py --use_tpu=false --master=''     the default strategy, on this machine
  python mnist_keras.py --tpu_name=local                TPUStrategy on the TPU of a TPU VM
  python mnist_keras.py --mode=check_tpu --tpu_type=v6e-8   would it run there? (no TPU needed)

The flags, data and network are mnist_tpu.py's. tf.estimator is gone from TensorFlow 2.16 on; this
is what replaces TPUEstimator: TPUClusterResolver -> connect_to_cluster -> initialize_tpu_system ->
TPUStrategy, a model built and compiled inside strategy.scope(), and steps_per_execution for
iterations_per_loop. Off TPU the default strategy runs the very same code. It is the route for the
TPU generations whose TensorFlow runtime is PJRT only (v5e, v5p, v6e; docs/RUNNING.md). --mode is
`all` (train, evaluate, predict) or `check_tpu` (estimator_tpu/porting/readiness/
keras_route_check.py).
TensorFlow 2.x only; on TF 1.x it stops with a message.
"""
import os
import sys

import numpy as np
import tensorflow as tf
from absl import app
from absl import flags
from absl import logging

from estimator_tpu import model as model_lib
from estimator_tpu.data import prepare
from estimator_tpu.data import records
from estimator_tpu.data import spec as data_spec
from estimator_tpu.keras import checkpoints as keras_checkpoints
from estimator_tpu.keras import model as keras_model
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime import logs
from estimator_tpu.runtime import progress
from estimator_tpu.runtime import results
from estimator_tpu.runtime import seeds
from estimator_tpu.runtime import storage
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import exit_on_user_error
from estimator_tpu.runtime.errors import preparation_interrupted
from estimator_tpu.runtime.errors import training_interrupted
from estimator_tpu.tpu import cluster as tpu_cluster
from estimator_tpu.tpu import input_fn as input_fn_lib
from flags import help as program_help
from flags import mnist_keras as mnist_keras_flags
from flags import training

FLAGS = flags.FLAGS
RESULTS_FILE = 'mnist_keras_results.json'
MODES = ('all', 'check_tpu')


def require_tf2(version):
  if int(version.split('.')[0]) < 2:
    raise UserError('mnist_keras.py is the TensorFlow 2 route (tf.distribute.TPUStrategy, Keras '
                    'steps_per_execution); this is TensorFlow %s.' % version,
                    'run it with TensorFlow 2.x, e.g. `bash scripts/make_venv.sh tf2` and '
                    '`.venv-tf2/bin/python mnist_keras.py ...`; on TensorFlow 1.x use '
                    'mnist_tpu.py.')


def build_strategy(tpu=None, tpu_zone=None, gcp_project=None, dev_root='/dev', sys_root='/sys'):
  """TPUStrategy for a TPU name, a grpc:// address or 'local' (a TPU VM); the default strategy when
  `tpu` is None.

  TPU rule 2 (where the TPU is): TPUEstimator did the first three steps itself; in TF 2 they are the
  program's job, in this order: resolve the TPU's address, make its devices known to this process,
  then initialise the TPU system (which also wipes its memory) before the strategy places anything
  on it. On a TPU VM the TPU is already a device of this process: there is no cluster to connect to,
  so that step is skipped and the pre-flight checks that a TPU is attached here.
  """
  if not tpu:
    return tf.distribute.get_strategy()
  resolver = tpu_cluster.resolve_tpu_cluster(tpu, tpu_zone, gcp_project)
  local = tpu_cluster.is_local_tpu(tpu)
  if local:
    tpu_cluster.require_tpu_reachable(cluster=resolver, dev_root=dev_root, sys_root=sys_root)
  try:
    if not local:
      tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
  except (tf.errors.OpError, ValueError, RuntimeError) as e:
    raise UserError('could not connect to TPU %r: %s' % (tpu, e),
                    'check that the TPU is up (gcloud compute tpus list) and runs a TF 2 runtime '
                    'matching this TensorFlow.')
  return tf.distribute.TPUStrategy(resolver)


def check_batches_split(strategy, batch_sizes):
  """TPU rule 16 (even batches): each global batch splits evenly over the replicas (TPU cores), as
  under TPUEstimator."""
  replicas = strategy.num_replicas_in_sync
  for batch_size in batch_sizes:
    if batch_size % replicas:
      raise UserError('batch size %d does not split evenly over %d TPU cores.'
                      % (batch_size, replicas),
                      'pass --batch_size and --eval_batch_size divisible by %d.' % replicas)


def make_dataset(data_dir, batch_size):
  """mnist_tpu.py's training input_fn itself, at the global batch: TPUStrategy splits each batch
  over the cores.

  Static shapes (drop_remainder) are not required under TPUStrategy -- its dynamic padder copes with
  a short batch -- but they let XLA compile one program and waste no padding, as under TPUEstimator.
  """
  return input_fn_lib.train_input_fn_builder(data_dir)({'batch_size': batch_size})


def make_eval_dataset(data_dir, split, batch_size):
  """mnist_tpu.py's exact-evaluation input at the global batch, and its number of steps.

  The last batch is padded with rows of weight 0, passed to Keras as sample weights: they count in
  neither the accuracy nor the mean loss (keras/model.py's weighted metrics), so every example is
  scored exactly once, as on the Estimator routes, whatever the batch size.
  """
  steps = input_fn_lib.eval_steps(data_dir, split, batch_size)
  input_fn = input_fn_lib.eval_input_fn_builder(data_dir, split, batch_size, steps)
  dataset = input_fn({'batch_size': batch_size})
  return dataset.map(lambda features, labels: (
      model_lib.features_of(features[model_lib.IMAGE_KEY]), labels,
      features[model_lib.WEIGHT_KEY])), steps


def build_model(strategy, learning_rate, decay_steps, decay_rate, steps_per_execution,
                schedule=model_lib.EXPONENTIAL, precision=model_lib.FLOAT32,
                network=model_lib.CNN, spec=data_spec.MNIST):
  """Creates and compiles the model (--model `network` for the data of `spec`) inside
  strategy.scope()."""
  # TPU rule 11 (strategy scope): inside it the strategy creates every variable, the model's and
  # the optimiser's: one copy on each TPU core, kept in sync. Built outside, they live on the host.
  with strategy.scope():
    # TPU rule 20 (bfloat16): --precision=bfloat16 uses the mixed_bfloat16 policy (keras/model.py).
    model = keras_model.build_keras_network(network, spec, precision)
    keras_model.compile_model(model, learning_rate, decay_steps, decay_rate, steps_per_execution,
                              schedule)
  return model


def train(model, manager, dataset, train_steps, save_checkpoints_steps, summary_every,
          extra_callbacks=()):
  """Trains until the optimiser has taken `train_steps` steps in total, resuming from model_dir
  (max_steps).

  `extra_callbacks` (e.g. progress.KerasTrainingProgress) run after the checkpoint and TensorBoard
  ones.
  """
  keras_checkpoints.restore(manager)
  done = int(model.optimizer.iterations.numpy())
  if manager.latest_checkpoint:
    logging.info('Restored %s (step %d).', manager.latest_checkpoint, done)
  if done >= train_steps:
    logging.info('Already trained %d steps; nothing to do.', done)
    return
  callbacks = training_callbacks(manager, save_checkpoints_steps, summary_every)
  # verbose=0: the progress lines come from progress.KerasTrainingProgress, in the format of the
  # other routes.
  model.fit(dataset, epochs=1, steps_per_epoch=train_steps - done,
            callbacks=callbacks + list(extra_callbacks), verbose=0)


def training_callbacks(manager, save_checkpoints_steps, summary_every):
  """The checkpoints and TensorBoard summaries of a training run (what --mode=check_tpu checks)."""
  # TPU rule 7 (summaries on the host): Keras writes them on the host, from the values each
  # execution returns ('batch_loss', 'batch_accuracy').
  return [keras_checkpoints.SaveCheckpoints(manager, save_checkpoints_steps),
          tf.keras.callbacks.TensorBoard(log_dir=manager.directory, update_freq=summary_every)]


def predict_images(test_path, count):
  """The first `count` test images as model.predict takes them: float32 [count, pixels]."""
  images = records.read_split(test_path)[0][:count]
  return images.reshape(len(images), -1).astype(np.float32)


def log_predictions(model, test_path, count, batch_size):
  """Predicts the first `count` test images and logs them next to their labels."""
  if count == 0:
    return []
  _, labels = records.read_split(test_path)
  images = predict_images(test_path, count)
  # A short last batch is fine even on a TPU: TPUStrategy pads it (its dynamic padder, on by
  # default), as TPUEstimator.predict did itself.
  probabilities = tf.nn.softmax(model.predict(images, batch_size=batch_size, verbose=0)).numpy()
  outputs = ({'class_ids': np.argmax(row), 'probabilities': row} for row in probabilities)
  return results.prediction_rows(outputs, labels)


def check_tpu(fv):
  """--mode=check_tpu: the readiness check of this program's own model, datasets and callbacks."""
  # Imported when the check runs: it is tooling, not the route.
  from estimator_tpu.porting.readiness import keras_route_check

  def build(strategy):
    return build_model(strategy, steps_per_execution=fv.iterations, precision=fv.precision,
                       network=fv.model, spec=data_spec.read(fv.data_dir),
                       **training.learning_rate_args(fv))

  def callbacks(model):
    model_dir = fv.model_dir or keras_route_check.scratch_model_dir()
    manager = keras_checkpoints.build_checkpoint_manager(model, model_dir)
    return training_callbacks(manager, fv.save_checkpoints_steps, fv.iterations)

  route = keras_route_check.KerasRoute(
      build, lambda batch_size: make_dataset(fv.data_dir, batch_size),
      lambda split, batch_size: make_eval_dataset(fv.data_dir, split, batch_size),
      lambda count: predict_images(records.split_path(fv.data_dir, 'test'), count), callbacks)
  return keras_route_check.check_keras_route(fv, route)


def run(fv):
  if fv.mode not in MODES:
    raise UserError('mnist_keras.py runs --mode=all (train, evaluate, predict) or '
                    '--mode=check_tpu, not --mode=%s.' % fv.mode,
                    'drop --mode, or use mnist_tpu.py for the other modes.')
  if fv.mode == 'check_tpu':
    return check_tpu(fv)
  storage.check_flag_paths(fv)  # every gs:// path answers, within seconds, before TF touches one
  # The defaults for where the run is (estimator_tpu/runtime/batch_sizes.py): TPU or this machine.
  batch_sizes.resolve(fv, fv.use_tpu)
  batch_size, eval_batch_size = fv.batch_size, fv.eval_batch_size
  model_dir = fv.model_dir or checkpoints.default_model_dir('mnist_keras')
  logging.info('Data directory: %s', fv.data_dir)
  logging.info('Model directory: %s', model_dir)
  checkpoints.require_own_route(model_dir, keras_route=True)  # before anything is written there
  seed = seeds.resolve(fv.seed)
  seeds.log_seed(seed, picked=fv.seed is None)
  try:
    prepare.ensure_data(fv.data_dir, fv.source_dir, fv.download_timeout, fv.validation_size)
  except KeyboardInterrupt:
    raise preparation_interrupted(fv.data_dir) from None
  records.require_split(fv.data_dir, 'train')
  test_path = records.require_split(fv.data_dir, 'test')

  strategy = build_strategy((fv.tpu_name or fv.master) if fv.use_tpu else None,
                            fv.tpu_zone, fv.gcp_project)
  check_batches_split(strategy, [batch_size, eval_batch_size])
  # Python's, NumPy's and TensorFlow's global seeds: the initial weights, the shuffle and dropout
  # follow from them. Folded with the step the run resumes from, as the Estimator routes do
  # (seeds.graph_seed).
  tf.keras.utils.set_random_seed(seeds.graph_seed(seed, keras_checkpoints.latest_step(model_dir)))
  # TPU rule 8 (iterations per loop): steps_per_execution is iterations_per_loop's counterpart.
  model = build_model(strategy, steps_per_execution=fv.iterations, precision=fv.precision,
                      network=fv.model, spec=data_spec.read(fv.data_dir),
                      **training.learning_rate_args(fv))
  manager = keras_checkpoints.build_checkpoint_manager(model, model_dir)
  logging.info('Training %d steps, batch %d, on %d replica(s) of %s.', fv.train_steps, batch_size,
               strategy.num_replicas_in_sync, type(strategy).__name__)
  try:
    train(model, manager, make_dataset(fv.data_dir, batch_size), fv.train_steps,
          fv.save_checkpoints_steps, summary_every=fv.iterations,
          extra_callbacks=[progress.KerasTrainingProgress(
              fv.train_steps, batch_size,
              progress.every_steps(fv.log_every_steps, fv.use_tpu, fv.iterations))])
  except KeyboardInterrupt:
    latest = manager.latest_checkpoint
    raise training_interrupted(fv.mode, model_dir, int(model.optimizer.iterations.numpy()),
                               latest, keras_checkpoints.latest_step(model_dir)) from None

  num_test = records.count_examples(test_path)
  dataset, eval_steps = make_eval_dataset(fv.data_dir, 'test', eval_batch_size)
  # TPU rule 9 (steps): with steps_per_execution > 1 Keras runs whole executions and cannot find the
  # end of the input inside one, so it needs the number of steps, like TPUEstimator.evaluate.
  metrics = model.evaluate(dataset, steps=eval_steps, return_dict=True, verbose=0,
                           callbacks=[progress.KerasEvaluationProgress(eval_steps, 'test')])
  global_step = int(model.optimizer.iterations.numpy())
  logging.info('Test accuracy %.4f, mean loss %.4f over %d examples (global step %d).',
               metrics['accuracy'], metrics['mean_loss'], num_test, global_step)

  predictions = log_predictions(model, test_path, fv.num_predictions, eval_batch_size)
  results_path = os.path.join(model_dir, RESULTS_FILE)
  results.write_run_summary(results_path, global_step, metrics['accuracy'], metrics['mean_loss'],
                            num_test, predictions, seed=seed)
  logging.info('Done (--mode=all): checkpoint %s; results %s.', manager.latest_checkpoint,
               results_path)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  logs.configure(FLAGS.tf_log)
  status = exit_on_user_error(run, FLAGS)
  if FLAGS.mode == 'check_tpu':
    sys.exit(status)


if __name__ == '__main__':
  # Before the flags are parsed: on TF 1.x the program cannot run whatever they say.
  exit_on_user_error(require_tf2, tf.__version__)
  mnist_keras_flags.define_flags()
  app.run(main, flags_parser=program_help.parse_flags)
