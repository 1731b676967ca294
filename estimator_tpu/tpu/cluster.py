"""Where the TPU is: the Cloud TPU resolver, and a pre-flight that fails in seconds without it.

TPU rule 2 (where the TPU is): on a TPU Node (the only architecture of TensorFlow 1.15) the TPU is a
gRPC worker on another machine, grpc://IP:8470, named by --tpu_name (resolved through the Cloud TPU
API) or --master; the pre-flight probes that port. On a TPU VM (TensorFlow 2.x) the TPU is attached
to this machine: TPUClusterResolver(tpu='local'), whose master is '' (an in-process session); the
pre-flight looks for the TPU's device files. docs/RUNNING.md says which TPU runs which.
"""
import importlib

import tensorflow.compat.v1 as tf

from estimator_tpu.runtime import preflight
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

# --tpu_name for the TPU attached to a TPU VM: the name TensorFlow's resolver itself gives it.
LOCAL_TPU = 'local'
# What TensorFlow's TPUClusterResolver looks a named TPU up with, on TF 1.15 and TF 2.15 (require_client_libraries).
CLIENT_LIBRARIES = ('googleapiclient.discovery', 'oauth2client.client')
INSTALL_CLIENT_FIX = ("install the Cloud TPU client libraries: `pip install '.[tpu]'` in this checkout "
                      "(google-api-python-client and oauth2client, the versions setup.py pins for this Python).")


def is_local_tpu(tpu_name):
  return tpu_name == LOCAL_TPU


def require_tf2_for_local_tpu(tf_version):
  """TPU VMs are a TensorFlow 2 architecture: TF 1.15's TPUClusterResolver(tpu='local') returns the
  master 'local', which is no session target, and TF 1.15 has no TPU-VM runtime to run on."""
  if tf_version.startswith('1.'):
    raise UserError("--tpu_name=local means the TPU attached to a TPU VM, which TensorFlow %s "
                    "cannot use: TPU VMs run TensorFlow 2 (tpu-vm-tf-2.15.* runtimes), TF 1.15 "
                    "only TPU Nodes." % tf_version,
                    'on a TPU Node name it with --tpu_name=NAME or --master=grpc://IP:8470; on a '
                    'TPU VM use TensorFlow 2.15 (the .venv-tf2 leg).')


def is_worker_address(tpu_name):
  """A grpc://HOST:PORT given as the TPU's name: TensorFlow's resolver takes it as is, without the Cloud TPU API."""
  return tpu_name.startswith('grpc://')


def require_client_libraries(tpu_name):
  """Raises a UserError unless the libraries TensorFlow's resolver looks a named TPU up with can be imported.

  Both TensorFlows talk to the Cloud TPU API through googleapiclient with oauth2client's credentials: TF 1.15's
  TPUClusterResolver imports them itself and raises ImportError when they are missing; TF 2.15's goes through
  the cloud_tpu_client package or, without it, its own copy of that client (tensorflow/python/tpu/client), which
  needs the same two and only says so, as a RuntimeError, once asked for the TPU's address. setup.py's `tpu` extra
  installs them, for either TensorFlow.
  """
  for module in CLIENT_LIBRARIES:
    try:
      importlib.import_module(module)
    except ImportError as e:
      raise UserError('--tpu_name=%s is looked up through the Cloud TPU API, whose client libraries are not '
                      'installed (%s).' % (tpu_name, e), INSTALL_CLIENT_FIX)


