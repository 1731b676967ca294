"""Trains, evaluates, predicts and exports the MNIST CNN with TPUEstimator -- on a Cloud TPU or on the local CPU.

Local:      python mnist_tpu.py --use_tpu=false --master=''
TPU Node:   python mnist_tpu.py --tpu_name=NAME [--tpu_zone=Z --gcp_project=P] \
                --data_dir=gs://BUCKET/mnist --model_dir=gs://BUCKET/mnist/model      (TF 1.15 or 2.15)
TPU VM:     python mnist_tpu.py --tpu_name=local --data_dir=DIR --model_dir=DIR   (TF 2.15, on the TPU VM)
Check:      python mnist_tpu.py --mode=check_tpu [the Cloud TPU flags, --tpu_type=v3-32]   (no TPU needed)

The same TPUEstimator runs in both cases; `--use_tpu=false` makes it run model_fn on the CPU. `--mode` picks what
to do (flags/modes.py); the default `all` trains, evaluates on the whole test split and logs a few predictions.

Read it next to mnist.py, the plain-Estimator program it was ported from: `diff mnist.py mnist_tpu.py` shows the
port, each difference with its TPU rule. What the modes share with mnist.py is in estimator_tpu/modes.py.
"""
import sys

import tensorflow.compat.v1 as tf
from absl import app
from absl import flags
from absl import logging

from estimator_tpu import model
from estimator_tpu import modes
from estimator_tpu.porting import readiness
from estimator_tpu.data import records
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime import logs
from estimator_tpu.runtime import progress
from estimator_tpu.runtime import results
from estimator_tpu.runtime import storage
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import exit_on_user_error
from estimator_tpu.tpu import accelerator_types
from estimator_tpu.tpu import cluster as tpu_cluster
from estimator_tpu.tpu import input_fn as input_fn_lib
from estimator_tpu.tpu import model_fn as model_fn_lib
from estimator_tpu.tpu import run_config as run_config_lib
from flags import mnist_tpu as mnist_tpu_flags
from flags import training

FLAGS = flags.FLAGS
RESULTS_FILE = 'mnist_tpu_results.json'
PREDICT_SPLIT = 'test'
# TensorBoard events are flushed once per device loop on TPU (gs:// uploads the file again on every flush), but
# every few steps on CPU, where buffered events cost peak memory (see estimator_tpu/tpu/host_call.py).
LOCAL_SUMMARY_FLUSH_STEPS = 5


def connect_tpu(fv):
  """Resolves --tpu_name and checks that the TPU is there: seconds, instead of TPUEstimator's minutes of retries.

  A TPU Node must answer on its worker port; on a TPU VM (--tpu_name=local) the TPU must be attached here.
  """
  cluster = None
  if fv.tpu_name:
    cluster = tpu_cluster.resolve_tpu_cluster(fv.tpu_name, fv.tpu_zone, fv.gcp_project)
  tpu_cluster.require_tpu_reachable(fv.master, cluster)
  return cluster


def build_model_fn(fv, model_dir):
  return model_fn_lib.model_fn_builder(
      **training.learning_rate_args(fv), summary_dir=model_dir,
      summary_flush_steps=fv.iterations if fv.use_tpu else LOCAL_SUMMARY_FLUSH_STEPS)


