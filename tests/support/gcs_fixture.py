"""pytest fixtures for gs:// tests: TensorFlow's own GCS client against a Cloud Storage server on loopback.

`gcs_session` (one per test session, started by the first test that asks) makes the sandbox of gcs_sandbox.py and
starts gcs_server.py inside it. `gcs` hands it to one test with a fresh, empty bucket of its own and undoes the
test's faults afterwards. A test runs programs with `gcs.run(argv)` / `gcs.popen(argv)` (inside the sandbox, with
the environment TF's client needs) and looks at what landed with `gcs.object_names()` / `gcs.read_object()`,
which ask the server's own JSON API over a Unix socket: never through TensorFlow, never subject to faults.

The server needs Python >= 3.10 with gcp-storage-emulator: `.venv-gcs` at the repository root, made by
scripts/make_gcs_venv.sh (scripts/test_all.sh runs it before the tests; if the venv is missing, the session
fixture runs it itself). GCS_EMULATOR_PYTHON names another interpreter. Standard library only on this side.
"""
import http.client
import itertools
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote, urlencode

import pytest

from estimator_tpu.data import records
from support import gcs_sandbox
from support.paths import REPO_ROOT
from support.paths import SUPPORT_DIR

SERVER_SCRIPT = os.path.join(SUPPORT_DIR, 'gcs_server.py')
MAKE_VENV = os.path.join(REPO_ROOT, 'scripts', 'make_gcs_venv.sh')
PROJECT = 'estimator-tpu-test'
START_TIMEOUT_SECS = 30.0
RUN_TIMEOUT_SECS = 300
# What TF gets inside the sandbox: a fixed token (the first thing TF's auth looks at; no credentials exist here),
# no probing for a GCE metadata server, and no stat cache (tests change objects behind TF's back). CURL_CA_BUNDLE,
# added per sandbox, is for TF 2.15; TF 1.15 reads the bundle the sandbox mounts over the system one.
TF_ENV = {
    'GOOGLE_AUTH_TOKEN_FOR_TESTING': 'estimator-tpu-test-token',
    'NO_GCE_CHECK': 'true',
    'GCS_STAT_CACHE_MAX_AGE': '0',
    'TF_CPP_MIN_LOG_LEVEL': '2',
}
# Not passed on: the tensorflow-io plugin instead of TF's own client, real credentials, proxies, other GCS settings.
DROPPED_ENV = re.compile(r'^(TF_USE_MODULAR_FILESYSTEM|GOOGLE_APPLICATION_CREDENTIALS|CLOUDSDK_.*|'
                         r'STORAGE_EMULATOR_HOST|GCS_.*|.*_proxy|.*_PROXY)$')


class ServerError(RuntimeError):
  """The server could not start, or a request to its own API failed."""


def emulator_python():
  """The interpreter that runs gcs_server.py: $GCS_EMULATOR_PYTHON, else .venv-gcs (made if missing)."""
  if os.environ.get('GCS_EMULATOR_PYTHON'):
    return os.environ['GCS_EMULATOR_PYTHON']
  made = subprocess.run(['bash', MAKE_VENV], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        universal_newlines=True)
  if made.returncode:
    raise ServerError('scripts/make_gcs_venv.sh failed: %s' % made.stderr.strip()[-2000:])
  return os.path.join(made.stdout.strip().splitlines()[-1], 'bin', 'python')


class _UnixConnection(http.client.HTTPConnection):
  """HTTP over the server's Unix socket, which the test process reaches from outside the sandbox."""

  def __init__(self, path, timeout):
    http.client.HTTPConnection.__init__(self, 'localhost', timeout=timeout)
    self._path = path

  def connect(self):
    self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    self.sock.settimeout(self.timeout)
    self.sock.connect(self._path)


