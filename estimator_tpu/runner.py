"""What --mode does for mnist.py and mnist_tpu.py alike: everything around the lesson.

Each program's main hands over its Route (estimator_tpu/routes.py): its builders, and how it trains, evaluates,
predicts and exports with its estimator. That is where the TPU rules live, so it stays in the programs, side by
side. The runner does the rest, the same way for both: the mode, the model directory and checkpoint, data
preparation, pre-flights (storage, the TPU, a checkpoint of another model), seeds, progress lines, the accounting
of exact evaluation, results files, and --mode=check_tpu (estimator_tpu/porting/readiness/route_check.py).
"""
import os
import sys

import tensorflow.compat.v1 as tf
from absl import app
from absl import flags
from absl import logging

from estimator_tpu import model
from estimator_tpu.routes import EVALUATE
from estimator_tpu.routes import EXPORT
from estimator_tpu.routes import Job
from estimator_tpu.routes import PREDICT
from estimator_tpu.routes import PREDICT_SPLIT
from estimator_tpu.routes import Route  # noqa: F401 -- the programs build theirs as runner.Route
from estimator_tpu.routes import TRAIN
from estimator_tpu.data import prepare
from estimator_tpu.data import records
from estimator_tpu.data import spec as data_spec
from estimator_tpu.distributed import training as distributed
from estimator_tpu.porting.readiness import route_check
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime import logs
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime import progress
from estimator_tpu.runtime import results
from estimator_tpu.runtime import seeds
from estimator_tpu.runtime import storage
from estimator_tpu.runtime import tf_errors
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import training_interrupted
from estimator_tpu.runtime.errors import exit_on_user_error
from estimator_tpu.runtime.errors import preparation_interrupted
from estimator_tpu.tpu import cluster as tpu_cluster

CHECK_TPU = 'check_tpu'
TRAINING_MODES = ('all', 'train', 'train_and_evaluate')
EXPORT_SUBDIR = 'export'


class Run(object):
  """One run of a route: the flags, the model directory, the resolved TPU, the run's seed and the hooks that turn
  TensorFlow errors into one clear line (runtime/tf_errors.py)."""

  def __init__(self, fv, route, model_dir, cluster, seed, error_hooks):
    self.fv = fv
    self.route = route
    self.model_dir = model_dir
    self.cluster = cluster
    self.seed = seed
    self.error_hooks = error_hooks

  def estimator(self, phase, graph_seed=None):
    job = Job(self.model_dir, self.cluster, checkpoints.warm_start_checkpoint(self.fv.warm_start_from,
                                                                              self.model_dir),
              graph_seed, phase)
    return self.route.build_estimator(self.fv, job)

  def training_estimator(self):
    """The estimator for one train() call, seeded for the step it starts from (seeds.training_graph_seed)."""
    graph_seed = seeds.training_graph_seed(self.seed, self.model_dir)
    estimator = self.estimator(TRAIN, graph_seed)
    seeds.seed_host_generators(graph_seed)  # right before the graph is built: the same draws every run
    return estimator

  def train(self, max_steps):
    fv = self.fv
    records.require_split(fv.data_dir, 'train')
    logging.info('Training to step %d, batch %d, on %s.', max_steps, fv.batch_size,
                 'TPU' if self.route.on_tpu(fv) else 'CPU')
    # The host sees a TPU only between loops of --iterations steps: progress is logged once per loop there.
    every = progress.every_steps(fv.log_every_steps, self.route.on_tpu(fv), fv.iterations if self.route.tpu else None)
    estimator = self.training_estimator()
    hooks = self.error_hooks + [progress.TrainingProgress(max_steps, fv.batch_size, every),
                                FlushEventsAtEnd(self.model_dir)]
    self.route.train(fv, estimator, max_steps, hooks)

  def evaluate(self, checkpoint=None):
    """Evaluation of --eval_split (or its first --eval_steps batches); returns (metrics, examples counted)."""
    return evaluate(self.fv, self.route, self.estimator(EVALUATE), checkpoint)

  def predict(self, checkpoint=None):
    return predict(self.fv, self.route, self.estimator(PREDICT), checkpoint)


