"""RunConfig/TPUConfig for TPUEstimator, built from plain values (never from global flags).

Citations are to tensorflow_estimator/python/estimator/tpu/ in either TensorFlow (1.15 and 2.15 agree on all of it).
"""
import tensorflow.compat.v1 as tf
from absl import logging


def input_pipeline_config():
  """tf.estimator.tpu.InputPipelineConfig, looked up when used: on TF 1.15 the lookup logs a deprecation notice,
  which at import time would come before runtime/logs.py has set up TensorFlow's logging."""
  return tf.estimator.tpu.InputPipelineConfig


def is_sliced(tpu_config):
  """True when evaluation and prediction input is SLICED (see eval_input_configuration)."""
  return tpu_config.eval_training_input_configuration == input_pipeline_config().SLICED


def aligned_checkpoint_steps(save_checkpoints_steps, iterations_per_loop):
  """The checkpoint cadence rounded up to a multiple of iterations_per_loop: the one TPUEstimator really keeps."""
  return -(-save_checkpoints_steps // iterations_per_loop) * iterations_per_loop


def checkpoint_steps_on_loop_boundary(save_checkpoints_steps, iterations_per_loop):
  """Rounds the checkpoint cadence up to a multiple of iterations_per_loop, saying so in one log line.

  TPUEstimator can only save between device loops, so a cadence off the loop grid would in effect save at the next
  loop boundary, at irregular intervals. Rounding up (rather than refusing) keeps the defaults valid when only the
  loop length changes, and makes the cadence that really happens the one that is configured and logged.
  """
  aligned = aligned_checkpoint_steps(save_checkpoints_steps, iterations_per_loop)
  if aligned != save_checkpoints_steps:
    logging.warning('save_checkpoints_steps=%d is not a multiple of iterations_per_loop=%d (--iterations); '
                    'TPUEstimator saves only between loops, so checkpoints are saved every %d steps instead.',
                    save_checkpoints_steps, iterations_per_loop, aligned)
  return aligned


def eval_input_configuration(evaluates_on_tpu):
  """TPUConfig.eval_training_input_configuration: SLICED when evaluation runs on the TPU, else TF's default.

  TPU rule (evaluation and prediction on a pod slice): with per-host input (PER_HOST_V2) on more than one TPU
  host, TF 1.15 refuses evaluate() and both TFs refuse predict() ("only supported under three conditions",
  tpu_context.py, _validate_tpu_configuration); TF 2.15 evaluates but only warns. SLICED input counts as broadcast
  there and is accepted on any number of hosts: input_fn runs once, on host 0, with the global batch, and TF
  splits each batch into one slice per core (tpu_estimator.py, generate_broadcast_enqueue_ops_fn). One call also
  keeps the exact-evaluation arithmetic (steps, padding) that of a single input pipeline. But TF refuses SLICED
  where the mode runs on the CPU (use_tpu=False, or evaluate with eval_on_tpu=False; tpu_estimator.py,
  TPUEstimator._call_input_fn), hence the condition. Training input stays per host (PER_HOST_V2).
  """
  configs = input_pipeline_config()
  # PER_HOST_V1 is TPUConfig's default here: evaluation and prediction input as for training.
  return configs.SLICED if evaluates_on_tpu else configs.PER_HOST_V1


def build_run_config(model_dir, iterations_per_loop, num_shards, save_checkpoints_steps,
                     master=None, cluster=None, keep_checkpoint_max=5, evaluates_on_tpu=False,
                     host_call_every_n_steps=1, tf_random_seed=None):
  """TPU RunConfig: `iterations_per_loop` steps run on the device per session.run (one host round trip).

  Pass either `master` (a grpc:// address, or '' for local) or `cluster` (a resolver), never both: RunConfig
  refuses the combination. `save_checkpoints_steps` is rounded up to a multiple of `iterations_per_loop`.
  `num_shards` None lets TPUEstimator count the cores of the TPU it finds (tpu_context.py: num_replicas is the
  system's core count); a number must equal that count, or TPUEstimator stops with "TPUConfig.num_shards is not
  set correctly". `evaluates_on_tpu`: evaluate() and predict() run on the TPU (see eval_input_configuration).
  `host_call_every_n_steps`: host_call sends its tensors off the TPU on every n-th step of a loop instead of every
  step (TPUConfig.experimental_host_call_every_n_steps).
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
      per_host_input_for_training=input_pipeline_config().PER_HOST_V2,
      eval_training_input_configuration=eval_input_configuration(evaluates_on_tpu),
      experimental_host_call_every_n_steps=host_call_every_n_steps)
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

  Estimator's summary saver used to flush it at its end; with it turned off (save_summary_steps=None above)
  nothing else does before the writer's own 120 s timer, so a reader in the same process, or TensorBoard during a
  short run, would find the file cut short.
  """

  def __init__(self, model_dir):
    self._model_dir = model_dir

  def end(self, session):
    tf.summary.FileWriterCache.get(self._model_dir).flush()