class Gcs(object):
  """The sandbox, the server in it, and `bucket` (set per test by the `gcs` fixture)."""

  def __init__(self):
    # Short: a Unix socket path may have at most 107 bytes.
    self.directory = tempfile.mkdtemp(prefix='gcs-')
    self.sandbox = gcs_sandbox.Sandbox(self.directory)
    self.socket_path = os.path.join(self.directory, 'server.sock')
    self.server = None
    self.bucket = None
    self.setup_secs = None
    self._buckets = itertools.count()

  # --- the server's own API ---

  def request(self, method, path, body=None, content_type='application/json'):
    """Returns (status, body bytes)."""
    connection = _UnixConnection(self.socket_path, 60)
    try:
      connection.request(method, path, body=body, headers={'Content-Type': content_type})
      response = connection.getresponse()
      return response.status, response.read()
    finally:
      connection.close()

  def api(self, method, path, document=None, ok=(200,)):
    status, payload = self.request(method, path, None if document is None else json.dumps(document).encode())
    if status not in ok:
      raise ServerError('%s %s answered %d: %s' % (method, path, status, payload[:500]))
    return json.loads(payload.decode()) if payload else {}

  def new_bucket(self, hint='test'):
    """Creates an empty bucket with a fresh name; returns the name."""
    name = '%s-%d' % (re.sub(r'[^a-z0-9]+', '-', hint.lower()).strip('-')[:40] or 'b', next(self._buckets))
    self.api('POST', '/storage/v1/b?' + urlencode({'project': PROJECT}), {'name': name})
    return name

  def list_objects(self, prefix='', bucket=None):
    """The server's metadata (name, size, md5Hash, crc32c, ...) of every object under `prefix`."""
    query = '?' + urlencode({'prefix': prefix}) if prefix else ''
    return self.api('GET', '/storage/v1/b/%s/o%s' % (quote(bucket or self.bucket, safe=''), query)).get('items', [])

  def object_names(self, prefix='', bucket=None):
    return sorted(item['name'] for item in self.list_objects(prefix, bucket))

  def read_object(self, name, bucket=None):
    status, payload = self.request('GET', '/download/storage/v1/b/%s/o/%s?alt=media'
                                   % (quote(bucket or self.bucket, safe=''), quote(name, safe='')))
    if status != 200:
      raise ServerError('reading gs://%s/%s answered %d' % (bucket or self.bucket, name, status))
    return payload

  def write_object(self, name, data, bucket=None):
    status, payload = self.request('POST', '/upload/storage/v1/b/%s/o?%s' % (
        quote(bucket or self.bucket, safe=''), urlencode({'uploadType': 'media', 'name': name})), data,
                                   'application/octet-stream')
    if status != 200:
      raise ServerError('writing gs://%s/%s answered %d: %s' % (bucket or self.bucket, name, status, payload))

  def delete_object(self, name, bucket=None):
    self.api('DELETE', '/storage/v1/b/%s/o/%s' % (quote(bucket or self.bucket, safe=''), quote(name, safe='')),
             ok=(200, 204))

  # --- faults: what TF sees; the API above is never affected ---

  def control(self, name, document=None):
    return self.api('POST', '/_fixture/' + name, document or {})

  def deny(self, prefix='', bucket=None):
    """Every request on objects named `prefix`... (and on the bucket itself, for prefix '') answers 403."""
    self.control('deny', {'bucket': bucket or self.bucket, 'prefix': prefix})

  def set_mode(self, mode):
    """'down': connections are refused; 'frozen': accepted and never answered; 'up'."""
    self.control('mode', {'mode': mode})

  def vanish(self, name, after_reads=1, bucket=None):
    """Deletes the object once the server has answered `after_reads` requests for its data."""
    self.control('vanish', {'bucket': bucket or self.bucket, 'name': name, 'after_reads': after_reads})

  def reset(self):
    self.control('reset')

  # --- running TF inside ---

  def url(self, path=''):
    return 'gs://%s/%s' % (self.bucket, path)

  def env(self, extra=None):
    """This process's environment, cleaned and completed for TF's GCS client; `extra` on top."""
    env = {key: value for key, value in os.environ.items() if not DROPPED_ENV.match(key)}
    env.update(TF_ENV, CURL_CA_BUNDLE=self.sandbox.certificates['bundle.pem'])
    env.update(extra or {})
    return env

  def run(self, argv, env=None, timeout=RUN_TIMEOUT_SECS, cwd=REPO_ROOT):
    """Runs `argv` inside the sandbox; returns the CompletedProcess with text stdout/stderr."""
    result = self.sandbox.run(argv, self.env(env), timeout, cwd=cwd)
    result.stdout, result.stderr = (stream.decode(errors='replace') for stream in (result.stdout, result.stderr))
    return result

  def popen(self, argv, env=None, cwd=REPO_ROOT, **kwargs):
    return self.sandbox.popen(argv, self.env(env), cwd=cwd, **kwargs)

  # --- life cycle ---

  def start(self):
    started = time.time()
    try:
      self.sandbox.start()
      certificates = self.sandbox.certificates
      with open(os.path.join(self.directory, 'server.log'), 'wb') as log:
        self.server = self.sandbox.popen(
            [emulator_python(), SERVER_SCRIPT, '--cert', certificates['server.pem'], '--key',
             certificates['server.key'], '--control_socket', self.socket_path],
            dict(os.environ), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
      ready, _, _ = select.select([self.server.stdout], [], [], START_TIMEOUT_SECS)
      if not ready or self.server.stdout.readline().strip() != b'ready':
        with open(os.path.join(self.directory, 'server.log'), 'rb') as f:
          raise ServerError('the GCS server did not start: %s' % f.read().decode(errors='replace')[-2000:])
    except BaseException:
      self.stop()
      raise
    self.setup_secs = time.time() - started
    return self

  def stop(self):
    """Stops the server (asks, then closes its stdin, then kills) and the sandbox; removes the directory."""
    if self.server is not None:
      try:
        self.control('quit')
      except (OSError, ServerError, http.client.HTTPException):
        pass
      self.server.stdin.close()
      try:
        self.server.wait(timeout=10)
      except subprocess.TimeoutExpired:
        self.server.kill()
        self.server.wait()
      self.server.stdout.close()
      self.server = None
    self.sandbox.stop()
    shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope='session')
def gcs_session():
  """One sandbox and server for the whole session; stopped at its end."""
  gcs = Gcs().start()
  sys.stderr.write('\n[gs:// sandbox and server ready in %.2f s]\n' % gcs.setup_secs)
  try:
    yield gcs
  finally:
    gcs.stop()


@pytest.fixture
def gcs(gcs_session, request):  # pylint: disable=redefined-outer-name
  """gcs_session with a new empty bucket (gcs.bucket) for this test; its faults are undone afterwards."""
  gcs_session.reset()
  gcs_session.bucket = gcs_session.new_bucket(request.node.name)
  yield gcs_session
  gcs_session.reset()


def upload_splits(gcs, data_dir, prefix='mnist'):
  """The three splits of a local data_dir, put into the bucket through the server's API (no TensorFlow)."""
  for split in records.SPLITS:
    with open(records.split_path(data_dir, split), 'rb') as f:
      gcs.write_object('%s/%s.tfrecords' % (prefix, split), f.read())
  return gcs.url(prefix)
