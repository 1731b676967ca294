"""A stand-in, on 127.0.0.1, for the two Google services a named TPU is resolved through, for TensorFlow's own
TPUClusterResolver to talk to in a test.

  * the GCE metadata server: oauth2client (the credentials both TensorFlows' resolvers use) asks it whether it runs
    on GCE and for the VM service account's access token; TF 2.15's client also asks it for the project and zone
    when --gcp_project/--tpu_zone are not given;
  * the Cloud TPU API (tpu v1): a discovery document of our own, just big enough for googleapiclient to build the
    one call the resolvers make (projects.locations.nodes.get), and the nodes it knows.

How a resolver is pointed here, all through settings its libraries read from the environment (`environment()`):
TPU_API_DISCOVERY_URL (TensorFlow's resolver/client: the discovery document's URL template), GCE_METADATA_IP and
GCE_METADATA_ROOT (oauth2client: GCE detection and the token), GCE_METADATA_HOST (TF 2.15's client: project and
zone). TF 1.15's resolver asks metadata.google.internal itself for a missing project or zone; tests name both.
The server records the paths it was asked for and the Authorization headers it saw, so a test can prove that
the token came from here and was used.
"""
import json
import threading

from http.server import BaseHTTPRequestHandler
from http.server import HTTPServer

TOKEN = 'stand-in-access-token'
SERVICE_ACCOUNT = 'stand-in@example.com'
METADATA_PREFIX = '/computeMetadata/v1/'
DISCOVERY_PATH = '/discovery/{api}/{apiVersion}'
NODES_PREFIX = '/v1/projects/'


def discovery_document(root_url):
  """The tpu v1 API as googleapiclient needs to see it to build nodes().get(name=...), served from `root_url`."""
  get = {
      'id': 'tpu.projects.locations.nodes.get',
      'path': 'v1/{+name}',
      'flatPath': 'v1/projects/{projectsId}/locations/{locationsId}/nodes/{nodesId}',
      'httpMethod': 'GET',
      'parameters': {'name': {'type': 'string', 'location': 'path', 'required': True,
                              'pattern': '^projects/[^/]+/locations/[^/]+/nodes/[^/]+$'}},
      'parameterOrder': ['name'],
      'response': {'$ref': 'Node'},
  }
  return {
      'kind': 'discovery#restDescription', 'discoveryVersion': 'v1', 'id': 'tpu:v1', 'name': 'tpu',
      'version': 'v1', 'protocol': 'rest', 'rootUrl': root_url, 'servicePath': '', 'batchPath': 'batch',
      'parameters': {},
      'schemas': {'Node': {'id': 'Node', 'type': 'object', 'properties': {}}},
      'resources': {'projects': {'resources': {'locations': {'resources': {'nodes': {'methods': {'get': get}}}}}}},
  }


class CloudTpuApi(object):
  """The stand-in server; use as a context manager. `add_node` makes a TPU Node known under project/zone/name."""

  def __init__(self, project='stand-in-project', zone='us-central1-b'):
    self.project = project
    self.zone = zone
    self.nodes = {}
    self.requests = []
    self.authorizations = []
    self._server = HTTPServer(('127.0.0.1', 0), self._handler())
    self.port = self._server.server_address[1]
    self.url = 'http://127.0.0.1:%d' % self.port
    self._thread = threading.Thread(target=self._server.serve_forever, name='cloud-tpu-api')
    self._thread.daemon = True

  def add_node(self, name, endpoints, state='READY', zone=None, project=None):
    """A TPU Node `name` whose workers are [(ip, port)]."""
    full = 'projects/%s/locations/%s/nodes/%s' % (project or self.project, zone or self.zone, name)
    self.nodes[full] = {'name': full, 'state': state, 'acceleratorType': 'v3-8',
                        'networkEndpoints': [{'ipAddress': ip, 'port': port} for ip, port in endpoints]}

  def environment(self):
    """The environment variables that point TensorFlow's resolver and its libraries here."""
    host = '127.0.0.1:%d' % self.port
    return {'TPU_API_DISCOVERY_URL': self.url + DISCOVERY_PATH, 'GCE_METADATA_IP': host,
            'GCE_METADATA_ROOT': host, 'GCE_METADATA_HOST': host, 'NO_GCE_CHECK': 'False'}

  def __enter__(self):
    self._thread.start()
    return self

  def __exit__(self, *exc):
    self._server.shutdown()
    self._server.server_close()
    self._thread.join()

  def _answer(self, path):
    """(status, content type, body) for GET `path`."""
    bare = path.split('?', 1)[0]
    if bare in ('', '/'):  # oauth2client's GCE check: the answer's Metadata-Flavor header is what counts
      return 200, 'text/plain', ''
    if bare.startswith(METADATA_PREFIX):
      return self._metadata(bare[len(METADATA_PREFIX):])
    if bare == DISCOVERY_PATH.format(api='tpu', apiVersion='v1'):
      return 200, 'application/json', json.dumps(discovery_document(self.url + '/'))
    if bare.startswith(NODES_PREFIX):
      node = self.nodes.get(bare[len('/v1/'):])
      if node is None:
        return 404, 'application/json', json.dumps({'error': {'code': 404, 'status': 'NOT_FOUND', 'message': (
            'Resource \'%s\' was not found' % bare[len('/v1/'):])}})
      return 200, 'application/json', json.dumps(node)
    return 404, 'text/plain', 'not here: %s' % bare

  def _metadata(self, path):
    # oauth2client reads the default account's email, then asks for the token by that email.
    accounts = ('instance/service-accounts/default/', 'instance/service-accounts/%s/' % SERVICE_ACCOUNT)
    if path in accounts:
      return 200, 'application/json', json.dumps({'email': SERVICE_ACCOUNT, 'aliases': ['default'],
                                                  'scopes': ['https://www.googleapis.com/auth/cloud-platform']})
    if path in [account + 'token' for account in accounts]:
      return 200, 'application/json', json.dumps({'access_token': TOKEN, 'expires_in': 3600,
                                                  'token_type': 'Bearer'})
    if path == 'project/project-id':
      return 200, 'application/text', self.project
    if path == 'instance/zone':
      return 200, 'application/text', 'projects/123456/zones/%s' % self.zone
    return 404, 'text/plain', 'no metadata %s' % path

  def _handler(self):
    api = self

    class Handler(BaseHTTPRequestHandler):

      def do_GET(self):  # noqa: N802 -- the name http.server calls
        api.requests.append(self.path)
        api.authorizations.append(self.headers.get('Authorization'))
        status, content_type, body = api._answer(self.path)
        data = body.encode()
        self.send_response(status)
        self.send_header('Metadata-Flavor', 'Google')
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

      def log_message(self, *args):
        pass

    return Handler
