"""TPUEstimator's RunConfig and TPUConfig, built from plain values (never from global flags).

TPU rule 1 (TPUEstimator) and TPU rule 8 (iterations per loop): why each setting is what it is, and
where TensorFlow says so, is docs/MIGRATION.md's detail of those rules and of rule 14.
"""
import tensorflow.compat.v1 as tf
from absl import logging


def input_pipeline_config():
  """tf.estimator.tpu.InputPipelineConfig, looked up when used: on TF 1.15 the lookup logs a
  deprecation notice, which at import time would come before runtime/logs.py has set up TensorFlow's
  logging."""
  return tf.estimator.tpu.InputPipelineConfig


def is_sliced(tpu_config):
  """True when evaluation and prediction input is SLICED (see eval_input_configuration)."""
  return tpu_config.eval_training_input_configuration == input_pipeline_config().SLICED


def aligned_checkpoint_steps(save_checkpoints_steps, iterations_per_loop):
  """The checkpoint cadence rounded up to a multiple of iterations_per_loop: the one TPUEstimator
  really keeps."""
  return -(-save_checkpoints_steps // iterations_per_loop) * iterations_per_loop


def checkpoint_steps_on_loop_boundary(save_checkpoints_steps, iterations_per_loop):
  """Rounds the checkpoint cadence up to a multiple of iterations_per_loop, saying so in one log
  line.

  TPUEstimator can only save between device loops, so a cadence off the loop grid would in effect
  save at the next loop boundary, at irregular intervals. Rounding up (rather than refusing) keeps
  the defaults valid when only the loop length changes, and makes the cadence that really happens
  the one that is configured and logged.
  """
  if save_checkpoints_steps is None:
    return None
  aligned = aligned_checkpoint_steps(save_checkpoints_steps, iterations_per_loop)
  if aligned != save_checkpoints_steps:
    logging.warning('save_checkpoints_steps=%d is not a multiple of iterations_per_loop=%d '
                    '(--iterations); TPUEstimator saves only between loops, so checkpoints are '
                    'saved every %d steps instead.', save_checkpoints_steps, iterations_per_loop,
                    aligned)
  return aligned


def eval_input_configuration(evaluates_on_tpu):
  """TPUConfig.eval_training_input_configuration: SLICED when evaluation runs on the TPU, else TF's
  default (PER_HOST_V1: evaluation and prediction input as for training)."""
  configs = input_pipeline_config()
  # TPU rule 14 (pod slices): per-host evaluation and prediction are refused on several TPU hosts;
  # SLICED input (one input_fn call, split by TF) is not, but TF refuses it for a mode on the CPU.
  return configs.SLICED if evaluates_on_tpu else configs.PER_HOST_V1


def build_run_config(model_dir, iterations_per_loop, num_shards, save_checkpoints_steps,
                     master=None, cluster=None, keep_checkpoint_max=5, evaluates_on_tpu=False,
                     host_call_every_n_steps=1, tf_random_seed=None):
  """TPU RunConfig: `iterations_per_loop` steps run on the device per session.run (one host round
  trip).

  Pass either `master` (a grpc:// address, or '' for local) or `cluster` (a resolver), never both:
  RunConfig refuses the combination. `save_checkpoints_steps` is rounded up to a multiple of
  `iterations_per_loop` (None: Estimator's default, every 600 s). `num_shards` None lets
  TPUEstimator count the cores of the TPU it finds; a number must equal that count.
  `evaluates_on_tpu`: evaluate() and predict() run on the TPU (see eval_input_configuration).
  `host_call_every_n_steps`: host_call sends its tensors off the TPU on every n-th step of a loop
  instead of every step. `tf_random_seed` is the graph-level seed of every graph the estimator
  builds (runtime/seeds.py).

  TensorBoard gets the training curves from host_call alone (save_summary_steps=None: Estimator's
  own saver would add only a sparser copy of the loss), the terminal runtime/progress.py's lines
  (log_step_count_steps=None: no examples/sec hook).
  """
  tpu_config = tf.estimator.tpu.TPUConfig(
      # TPU rule 8 (iterations per loop): that many steps on the TPU per round trip from the host.
      iterations_per_loop=iterations_per_loop,
      num_shards=num_shards,
      # TPU rule 3 (params): one input pipeline per host, feeding all its cores (per-core batch).
      per_host_input_for_training=input_pipeline_config().PER_HOST_V2,
      eval_training_input_configuration=eval_input_configuration(evaluates_on_tpu),
      experimental_host_call_every_n_steps=host_call_every_n_steps)
  return tf.estimator.tpu.RunConfig(
      cluster=cluster,
      master=None if cluster is not None else master,
      model_dir=model_dir,
      save_checkpoints_steps=checkpoint_steps_on_loop_boundary(save_checkpoints_steps,
                                                               iterations_per_loop),
      keep_checkpoint_max=keep_checkpoint_max,
      tf_random_seed=tf_random_seed,
      save_summary_steps=None,
      log_step_count_steps=None,
      tpu_config=tpu_config)
