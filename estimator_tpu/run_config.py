"""RunConfig/TPUConfig and the TPU cluster resolver, built from plain values (never from global flags)."""
import tensorflow.compat.v1 as tf
from absl import logging

from estimator_tpu import reachability
from estimator_tpu.errors import UserError


def resolve_tpu_cluster(tpu_name, tpu_zone=None, gcp_project=None, resolver_cls=None):
  """Returns a TPUClusterResolver for a named Cloud TPU (zone/project are looked up from GCE when omitted)."""
  resolver_cls = resolver_cls or tf.distribute.cluster_resolver.TPUClusterResolver
  try:
    return resolver_cls(tpu=[tpu_name], zone=tpu_zone, project=gcp_project)
  except (ValueError, RuntimeError, OSError) as e:
    raise UserError('could not resolve TPU %r (zone=%r, project=%r): %s' % (tpu_name, tpu_zone, gcp_project, e),
                    'check --tpu_name, --tpu_zone and --gcp_project, and that this VM may use the Cloud TPU API.')


def tpu_master_address(master=None, cluster=None):
  """The grpc:// address TPUEstimator will connect to: the resolved TPU's when `cluster` is given, else `master`."""
  if cluster is None:
    return master
  try:
    return cluster.master()
  except (ValueError, RuntimeError, OSError) as e:
    raise UserError('could not get the address of the resolved TPU: %s' % e,
                    'check that the TPU exists and is READY (`gcloud compute tpus list`).')


def require_tpu_reachable(master=None, cluster=None, timeout_secs=reachability.DEFAULT_TIMEOUT_SECS):
  """Pre-flight for a TPU run: raises a UserError within about `timeout_secs` if the TPU worker does not answer.

  Call it before touching data or building the estimator; TPUEstimator itself would only notice at the first
  session, after minutes of connection retries.
  """
  reachability.require_reachable(tpu_master_address(master, cluster), timeout_secs)


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
                     master=None, cluster=None, keep_checkpoint_max=5):
  """TPU RunConfig: `iterations_per_loop` steps run on the device per session.run (one host round trip).

  Pass either `master` (a grpc:// address, or '' for local) or `cluster` (a resolver), never both: RunConfig
  refuses the combination. `save_checkpoints_steps` is rounded up to a multiple of `iterations_per_loop`.
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
      tpu_config=tpu_config)
