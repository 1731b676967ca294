"""Where the TPU is: the Cloud TPU resolver, and a pre-flight that fails in seconds without it.

TPU rule 2 (where the TPU is): on a TPU Node (the only architecture of TensorFlow 1.15) the TPU is a
gRPC worker on another machine, grpc://IP:8470, named by --tpu_name (resolved through the Cloud TPU
API) or --master; the pre-flight probes that port. On a TPU VM (TensorFlow 2.x) the TPU is attached
to this machine: TPUClusterResolver(tpu='local'), whose master is '' (an in-process session); the
pre-flight looks for the TPU's device files. docs/RUNNING.md says which TPU runs which.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu.runtime import preflight
from estimator_tpu.runtime import tpu_api
from estimator_tpu.runtime.errors import UserError

# --tpu_name for the TPU attached to a TPU VM: the name TensorFlow's resolver itself gives it.
LOCAL_TPU = 'local'


def is_local_tpu(tpu_name):
  return tpu_name == LOCAL_TPU


def is_worker_address(tpu_name):
  """A grpc://HOST:PORT given as the TPU's name: the resolver takes it as is, no API call."""
  return tpu_name.startswith('grpc://')


def require_tf2_for_local_tpu(tf_version):
  """TPU VMs are a TensorFlow 2 architecture: TF 1.15's TPUClusterResolver(tpu='local') returns the
  master 'local', which is no session target, and TF 1.15 has no TPU-VM runtime to run on."""
  if tf_version.startswith('1.'):
    raise UserError("--tpu_name=local means the TPU attached to a TPU VM, which TensorFlow %s "
                    "cannot use: TPU VMs run TensorFlow 2 (tpu-vm-tf-2.15.* runtimes), TF 1.15 "
                    "only TPU Nodes." % tf_version,
                    'on a TPU Node name it with --tpu_name=NAME or --master=grpc://IP:8470; on a '
                    'TPU VM use TensorFlow 2.15 (the .venv-tf2 leg).')


def resolve_tpu_cluster(tpu_name, tpu_zone=None, gcp_project=None, resolver_cls=None,
                        tf_version=None):
  """Returns a TPUClusterResolver for a named Cloud TPU, or for the TPU of this TPU VM when tpu_name
  is 'local'.

  Zone and project of a named TPU are looked up from GCE when omitted. A named TPU is looked up
  at once, through the Cloud TPU API (runtime/tpu_api.py): a missing library, an unknown name or
  an API out of reach is one line here, not a traceback from deep inside TPUEstimator.
  """
  resolver_cls = resolver_cls or tf.distribute.cluster_resolver.TPUClusterResolver
  if is_local_tpu(tpu_name):
    require_tf2_for_local_tpu(tf_version or tf.__version__)
    # The string, not a list: TF 2.15 compares `tpu != 'local'`, so ['local'] would be looked
    # up through the Cloud TPU API as a TPU named "local".
    return resolver_cls(tpu=LOCAL_TPU)
  looked_up = not is_worker_address(tpu_name)
  if looked_up:
    tpu_api.require_client_libraries(tpu_name)
  where = tpu_api.describe(tpu_name, tpu_zone, gcp_project)
  try:  # a zone or project not given is asked of the GCE metadata server here
    resolver = resolver_cls(tpu=[tpu_name], zone=tpu_zone, project=gcp_project)
  except Exception as e:  # pylint: disable=broad-except -- the API client raises its own types
    raise tpu_api.lookup_error(e, where, bool(tpu_zone and gcp_project))
  try:
    if looked_up:
      resolver.master()  # asks the Cloud TPU API for the TPU's workers
  except Exception as e:  # pylint: disable=broad-except
    raise tpu_api.lookup_error(e, where)
  return resolver


def tpu_master_address(master=None, cluster=None):
  """The session target TPUEstimator will use: the resolved TPU's when `cluster` is given, else
  `master`."""
  if cluster is None:
    return master
  try:
    return cluster.master()
  except Exception as e:  # pylint: disable=broad-except -- the API client raises its own types
    raise tpu_api.lookup_error(e, 'the resolved TPU')


def require_tpu_reachable(master=None, cluster=None, timeout_secs=preflight.DEFAULT_TIMEOUT_SECS,
                          dev_root='/dev', sys_root='/sys'):
  """Pre-flight for a TPU run: raises a UserError within about `timeout_secs` if the TPU is not
  there.

  A TPU VM's TPU (master '') must be attached to this machine, and its device files are returned; a
  TPU Node's worker must accept a TCP connection (returns None). Call it before touching data or
  building the estimator; TPUEstimator itself would only notice at the first session, after minutes
  of connection retries.
  """
  address = tpu_master_address(master, cluster)
  if address == '':
    return preflight.require_tpu_attached(dev_root, sys_root)
  preflight.require_reachable(address, timeout_secs)
  return None