def resolve_tpu_cluster(tpu_name, tpu_zone=None, gcp_project=None, resolver_cls=None,
                        tf_version=None):
  """Returns a TPUClusterResolver for a named Cloud TPU, or for the TPU of this TPU VM when tpu_name
  is 'local'.

  Zone and project of a named TPU are looked up from GCE when omitted. A named TPU is looked up at
  once (its address, through the Cloud TPU API), so that a missing library, an unknown name or an
  API out of reach is one line here rather than a traceback from deep inside TPUEstimator.
  """
  resolver_cls = resolver_cls or tf.distribute.cluster_resolver.TPUClusterResolver
  if is_local_tpu(tpu_name):
    require_tf2_for_local_tpu(tf_version or tf.__version__)
    # The string, not a list: TF 2.15 compares `tpu != 'local'`, so ['local'] would be looked
    # up through the Cloud TPU API as a TPU named "local".
    return resolver_cls(tpu=LOCAL_TPU)
  looked_up = not is_worker_address(tpu_name)
  if looked_up:
    require_client_libraries(tpu_name)
  try:
    resolver = resolver_cls(tpu=[tpu_name], zone=tpu_zone, project=gcp_project)
    if looked_up:
      resolver.master()  # asks the Cloud TPU API for the TPU's workers
    return resolver
  except Exception as e:  # pylint: disable=broad-except -- the API's client raises its own types
    where = 'TPU %r (zone %s, project %s)' % (tpu_name, tpu_zone or 'from the metadata server',
                                              gcp_project or 'from the metadata server')
    raise resolution_error(e, where, bool(tpu_zone and gcp_project))


def resolution_error(error, where, zone_and_project_given=True):
  """The UserError for an error looking up the TPU `where` describes; the fix depends on what failed, found along
  the chain of exceptions (TensorFlow wraps the API client's in a ValueError that keeps it as its context)."""
  chain = _exception_chain(error)
  names = [type(e).__name__ for e in chain]
  message = ' '.join(str(e) for e in chain)
  if 'HttpError' in names:
    http_error = chain[names.index('HttpError')]
    status = int(getattr(getattr(http_error, 'resp', None), 'status', 0) or 0)
    if status == 404:
      return UserError('there is no %s: the Cloud TPU API does not know it (404).' % where,
                       'check --tpu_name, --tpu_zone and --gcp_project against `gcloud compute tpus list '
                       '--zone=ZONE --project=PROJECT`.')
    if status in (401, 403):
      return UserError('the Cloud TPU API refused to describe %s (%d).' % (where, status),
                       'enable the Cloud TPU API in the project and let this VM\'s service account (or your '
                       '`gcloud auth application-default login`) view TPUs, e.g. with roles/tpu.viewer.')
  if 'ApplicationDefaultCredentialsError' in names:
    return UserError('no Google credentials to ask the Cloud TPU API about %s.' % where,
                     'run on a GCE VM with a service account, or `gcloud auth application-default login`.')
  if 'is not yet ready' in message:
    state = message.split('state: ', 1)[-1].split()[0].strip('"\'')
    return UserError('%s is not READY (state %s).' % (where, state),
                     'wait until `gcloud compute tpus list` shows it READY (start it if it is STOPPED).')
  if 'Missing runtime dependency' in message:
    return UserError('%s cannot be looked up: %s' % (where, essence(chain[-1])), INSTALL_CLIENT_FIX)
  if any(isinstance(e, OSError) for e in chain) or 'HttpLib2Error' in names or 'ServerNotFoundError' in names:
    if not zone_and_project_given and 'metadata' in message:
      return UserError('the zone and project of %s could not be looked up: this machine has no GCE metadata '
                       'server (%s).' % (where, essence(chain[-1])), 'pass --tpu_zone=ZONE and --gcp_project=PROJECT.')
    return UserError('the Cloud TPU API could not be reached to look up %s (%s).' % (where, essence(chain[-1])),
                     'check that this VM reaches Google APIs (proxy, firewall, Private Google Access), or name '
                     'the worker directly: --master=grpc://IP:8470.')
  return UserError('could not look up %s: %s' % (where, essence(error)),
                   'check --tpu_name, --tpu_zone and --gcp_project, and that this VM may use the '
                   'Cloud TPU API.')


def _exception_chain(error):
  chain = []
  while error is not None and error not in chain:
    chain.append(error)
    error = error.__cause__ or error.__context__
  return chain


def tpu_master_address(master=None, cluster=None):
  """The session target TPUEstimator will use: the resolved TPU's when `cluster` is given, else
  `master`."""
  if cluster is None:
    return master
  try:
    return cluster.master()
  except Exception as e:  # pylint: disable=broad-except -- the API's client raises its own types
    raise resolution_error(e, 'the resolved TPU', zone_and_project_given=False)


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
