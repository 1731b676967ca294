"""What --mode does, for either Estimator route: the same flow whether the estimator is a plain Estimator
(mnist.py) or a TPUEstimator (mnist_tpu.py).

A program hands over its `Route`: how it builds its estimator and how it trains, evaluates and predicts with it.
Those four functions are where the TPU rules live, so they stay in the programs, where `diff mnist.py
mnist_tpu.py` shows them side by side; everything else a mode does (find the model directory and the checkpoint,
prepare the data, write the results, export) is the same for both routes and lives here.
"""
import collections
import os

from absl import logging

from estimator_tpu import serving
from estimator_tpu.data import prepare
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime import results
from estimator_tpu.runtime import seeds
from estimator_tpu.runtime import storage
from estimator_tpu.runtime import tf_errors

EXPORT_SUBDIR = 'export'

# name: the program (for a default model directory); results_file: what `all` writes into the model directory.
# build_estimator(fv, model_dir, cluster, seed=None) -> estimator; train(fv, estimator, max_steps, hooks);
# evaluate(fv, estimator, checkpoint) -> (metrics, examples counted); predict(fv, estimator, checkpoint) -> rows.
Route = collections.namedtuple('Route', ['name', 'results_file', 'build_estimator', 'train', 'evaluate', 'predict'])
# What every mode works with besides the flags: where the model lives, the resolved TPU (None off TPU or when it
# is named by --master), the hooks that turn TensorFlow errors into clear messages (runtime/tf_errors.py) and the
# run's seed (--seed, or one picked for the run; runtime/seeds.py).
Job = collections.namedtuple('Job', ['model_dir', 'cluster', 'train_hooks', 'seed', 'seed_picked'])


def prepare_data(fv):
  logging.info('Data directory: %s', fv.data_dir)
  prepare.ensure_data(fv.data_dir, fv.source_dir, fv.download_timeout, fv.validation_size)


def prepare_training(fv, job):
  # Before a download or a training run could be wasted on a model_dir that cannot take checkpoints.
  preflight.require_writable_dir(job.model_dir, 'model_dir')
  seeds.log_seed(job.seed, job.seed_picked)
  prepare_data(fv)


def build_training_estimator(fv, route, job):
  """The estimator for one train() call, seeded for the step it starts from (seeds.training_graph_seed)."""
  seed = seeds.training_graph_seed(job.seed, job.model_dir)
  estimator = route.build_estimator(fv, job.model_dir, job.cluster, seed=seed)
  seeds.seed_host_generators(seed)  # right before the graph is built, so that the same draws come out each run
  return estimator


def run_all(fv, route, job):
  """The classic mnist_tpu run: train, evaluate, predict; the results also go to <model_dir>/<results_file>."""
  prepare_training(fv, job)
  estimator = build_training_estimator(fv, route, job)
  route.train(fv, estimator, fv.train_steps, job.train_hooks)
  metrics, counted = route.evaluate(fv, estimator, None)
  return results.write_run_summary(
      os.path.join(job.model_dir, route.results_file), metrics['global_step'], metrics['accuracy'],
      metrics['mean_loss'], counted, write_predictions(fv, route.predict(fv, estimator, None)), split=fv.eval_split,
      seed=job.seed)


def run_train(fv, route, job):
  prepare_training(fv, job)
  route.train(fv, build_training_estimator(fv, route, job), fv.train_steps, job.train_hooks)


def run_evaluate(fv, route, job):
  checkpoint = checkpoints.find_model_checkpoint(fv.checkpoint_path, job.model_dir)
  prepare_data(fv)
  return route.evaluate(fv, route.build_estimator(fv, job.model_dir, job.cluster), checkpoint)


def run_train_and_evaluate(fv, route, job):
  """Trains to --train_steps, evaluating after every --eval_every_steps and at the end; returns the last result."""
  prepare_training(fv, job)
  latest = checkpoints.latest_checkpoint(job.model_dir)
  step = checkpoints.checkpoint_step(latest) if latest else 0
  if step >= fv.train_steps:
    logging.info('%s is already at step %d (--train_steps=%d): evaluating only.', job.model_dir, step,
                 fv.train_steps)
    return route.evaluate(fv, route.build_estimator(fv, job.model_dir, job.cluster), None)
  while step < fv.train_steps:
    step = min(step + fv.eval_every_steps, fv.train_steps)
    # A new estimator per stretch: each train() call gets a graph seed of its own (seeds.graph_seed).
    estimator = build_training_estimator(fv, route, job)
    route.train(fv, estimator, step, job.train_hooks)
    evaluation = route.evaluate(fv, estimator, None)
  return evaluation


def run_predict(fv, route, job):
  checkpoint = checkpoints.find_model_checkpoint(fv.checkpoint_path, job.model_dir)
  prepare_data(fv)
  return write_predictions(fv, route.predict(fv, route.build_estimator(fv, job.model_dir, job.cluster), checkpoint))


def write_predictions(fv, predictions):
  """Writes the prediction rows to --predictions_file, if one is given; returns them."""
  if fv.predictions_file:
    results.write_predictions_csv(fv.predictions_file, predictions)
    logging.info('Wrote %d predictions to %s.', len(predictions), fv.predictions_file)
  return predictions


def run_export(fv, route, job):
  """Writes a SavedModel (serving signatures in estimator_tpu/serving.py) under --export_dir."""
  checkpoint = checkpoints.find_model_checkpoint(fv.checkpoint_path, job.model_dir)
  export_base = fv.export_dir or os.path.join(job.model_dir, EXPORT_SUBDIR)
  path = route.build_estimator(fv, job.model_dir, job.cluster).export_saved_model(
      export_base, serving.serving_input_receiver_fn, checkpoint_path=checkpoint)
  path = path.decode() if isinstance(path, bytes) else path
  logging.info('Exported %s to %s.', checkpoint, path)
  return path


MODE_FUNCTIONS = {
    'all': run_all,
    'train': run_train,
    'evaluate': run_evaluate,
    'train_and_evaluate': run_train_and_evaluate,
    'predict': run_predict,
    'export': run_export,
}


def run(fv, route, cluster=None, mode_functions=None):
  """Runs --mode with the route; returns what the mode returns."""
  storage.check_flag_paths(fv)  # every gs:// path of the run answers, within seconds, before TF touches one
  model_dir = checkpoints.resolve_model_dir(fv.model_dir, fv.checkpoint_path, route.name)
  logging.info('Mode %s; model directory: %s', fv.mode, model_dir)
  seed = seeds.resolve(fv.seed)
  # TensorFlow errors a user can fix (damaged data, NaN loss, ...) end as one UserError line, not a traceback.
  with tf_errors.TensorFlowErrors(fv.data_dir, model_dir) as guard:
    job = Job(model_dir, cluster, guard.hooks, seed, seed_picked=fv.seed is None)
    return (mode_functions or MODE_FUNCTIONS)[fv.mode](fv, route, job)