def build_estimator(fv, model_dir, cluster=None, save_checkpoints_steps=None, seed=None,
                    eval_on_tpu=None):
  """TPUEstimator from the flags; on CPU (use_tpu=False) it runs model_fn as a plain Estimator would.

  `cluster` is the resolved --tpu_name (connect_tpu), or None for --master or a local run.
  `save_checkpoints_steps` overrides the flag (the benchmark evaluates every checkpoint of a denser cadence).
  `seed` is the graph-level seed (runtime/seeds.py), None for none.
  `eval_on_tpu` overrides --eval_on_tpu (predict's estimator, see predict()).
  """
  eval_on_tpu = fv.eval_on_tpu if eval_on_tpu is None else eval_on_tpu
  config = run_config_lib.build_run_config(
      model_dir=model_dir, iterations_per_loop=fv.iterations, num_shards=fv.num_shards,
      save_checkpoints_steps=save_checkpoints_steps or fv.save_checkpoints_steps, master=fv.master, cluster=cluster,
      evaluates_on_tpu=fv.use_tpu and eval_on_tpu, host_call_every_n_steps=fv.host_call_every_n_steps,
      tf_random_seed=seed)
  model_fn = build_model_fn(fv, model_dir)
  # A checkpoint of another architecture fails here, clearly, rather than somewhere inside the restore.
  checkpoints.check_checkpoint(model_dir, lambda: model.variable_shapes(model_fn))
  eval_batch_size = training.effective_eval_batch_size(fv.eval_batch_size, fv.use_tpu)
  return tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, use_tpu=fv.use_tpu,
      train_batch_size=training.effective_batch_size(fv.batch_size, fv.use_tpu),
      eval_batch_size=eval_batch_size, predict_batch_size=eval_batch_size, eval_on_tpu=eval_on_tpu,
      # export_to_tpu adds a TPU metagraph (tags serve, tpu) to the CPU one (export_to_cpu stays True), so the same
      # SavedModel serves on both.
      export_to_tpu=fv.use_tpu if fv.export_to_tpu is None else fv.export_to_tpu,
      warm_start_from=checkpoints.warm_start_checkpoint(fv.warm_start_from, model_dir))


def train(fv, estimator, max_steps, hooks=None):
  records.require_split(fv.data_dir, 'train')
  batch_size = training.effective_batch_size(fv.batch_size, fv.use_tpu)
  logging.info('Training to step %d, batch %d, on %s.', max_steps, batch_size, 'TPU' if fv.use_tpu else 'CPU')
  # TPU rule (host round trips): the host sees only the boundaries of the --iterations loops, so on a TPU the
  # progress is logged once per loop by default.
  every_steps = progress.every_steps(fv.log_every_steps, fv.use_tpu, fv.iterations)
  estimator.train(input_fn_lib.input_fn_builder(fv.data_dir, 'train', is_training=True), max_steps=max_steps,
                  hooks=list(hooks or []) + [progress.TrainingProgress(max_steps, batch_size, every_steps),
                                             run_config_lib.FlushEventsAtEnd(estimator.model_dir)])


def evaluate(fv, estimator, checkpoint=None):
  """Exact evaluation of --eval_split (or its first --eval_steps batches); returns (metrics, examples counted)."""
  path = records.require_split(fv.data_dir, fv.eval_split)
  num_examples = records.count_examples(path)
  if num_examples == 0:
    raise UserError('%s has no examples.' % path, 'prepare the data again (python -m tools.prepare_data).')
  eval_batch_size = training.effective_eval_batch_size(fv.eval_batch_size, fv.use_tpu)
  # TPU rule (exact evaluation): TPUEstimator.evaluate on a TPU runs exactly `steps` full batches. Evaluation has
  # one input_fn call wherever it runs (SLICED input on the TPU, or the CPU; tpu/run_config.py), so the steps are
  # those of one pipeline; the input_fn pads to them and refuses a deployment they do not cover.
  steps, padding = input_fn_lib.eval_padding(num_examples, eval_batch_size)
  logging.info(run_config_lib.evaluation_route(fv.use_tpu, fv.eval_on_tpu, eval_batch_size))
  logging.info('Evaluating on %s: %d real examples + %d padding = %d batches of %d.', fv.eval_split,
               num_examples, padding, steps, eval_batch_size)
  counted = num_examples
  if fv.eval_steps is not None:
    if fv.eval_steps > steps:
      raise UserError('--eval_steps=%d asks for more batches than the %s split fills (%d batches of %d).'
                      % (fv.eval_steps, fv.eval_split, steps, eval_batch_size),
                      'lower --eval_steps, or leave it unset to evaluate the whole split.')
    steps, counted = fv.eval_steps, min(num_examples, fv.eval_steps * eval_batch_size)
    logging.info('--eval_steps=%d: evaluating only the first %d examples.', steps, counted)
  input_fn = input_fn_lib.eval_input_fn_builder(fv.data_dir, fv.eval_split, counted, eval_batch_size, steps)
  # name= gives each split its own TensorBoard directory, model_dir/eval_<split>.
  metrics = estimator.evaluate(input_fn, steps=steps, checkpoint_path=checkpoint, name=fv.eval_split,
                               hooks=[progress.EvaluationProgress(steps, fv.eval_split)])
  logging.info('%s accuracy %.4f, mean loss %.4f over %d examples (global step %d).', fv.eval_split,
               metrics['accuracy'], metrics['mean_loss'], counted, metrics['global_step'])
  return metrics, counted


