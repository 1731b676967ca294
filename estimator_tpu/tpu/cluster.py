"""Where the TPU is: the Cloud TPU resolver and a pre-flight that fails in seconds when the TPU does not answer."""
import tensorflow.compat.v1 as tf

from estimator_tpu.runtime import preflight
from estimator_tpu.runtime.errors import UserError


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


def require_tpu_reachable(master=None, cluster=None, timeout_secs=preflight.DEFAULT_TIMEOUT_SECS):
  """Pre-flight for a TPU run: raises a UserError within about `timeout_secs` if the TPU worker does not answer.

  Call it before touching data or building the estimator; TPUEstimator itself would only notice at the first
  session, after minutes of connection retries.
  """
  preflight.require_reachable(tpu_master_address(master, cluster), timeout_secs)
