"""RunConfig/TPUConfig for TPUEstimator, built from plain values (never from global flags)."""
import tensorflow.compat.v1 as tf
from absl import logging


def checkpoint_steps_on_loop_boundary(save_checkpoints_steps, iterations_per_loop):
  """Rounds the checkpoint cadence up to a multiple of iterations_per_loop, saying so in one log line.

  TPUEstimator can only save between device loops, so a cadence off the loop grid would in effect save at the next
  loop boundary, at irregular intervals. Rounding up (rather than refusing) keeps the defaults valid when only the
  loop length changes, and makes the cadence that really happens the one that is configured and logged.
  """
  aligned = -(-save_checkpoints_steps // iterations_per_loop) * iterations_per_loop
  if aligned != save_checkpoints_steps:
    logging.warning('save_checkpoints_steps=%d is not a multiple of iterations_per_loop=%d (--iterations); '
                    'TPUEstimator saves only between loops, so checkpoints are saved every %d steps instead.',
                    save_checkpoints_steps, iterations_per_loop, aligned)
  return aligned


def build_run_config(model_dir, iterations_per_loop, num_shards, save_checkpoints_steps,
                     master=None, cluster=None, keep_checkpoint_max=5, tf_random_seed=None):
  """TPU RunConfig: `iterations_per_loop` steps run on the device per session.run (one host round trip).

  Pass either `master` (a grpc:// address, or '' for local) or `cluster` (a resolver), never both: RunConfig
  refuses the combination. `save_checkpoints_steps` is rounded up to a multiple of `iterations_per_loop`.
  `tf_random_seed` is the graph-level seed of every graph the estimator builds (runtime/seeds.py).

  TensorBoard gets the training curves from host_call alone (train/loss, train/learning_rate, every step):
  save_summary_steps=None turns off Estimator's summary saver, whose only summary would be a sparser copy of the
  loss that Estimator adds by itself. The terminal gets runtime/progress.py's lines: log_step_count_steps=None
  turns off TPUEstimator's examples/sec hook, which on CPU logs every ceil(100 / iterations_per_loop) steps.
  """
  tpu_config = tf.estimator.tpu.TPUConfig(
      iterations_per_loop=iterations_per_loop,
      num_shards=num_shards,
      # PER_HOST_V2: one input pipeline per host feeding all its cores; params['batch_size'] is per core.
      per_host_input_for_training=tf.estimator.tpu.InputPipelineConfig.PER_HOST_V2)
  return tf.estimator.tpu.RunConfig(
      cluster=cluster,
      master=None if cluster is not None else master,
      model_dir=model_dir,
      save_checkpoints_steps=checkpoint_steps_on_loop_boundary(save_checkpoints_steps, iterations_per_loop),
      keep_checkpoint_max=keep_checkpoint_max,
      tf_random_seed=tf_random_seed,
      save_summary_steps=None,
      log_step_count_steps=None,
      tpu_config=tpu_config)


class FlushEventsAtEnd(tf.train.SessionRunHook):
  """Flushes the event file of model_dir (the graph, checkpoint events) when a train() call ends.

  Estimator's summary saver used to flush it at its end; with it turned off (save_summary_steps=None above)
  nothing else does before the writer's own 120 s timer, so a reader in the same process, or TensorBoard during a
  short run, would find the file cut short.
  """

  def __init__(self, model_dir):
    self._model_dir = model_dir

  def end(self, session):
    tf.summary.FileWriterCache.get(self._model_dir).flush()