def evaluation_route(use_tpu, eval_on_tpu, eval_batch_size):
  """One sentence for the log: where evaluate() runs under this configuration, and why there."""
  if not use_tpu:
    return 'Evaluating on the CPU (--use_tpu=false): one input_fn call with the global batch %d.' % eval_batch_size
  if not eval_on_tpu:
    return ('Evaluating on the CPU of the TPU host (--eval_on_tpu=false; TPUEstimator runs it in a session on '
            'RunConfig.evaluation_master, the TPU master): one input_fn call with the global batch %d.'
            % eval_batch_size)
  return ('Evaluating on the TPU with SLICED input: input_fn runs once, on TPU host 0, with the global batch %d, and '
          'TensorFlow splits every batch over the cores (per-host evaluation is refused on more than one host by TF '
          '1.15).' % eval_batch_size)


def prediction_route(use_tpu, predict_batch_size):
  """One sentence for the log: where predict() runs, and why there."""
  if not use_tpu:
    return 'Predicting on the CPU (--use_tpu=false), batches of %d.' % predict_batch_size
  return ('Predicting on the TPU with SLICED input: input_fn runs once, on TPU host 0, with the global batch %d; '
          'TensorFlow pads the short last batch and drops the padded rows (per-host prediction is refused on more '
          'than one host).' % predict_batch_size)


class FlushEventsAtEnd(tf.train.SessionRunHook):
  """Flushes the event file of model_dir (the graph, checkpoint events) when a train() call ends.

  With Estimator's summary saver off (save_summary_steps=None, tpu/run_config.py) nothing else does
  before the writer's own 120 s timer, so a reader in the same process, or TensorBoard during a
  short run, would find the file cut short.
  """

  def __init__(self, model_dir):
    self._model_dir = model_dir

  def end(self, session):
    tf.summary.FileWriterCache.get(self._model_dir).flush()


