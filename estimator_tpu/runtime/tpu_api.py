"""Looking a named Cloud TPU up through the Cloud TPU API, as TensorFlow's TPUClusterResolver does it: the client
libraries it needs, and what each way of failing means for the user (tpu/cluster.py resolves; this says why not).

Both TensorFlows talk to the API through googleapiclient with oauth2client's credentials: TF 1.15's resolver
imports them itself and raises ImportError when they are missing; TF 2.15's goes through the cloud_tpu_client
package or, without it, its own copy of that client (tensorflow/python/tpu/client), which needs the same two and
only says so, as a RuntimeError telling to `pip install cloud-tpu-client`, once asked for the TPU's address.
setup.py's `tpu` extra installs the two for either TensorFlow.
"""
import importlib

from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

CLIENT_LIBRARIES = ('googleapiclient.discovery', 'oauth2client.client')
INSTALL_CLIENT_FIX = ("install the Cloud TPU client libraries: `pip install '.[tpu]'` in this checkout "
                      "(google-api-python-client and oauth2client, the versions setup.py pins for this Python).")


def require_client_libraries(tpu_name):
  """Raises a UserError unless the libraries that look a named TPU up can be imported."""
  for module in CLIENT_LIBRARIES:
    try:
      importlib.import_module(module)
    except ImportError as e:
      raise UserError('--tpu_name=%s is looked up through the Cloud TPU API, whose client libraries are not '
                      'installed (%s).' % (tpu_name, e), INSTALL_CLIENT_FIX)


def describe(tpu_name, tpu_zone, gcp_project):
  """"TPU 'NAME' (zone Z, project P)", saying where a missing zone or project comes from."""
  return 'TPU %r (zone %s, project %s)' % (tpu_name, tpu_zone or 'from the metadata server',
                                           gcp_project or 'from the metadata server')


def lookup_error(error, where, zone_and_project_given=True):
  """The UserError for an error looking up the TPU `where` describes; the fix depends on what failed, found along
  the chain of exceptions (TensorFlow wraps the API client's in a ValueError that keeps it as its context).
  `zone_and_project_given` False: the error came while the resolver asked the metadata server for them."""
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
    if not zone_and_project_given:  # the resolver asked the metadata server for them, and it is not there
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
