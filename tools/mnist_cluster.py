"""mnist.py's Estimator trained by the processes of a TF_CONFIG cluster: ps, chief, workers and an evaluator.

  TF_CONFIG=... python -m tools.mnist_cluster --model_dir=SHARED --data_dir=SHARED [mnist.py's flags]

Every task of the cluster runs this program with the same flags; TF_CONFIG tells each which task it is
(estimator_tpu/distributed/training.py). The chief then evaluates the final checkpoint on the test split and writes
the results, as mnist.py does; `python -m tools.local_cluster -- -m tools.mnist_cluster ...` starts all tasks on
this machine. The data must be prepared beforehand (`python -m tools.prepare_data`): the tasks only read it.

TPU rule 14 (pod slices): TPUEstimator scales to a bigger TPU slice instead -- one program feeding all its cores in
lockstep, no TF_CONFIG and no ps (docs/SCALING.md).
"""
import os

from absl import app
from absl import flags
from absl import logging

import mnist
from estimator_tpu import runner
from estimator_tpu.data import records
from estimator_tpu.distributed import tf_config
from estimator_tpu.distributed import training as distributed
from estimator_tpu.estimator import input_fn as input_fn_lib
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.runtime import logs
from estimator_tpu.runtime import progress
from estimator_tpu.runtime import results
from estimator_tpu.runtime import storage
from estimator_tpu.runtime.errors import exit_on_user_error
from flags import mnist_cluster as mnist_cluster_flags

FLAGS = flags.FLAGS


def require_data(fv, task):
  """The training tasks and the evaluator read the splits; a ps, which only holds variables, reads nothing."""
  if task.type != tf_config.PS:
    for split in records.SPLITS:
      records.check_layout(records.require_split(fv.data_dir, split))


def train_in_cluster(fv, estimator, task):
  """This task's part of tf.estimator.train_and_evaluate: train, evaluate each checkpoint, or serve variables."""
  batch_size = fv.batch_size
  logging.info('Task %s: training until global step %d, batch %d per step and task.', task.name, fv.train_steps,
               batch_size)
  distributed.train_and_evaluate(
      estimator, task,
      train_input_fn=input_fn_lib.train_input_fn_builder(fv.data_dir, batch_size),
      eval_input_fn=input_fn_lib.eval_input_fn_builder(fv.data_dir, 'validation', fv.eval_batch_size),
      max_steps=fv.train_steps, eval_throttle_secs=fv.eval_throttle_secs,
      wait_for_workers_secs=fv.wait_for_workers_secs,
      # The global step is the cluster's: each line counts every task's steps, and examples/s assumes they all
      # train at this task's batch.
      extra_training_hooks=[progress.TrainingProgress(fv.train_steps, batch_size,
                                                      progress.every_steps(fv.log_every_steps))])


def run(fv):
  task = distributed.task_from_tf_config(distributed=True)
  batch_sizes.resolve(fv, use_tpu=False)
  storage.check_flag_paths(fv)  # the shared gs:// model_dir and data_dir answer, within seconds
  logging.info('Data directory: %s; model directory: %s', fv.data_dir, fv.model_dir)
  require_data(fv, task)
  estimator = mnist.build_estimator(fv, runner.Job(fv.model_dir, None, None, None, runner.TRAIN))
  train_in_cluster(fv, estimator, task)
  if not task.is_chief:
    return None  # a worker or the evaluator is done; the chief evaluates the final checkpoint
  metrics, counted = runner.evaluate(fv, mnist.ROUTE, estimator)
  return results.write_run_summary(
      os.path.join(fv.model_dir, mnist.ROUTE.results_file), metrics['global_step'], metrics['accuracy'],
      metrics['mean_loss'], counted, runner.predict(fv, mnist.ROUTE, estimator))


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  # The evaluator's evaluations run inside train_and_evaluate: Estimator's result line is their only account.
  logs.configure(FLAGS.tf_log, keep_info=(logs.EVALUATION_RESULT,))
  exit_on_user_error(run, FLAGS)


if __name__ == '__main__':
  mnist_cluster_flags.define_flags()
  app.run(main)