def predict(fv, estimator, checkpoint=None):
  """Predicts the first --num_predictions test images (-1: all) and logs a few next to their labels."""
  path = records.require_split(fv.data_dir, PREDICT_SPLIT)
  available = records.count_examples(path)
  count = available if fv.num_predictions < 0 else min(fv.num_predictions, available)
  if count == 0:
    return []
  labels = records.read_split(path)[1][:count]
  predict_batch_size = training.effective_eval_batch_size(fv.eval_batch_size, fv.use_tpu)
  if fv.use_tpu and not fv.eval_on_tpu:
    # TPU rule (prediction on a pod slice): --eval_on_tpu=false evaluates on the CPU, where TensorFlow refuses
    # SLICED input, so that estimator's prediction input would be per host, which no TF accepts on more than one
    # host. Prediction runs on the TPU all the same, with an estimator whose input is SLICED.
    estimator = build_estimator(fv, estimator.model_dir, estimator.config.cluster, eval_on_tpu=True)
  logging.info(run_config_lib.prediction_route(fv.use_tpu, predict_batch_size))
  input_fn = input_fn_lib.predict_input_fn_builder(fv.data_dir, PREDICT_SPLIT, count, predict_batch_size)
  outputs = estimator.predict(input_fn, checkpoint_path=checkpoint, yield_single_examples=True)
  predictions = results.prediction_rows(outputs, labels)
  logging.info('Predicted %d %s images.', len(predictions), PREDICT_SPLIT)
  return predictions


def planned_slice(fv):
  """(SliceShape, where it comes from) for --mode=check_tpu: --tpu_type, else --num_shards cores, else a v2/v3-8."""
  if fv.tpu_type:
    return accelerator_types.parse_tpu_type(fv.tpu_type), '--tpu_type=%s' % fv.tpu_type
  if fv.num_shards:
    return (accelerator_types.shape_from_cores(fv.num_shards),
            '--num_shards=%d, 8 cores per host as on v2/v3 slices; --tpu_type names a v4 slice' % fv.num_shards)
  return (accelerator_types.shape_from_cores(accelerator_types.DEFAULT_CORES_PER_HOST),
          'no --num_shards or --tpu_type: a v2-8/v3-8 assumed; the run itself uses every core it finds')


def count_if_present(data_dir, split):
  path = records.split_path(data_dir, split)
  return records.count_examples(path) if tf.io.gfile.exists(path) else None


def check_storage(fv):
  """check_tpu's lines about the run's gs:// paths (none without any): storage answers, the buckets exist, access
  is allowed."""
  try:
    paths = storage.check_flag_paths(fv)
  except UserError as e:
    return [readiness.results.failed('storage_access', e.problem, e.fix)]
  return [readiness.results.passed('storage_access', 'Cloud Storage answers for %s; every bucket exists and may be '
                                  'used.' % ', '.join('--%s=%s' % pair for pair in paths))] if paths else []