def evaluate(fv, route, estimator, checkpoint=None):
  """route.evaluate with its accounting: every example of the split counted once; returns (metrics, counted)."""
  path = records.require_split(fv.data_dir, fv.eval_split)
  num_examples = records.count_examples(path)
  if num_examples == 0:
    raise UserError('%s has no examples.' % path, 'prepare the data again (python -m tools.prepare_data).')
  counted = num_examples if fv.eval_steps is None else min(num_examples, fv.eval_steps * fv.eval_batch_size)
  if route.tpu:
    logging.info(evaluation_route(fv.use_tpu, fv.eval_on_tpu, fv.eval_batch_size))
  batches = -(-counted // fv.eval_batch_size)
  # name= gives each split its own TensorBoard directory, model_dir/eval_<split>.
  metrics = route.evaluate(fv, estimator, checkpoint, [progress.EvaluationProgress(batches, fv.eval_split)])
  logging.info('%s accuracy %.4f, mean loss %.4f over %d examples (global step %d).', fv.eval_split,
               metrics['accuracy'], metrics['mean_loss'], counted, metrics['global_step'])
  return metrics, counted


def predict(fv, route, estimator, checkpoint=None):
  """The first --num_predictions test images (-1: all) predicted, as rows next to their labels."""
  path = records.require_split(fv.data_dir, PREDICT_SPLIT)
  available = records.count_examples(path)
  count = available if fv.num_predictions < 0 else min(fv.num_predictions, available)
  if count == 0:
    logging.info('No predictions: %s.', '--num_predictions=0' if fv.num_predictions == 0 else '%s is empty' % path)
    return []
  if route.tpu:
    logging.info(prediction_route(fv.use_tpu, fv.eval_batch_size))
  labels = records.read_split(path)[1][:count]
  rows = results.prediction_rows(route.predict(fv, estimator, checkpoint, count), labels)
  logging.info('Predicted %d %s images.', len(rows), PREDICT_SPLIT)
  return rows


def prepare_data(fv):
  logging.info('Data directory: %s', fv.data_dir)
  try:
    prepare.ensure_data(fv.data_dir, fv.source_dir, fv.download_timeout, fv.validation_size)
  except KeyboardInterrupt:
    raise preparation_interrupted(fv.data_dir) from None


def prepare_training(run):
  # Before a download or a training run could be wasted on a model_dir that cannot take checkpoints.
  preflight.require_writable_dir(run.model_dir, 'model_dir')
  seeds.log_seed(run.seed, run.fv.seed is None)
  prepare_data(run.fv)


def run_all(run):
  """The classic mnist_tpu run: train, evaluate, predict; the results also go to <model_dir>/<results_file>."""
  fv = run.fv
  prepare_training(run)
  run.train(fv.train_steps)
  metrics, counted = run.evaluate()
  return results.write_run_summary(
      os.path.join(run.model_dir, run.route.results_file), metrics['global_step'], metrics['accuracy'],
      metrics['mean_loss'], counted, write_predictions(fv, run.predict()), split=fv.eval_split, seed=run.seed)


def run_train(run):
  prepare_training(run)
  run.train(run.fv.train_steps)


def run_evaluate(run):
  checkpoint = checkpoints.find_model_checkpoint(run.fv.checkpoint_path, run.model_dir)
  prepare_data(run.fv)
  return run.evaluate(checkpoint)


def run_train_and_evaluate(run):
  """Trains to --train_steps, evaluating after every --eval_every_steps and at the end; returns the last result."""
  fv = run.fv
  prepare_training(run)
  latest = checkpoints.latest_checkpoint(run.model_dir)
  step = checkpoints.checkpoint_step(latest) if latest else 0
  if step >= fv.train_steps:
    logging.info('%s is already at step %d (--train_steps=%d): evaluating only.', run.model_dir, step,
                 fv.train_steps)
    return run.evaluate()
  while step < fv.train_steps:
    step = min(step + fv.eval_every_steps, fv.train_steps)
    run.train(step)  # a new estimator per stretch: each gets a graph seed of its own (seeds.graph_seed)
    evaluation = run.evaluate()
  return evaluation


def run_predict(run):
  checkpoint = checkpoints.find_model_checkpoint(run.fv.checkpoint_path, run.model_dir)
  prepare_data(run.fv)
  return write_predictions(run.fv, run.predict(checkpoint))


def write_predictions(fv, predictions):
  """Writes the prediction rows to --predictions_file, if one is given; returns them."""
  if fv.predictions_file:
    results.write_predictions_csv(fv.predictions_file, predictions)
    logging.info('Wrote %d predictions to %s.', len(predictions), fv.predictions_file)
  return predictions


def export_base(fv, model_dir):
  """Where --mode=export writes its timestamped SavedModel folder, and the flag that says so."""
  if fv.export_dir:
    return fv.export_dir, 'export_dir'
  return os.path.join(model_dir, EXPORT_SUBDIR), 'model_dir'


def check_output_paths(fv, model_dir):
  """The files a mode writes besides model_dir can be written there, before any work: an unwritable place is one
  line naming the flag that chose it, not a PermissionDenied after training."""
  if fv.mode == EXPORT:
    base, flag_name = export_base(fv, model_dir)
    preflight.require_directory_path(base, flag_name)
    preflight.require_writable_dir(base, flag_name)
  if fv.mode in ('all', 'predict') and fv.predictions_file:
    preflight.require_writable_file(fv.predictions_file, 'predictions_file')


def run_export(run):
  """Writes a SavedModel (serving signatures in estimator_tpu/serving.py) under --export_dir.

  TensorFlow writes it into a temporary folder next to the final one and renames it when complete; a failure
  part-way leaves that folder behind, so whatever the failed export added under the base is removed again.
  """
  checkpoint = checkpoints.find_model_checkpoint(run.fv.checkpoint_path, run.model_dir)
  base, flag_name = export_base(run.fv, run.model_dir)
  before = set(tf.io.gfile.listdir(base)) if tf.io.gfile.isdir(base) else None
  try:
    path = run.route.export(run.fv, run.estimator(EXPORT), base, checkpoint)
  except BaseException as e:
    remove_added(base, before)
    full = tf_errors.disk_full_error(e, '--%s=%s' % (flag_name, base), 'export again')
    if full is not None:
      raise full from e
    raise
  path = path.decode() if isinstance(path, bytes) else path
  logging.info('Exported %s to %s.', checkpoint, path)
  return path


def remove_added(directory, before):
  """Removes what was added to `directory` since it held `before` (None: it did not exist, so all of it)."""
  if not tf.io.gfile.isdir(directory):
    return
  if before is None:
    tf.io.gfile.rmtree(directory)
    return
  for name in set(tf.io.gfile.listdir(directory)) - before:
    path = os.path.join(directory, name.rstrip('/'))
    if tf.io.gfile.isdir(path):
      tf.io.gfile.rmtree(path)
    else:
      tf.io.gfile.remove(path)


MODES = {
    'all': run_all,
    'train': run_train,
    'evaluate': run_evaluate,
    'train_and_evaluate': run_train_and_evaluate,
    'predict': run_predict,
    'export': run_export,
}


def connect_tpu(fv):
  """Resolves --tpu_name and checks that the TPU is there: seconds, instead of TPUEstimator's minutes of retries.

  A TPU Node must answer on its worker port; on a TPU VM (--tpu_name=local) the TPU must be attached here.
  """
  cluster = None
  if fv.tpu_name:
    cluster = tpu_cluster.resolve_tpu_cluster(fv.tpu_name, fv.tpu_zone, fv.gcp_project)
  tpu_cluster.require_tpu_reachable(fv.master, cluster)
  return cluster


def run(fv, route):
  """Runs --mode with the route; returns what the mode returns (check_tpu: the exit status)."""
  if fv.mode == CHECK_TPU:
    return route_check.check_route(fv, route)
  batch_sizes.resolve(fv, route.on_tpu(fv))
  # An unreachable TPU fails in seconds. An export runs on this machine only (TPUEstimator builds even its
  # TPU metagraph without a TPU), so it neither resolves nor probes one.
  cluster = connect_tpu(fv) if route.on_tpu(fv) and fv.mode != EXPORT else None
  distributed.task_from_tf_config(distributed=False)  # a cluster in TF_CONFIG is tools/mnist_cluster.py's
  storage.check_flag_paths(fv)  # every gs:// path of the run answers, within seconds, before TF touches one
  model_dir = checkpoints.resolve_model_dir(fv.model_dir, fv.checkpoint_path, route.name)
  logging.info('Mode %s; model directory: %s', fv.mode, model_dir)
  checkpoints.require_own_route(model_dir, keras_route=False)
  # A checkpoint of another architecture fails here, clearly, rather than somewhere inside the restore.
  checkpoints.check_checkpoint(model_dir, lambda: model.variable_shapes(route.build_model_fn(fv, model_dir),
                                                                       data_spec.read(fv.data_dir)))
  check_output_paths(fv, model_dir)
  seed = seeds.resolve(fv.seed)
  # TensorFlow errors a user can fix (damaged data, NaN loss, ...) end as one UserError line, not a traceback.
  with tf_errors.TensorFlowErrors(fv.data_dir, model_dir) as guard:
    try:
      result = MODES[fv.mode](Run(fv, route, model_dir, cluster, seed, list(guard.hooks)))
    except KeyboardInterrupt:
      raise interrupted(fv, model_dir, guard.steps.after) from None
  logging.info('%s', where_it_is(fv, route, model_dir, result))
  return result


def where_it_is(fv, route, model_dir, result):
  """The run's last line: where what it made is -- the checkpoint, the results file, the predictions, the export."""
  parts = []
  if fv.mode in TRAINING_MODES:
    latest = checkpoints.latest_checkpoint(model_dir)
    parts.append('checkpoint %s' % latest if latest else 'model directory %s' % model_dir)
  if fv.mode == 'all':
    parts.append('results %s' % os.path.join(model_dir, route.results_file))
  if fv.mode in ('all', 'predict') and fv.predictions_file:
    parts.append('predictions %s' % fv.predictions_file)
  if fv.mode == EXPORT:
    parts.append('SavedModel %s' % result)
  if fv.mode in (EVALUATE, 'train_and_evaluate'):
    parts.append('evaluation events %s' % os.path.join(model_dir, 'eval_%s' % fv.eval_split))
  return 'Done (--mode=%s): %s.' % (fv.mode, '; '.join(parts))


def interrupted(fv, model_dir, step):
  """What Ctrl-C left, as errors.training_interrupted tells it, from the checkpoints in model_dir."""
  latest = checkpoints.latest_checkpoint(model_dir)
  saved = checkpoints.checkpoint_step(latest) if latest else None
  return training_interrupted(fv.mode, model_dir, step, latest, saved, fv.mode in TRAINING_MODES)


def run_program(argv, route):
  """What a program's main does: runs --mode with its route, the flags absl parsed; a user's mistake is one
  `error: ... Fix: ...` line, and --mode=check_tpu's verdict is the exit status."""
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  fv = flags.FLAGS
  logs.configure(fv.tf_log)
  result = exit_on_user_error(run, fv, route)
  if fv.mode == CHECK_TPU:
    sys.exit(result)