def run_check_tpu(fv, unused_route, unused_job):
  """Checks on this CPU whether the run the flags describe would work on a TPU; returns the exit status.

  It reads the data but never prepares it, and contacts no TPU except for a bounded pre-flight.
  """
  storage_checks = check_storage(fv)
  if not all(check.passed for check in storage_checks):
    return readiness.print_results(storage_checks)  # the other checks read --data_dir: minutes of TF retries
  try:
    shape, source = planned_slice(fv)
  except UserError as e:
    return readiness.print_results([readiness.results.failed('topology', e.problem, e.fix)])
  eval_batch_size = training.effective_eval_batch_size(fv.eval_batch_size, use_tpu=True)
  plan = readiness.TpuPlan(
      num_shards=shape.num_cores, cores_per_host=shape.cores_per_host, slice_name=shape.name, slice_source=source,
      train_batch_size=training.effective_batch_size(fv.batch_size, use_tpu=True),
      eval_batch_size=eval_batch_size, predict_batch_size=eval_batch_size, eval_on_tpu=fv.eval_on_tpu,
      iterations_per_loop=fv.iterations, save_checkpoints_steps=fv.save_checkpoints_steps,
      host_call_every_n_steps=fv.host_call_every_n_steps, model_dir=fv.model_dir, data_dir=fv.data_dir,
      tpu_name=fv.tpu_name, tpu_zone=fv.tpu_zone, gcp_project=fv.gcp_project, master=fv.master, eval_padded=True,
      train_examples=count_if_present(fv.data_dir, 'train'), eval_split=fv.eval_split)
  plan.eval_examples = count_if_present(fv.data_dir, fv.eval_split)
  eval_input_fn = predict_input_fn = None
  if plan.eval_examples:
    # As evaluate() and predict() build them: one input_fn call, the steps of one pipeline.
    plan.eval_steps = fv.eval_steps or input_fn_lib.eval_padding(plan.eval_examples, eval_batch_size)[0]
    counted = min(plan.eval_examples, plan.eval_steps * eval_batch_size)
    eval_input_fn = input_fn_lib.eval_input_fn_builder(fv.data_dir, fv.eval_split, counted, eval_batch_size,
                                                       plan.eval_steps)
    predict_input_fn = input_fn_lib.predict_input_fn_builder(fv.data_dir, PREDICT_SPLIT, -1, eval_batch_size)
  train_input_fn = input_fn_lib.input_fn_builder(fv.data_dir, 'train', is_training=True)

  def input_fn(params):
    records.require_split(fv.data_dir, 'train')
    return train_input_fn(params)

  # With a summary directory, as every run has one (its model_dir): the check builds host_call but never runs it.
  model_fn = build_model_fn(fv, fv.model_dir or 'MODEL_DIR')
  return readiness.print_results(storage_checks + readiness.check_tpu_readiness(
      model_fn, input_fn, plan, eval_input_fn=eval_input_fn, predict_input_fn=predict_input_fn))


ROUTE = modes.Route('mnist_tpu', RESULTS_FILE, build_estimator, train, evaluate, predict)
# The modes every Estimator route has (estimator_tpu/modes.py), and the TPU readiness check.
MODE_FUNCTIONS = dict(modes.MODE_FUNCTIONS, check_tpu=run_check_tpu)


def run(fv):
  """Runs --mode; returns its result (check_tpu: the exit status)."""
  if fv.mode == 'check_tpu':
    return run_check_tpu(fv, ROUTE, None)
  # Before any data or graph work: an unreachable TPU must fail in seconds. An export runs on this machine only
  # (TPUEstimator builds even its TPU metagraph without a TPU), so it neither resolves nor probes one.
  cluster = connect_tpu(fv) if fv.use_tpu and fv.mode != 'export' else None
  return modes.run(fv, ROUTE, cluster, MODE_FUNCTIONS)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  logs.configure(FLAGS.tf_log)
  result = exit_on_user_error(run, FLAGS)
  if FLAGS.mode == 'check_tpu':
    sys.exit(result)


if __name__ == '__main__':
  mnist_tpu_flags.define_mnist_tpu_flags()
  app.run(main)
