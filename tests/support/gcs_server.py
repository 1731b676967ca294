"""A Cloud Storage server on loopback for TensorFlow's own GCS client: gcp-storage-emulator, made to fit.

Started by tests/gcs_fixture.py inside the sandbox of tests/gcs_sandbox.py, where TensorFlow's fixed endpoints
(www.googleapis.com, storage.googleapis.com) mean 127.0.0.1. It needs Python >= 3.10 with gcp-storage-emulator
and google-crc32c (scripts/make_gcs_venv.sh makes `.venv-gcs`), so the TF 1.15 leg (Python 3.7) runs it with
another interpreter than its own.

One in-memory store, two listeners:
  * HTTPS on 127.0.0.1:443 for TensorFlow. Only this one obeys the injected faults.
  * Plain HTTP on a Unix-domain socket for the test process, which lives outside the sandbox's network namespace:
    the emulator's own JSON API (list, download, upload, delete objects; create buckets), never faulty, plus the
    fault controls under /_fixture/ (see CONTROLS).

What TensorFlow sends and the emulator does not handle by itself, fixed here:
  1. the emulator writes its links (the resumable-upload `Location` header among them) as http://; TF talks https;
  2. TF sends uploads with both `Transfer-Encoding: chunked` and a `Content-Length`; the emulator would store the
     chunk framing as data, so bodies are de-chunked before it sees them;
  3. an empty body reaches the emulator as None, which it cannot take the length of;
  4. curl waits a second for `100 Continue` before each upload unless the server answers it (HTTP/1.1 does).
"""
import argparse
import http.server
import io
import json
import os
import re
import signal
import socketserver
import ssl
import sys
import threading
from urllib.parse import parse_qs, unquote, urlsplit

from gcp_storage_emulator import server as emulator
from gcp_storage_emulator.storage import Storage

SOCKET_TIMEOUT_SECS = 60
# JSON API paths (also the upload and download forms); the bucket, the object, and the target of a copy.
API_PATH = re.compile(r'^(?:/upload|/download)?/storage/v1/b/(?P<bucket>[^/]+)(?:/o(?:/(?P<object>.+?))?)?'
                      r'(?:/(?:copyTo|rewriteTo)/b/(?P<bucket2>[^/]+)/o/(?P<object2>.+))?$')
# Everything else is https://storage.googleapis.com/BUCKET/OBJECT, the form TF reads object data with.
MEDIA_PATH = re.compile(r'^/(?P<bucket>[^/_][^/]*)/(?P<object>.+)$')
API_PREFIXES = ('/storage/', '/upload/', '/download/', '/batch/')


class _Request(emulator.Request):
  """The emulator's request, with fixes 1 and 3."""

  def __init__(self, handler, method):
    super().__init__(handler, method)
    if handler.link_scheme == 'https':
      self._base_url = 'https' + self._base_url[len('http'):]
      self._full_url = 'https' + self._full_url[len('http'):]

  @property
  def data(self):
    data = super().data
    return b'' if data is None else data


emulator.Request = _Request  # the emulator's router looks the class up in its module for every request


def objects_touched(path):
  """[(bucket, object name)] a request path reads or writes; a listing counts as its `prefix`, an upload as its
  `name`, the bucket itself as ''."""
  parts = urlsplit(path)
  query = parse_qs(parts.query)
  match = API_PATH.match(parts.path)
  if match:
    name = unquote(match.group('object')) if match.group('object') else \
        (query.get('name') or query.get('prefix') or [''])[0]
    touched = [(unquote(match.group('bucket')), name)]
    if match.group('bucket2'):
      touched.append((unquote(match.group('bucket2')), unquote(match.group('object2'))))
    return touched
  match = None if parts.path.startswith(API_PREFIXES) else MEDIA_PATH.match(parts.path)
  return [(unquote(match.group('bucket')), unquote(match.group('object')))] if match else []


def media_read(method, path):
  """(bucket, name) when the request reads an object's data (TF's ranged GETs), else None."""
  if method != 'GET':
    return None
  parts = urlsplit(path)
  if parts.path.startswith(API_PREFIXES):
    return None
  match = MEDIA_PATH.match(parts.path)
  return (unquote(match.group('bucket')), unquote(match.group('object'))) if match else None


class Faults(object):
  """What the HTTPS listener does wrong: 403 for some prefixes, refuse or ignore connections, delete an object
  after some reads of it."""

  def __init__(self):
    self.lock = threading.Lock()
    self.denied = []  # [(bucket, prefix)]
    self.vanishing = {}  # {(bucket, name): reads to serve before the object is deleted}
    self.thawed = threading.Event()  # cleared while frozen: connections wait on it and are never answered
    self.thawed.set()

  def denies(self, path):
    with self.lock:
      rules = list(self.denied)
    return any(bucket == denied_bucket and name.startswith(prefix)
               for bucket, name in objects_touched(path) for denied_bucket, prefix in rules)

  def served_read(self, key):
    """Counts a read of `key`; True when the object must now disappear."""
    with self.lock:
      if key not in self.vanishing:
        return False
      self.vanishing[key] -= 1
      if self.vanishing[key] > 0:
        return False
      del self.vanishing[key]
      return True


class Handler(emulator.RequestHandler):
  """One request per connection (the answer closes it): fix 2, fix 4, and the controls."""
  protocol_version = 'HTTP/1.1'  # answers `Expect: 100-continue` (fix 4)
  link_scheme = 'http'
  obeys_faults = False
  status = None

  def __init__(self, request, client_address, server):
    super().__init__(server.owner.storage, request, client_address, server)

  def setup(self):
    self.request.settimeout(SOCKET_TIMEOUT_SECS)
    super().setup()

  def send_response(self, code, message=None):
    super().send_response(code, message)
    self.send_header('Connection', 'close')
    self.status = code

  def do_GET(self):
    self.dispatch('GET')

  def do_POST(self):
    self.dispatch('POST')

  def do_PUT(self):
    self.dispatch('PUT')

  def do_PATCH(self):
    self.dispatch('PATCH')

  def do_DELETE(self):
    self.dispatch('DELETE')

  def dispatch(self, method):
    owner = self.server.owner
    body = self.read_body()
    if self.obeys_faults and owner.faults.denies(self.path):
      message = 'test@fixture.iam.gserviceaccount.com may not access %s (denied by the test).' % self.path
      self.send_json(403, {'error': {'code': 403, 'message': message,
                                     'errors': [{'message': message, 'reason': 'forbidden'}]}})
    elif not self.obeys_faults and self.path.startswith('/_fixture/'):
      owner.control(self, method, body)
    else:
      self.call_emulator(method, body)
      read = media_read(method, self.path) if self.obeys_faults and self.status in (200, 206) else None
      if read and owner.faults.served_read(read):
        with owner.storage_lock:
          owner.storage.delete_file(*read)

  def read_body(self):
    """The request body, de-chunked if it is chunked, whatever Content-Length says (fix 2)."""
    if 'chunked' in self.headers.get('Transfer-Encoding', '').lower():
      chunks = []
      while True:
        size = int(self.rfile.readline().split(b';')[0].strip() or b'0', 16)
        if size == 0:
          while self.rfile.readline().strip():  # trailers, up to the empty line
            pass
          return b''.join(chunks)
        chunks.append(self.rfile.read(size))
        self.rfile.readline()  # the CRLF closing each chunk
    length = int(self.headers.get('Content-Length') or 0)
    return self.rfile.read(length) if length > 0 else b''

  def call_emulator(self, method, body):
    """Lets the emulator answer, reading `body` with a Content-Length that matches it."""
    del self.headers['Transfer-Encoding']
    del self.headers['Content-Length']
    self.headers['Content-Length'] = str(len(body))
    connection, self.rfile = self.rfile, io.BytesIO(body)
    try:
      with self.server.owner.storage_lock:
        emulator.Router(self).handle(method)
    except Exception as e:  # pylint: disable=broad-except
      if self.status is None:
        self.send_json(500, {'error': {'code': 500, 'message': 'emulator error: %r' % e}})
    finally:
      self.rfile = connection

  def send_json(self, code, document):
    payload = json.dumps(document).encode()
    self.send_response(code)
    self.send_header('Content-Type', 'application/json')
    self.send_header('Content-Length', str(len(payload)))
    self.end_headers()
    self.wfile.write(payload)

  def log_message(self, format, *args):  # pylint: disable=redefined-builtin
    pass


class HttpsHandler(Handler):
  """What TF talks to: TLS, https links, faults. While frozen, a connection is held and never answered."""
  link_scheme = 'https'
  obeys_faults = True

  def setup(self):
    self.request.settimeout(SOCKET_TIMEOUT_SECS)
    self.request = self.server.tls.wrap_socket(self.request, server_side=True)
    super().setup()

  def handle(self):
    faults = self.server.owner.faults
    if not faults.thawed.is_set():
      faults.thawed.wait()
      return  # dropped unanswered: the client gave up on it long ago
    super().handle()

  def finish(self):
    try:
      super().finish()
    finally:
      self.request.close()  # the TLS socket: the server only knows (and would close) the raw one it wrapped


class HttpsServer(http.server.ThreadingHTTPServer):
  daemon_threads = True
  allow_reuse_address = True

  def __init__(self, address, owner, tls):
    self.owner, self.tls = owner, tls
    super().__init__(address, HttpsHandler)

  def handle_error(self, request, client_address):
    pass  # clients that hang up (TF giving up on a frozen server) are expected


class ControlServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
  daemon_threads = True

  def __init__(self, path, owner):
    self.owner = owner
    super().__init__(path, Handler)


class Server(object):
  """The store, both listeners and the faults."""

  def __init__(self, address, tls, control_socket):
    self.storage = Storage(use_memory_fs=True)
    self.storage_lock = threading.Lock()
    self.faults = Faults()
    self.address, self.tls = address, tls
    self.https = None
    self.control_server = ControlServer(control_socket, self)
    self.stopped = threading.Event()

  def set_mode(self, mode):
    """up: serve; down: close the listening socket (connections are refused); frozen: accept, never answer."""
    if mode not in ('up', 'down', 'frozen'):
      raise ValueError('mode must be up, down or frozen, not %r' % mode)
    if mode == 'frozen':
      self.faults.thawed.clear()
    else:
      self.faults.thawed.set()
    if mode == 'down' and self.https is not None:
      self.https.shutdown()
      self.https.server_close()
      self.https = None
    elif mode != 'down' and self.https is None:
      self.https = HttpsServer(self.address, self, self.tls)
      threading.Thread(target=self.https.serve_forever, daemon=True).start()

  def control(self, handler, method, body):
    """Answers POST /_fixture/NAME with CONTROLS[NAME](self, JSON body)."""
    action = CONTROLS.get(urlsplit(handler.path).path[len('/_fixture/'):])
    if method != 'POST' or action is None:
      handler.send_json(404, {'error': 'no control %s %s' % (method, handler.path)})
      return
    try:
      handler.send_json(200, action(self, json.loads(body or b'{}')) or {})
    except (ValueError, KeyError) as e:
      handler.send_json(400, {'error': str(e)})

  def serve(self):
    self.set_mode('up')
    threading.Thread(target=self.control_server.serve_forever, daemon=True).start()
    print('ready', flush=True)
    while not self.stopped.wait(1.0):  # a timed wait lets SIGTERM's handler run
      pass
    self.faults.thawed.set()
    self.set_mode('down')
    self.control_server.server_close()


def _deny(server, args):
  with server.faults.lock:
    server.faults.denied.append((args['bucket'], args.get('prefix', '')))


def _vanish(server, args):
  with server.faults.lock:
    server.faults.vanishing[(args['bucket'], args['name'])] = int(args.get('after_reads', 1))


def _reset(server, _):
  with server.faults.lock:
    server.faults.denied, server.faults.vanishing = [], {}
  server.set_mode('up')


CONTROLS = {
    'deny': _deny,  # {"bucket": B, "prefix": P}: 403 for every request on objects of B named P...
    'vanish': _vanish,  # {"bucket": B, "name": N, "after_reads": K}: delete N once K data reads were served
    'mode': lambda server, args: server.set_mode(args['mode']),  # {"mode": "up" | "down" | "frozen"}
    'reset': _reset,  # no faults, up
    'quit': lambda server, _: server.stopped.set(),
}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--cert', required=True, help='server certificate (PEM)')
  parser.add_argument('--key', required=True, help="the certificate's private key (PEM)")
  parser.add_argument('--control_socket', required=True, help='Unix-domain socket for the test process')
  parser.add_argument('--port', type=int, default=443)
  args = parser.parse_args(argv)
  if os.path.exists(args.control_socket):
    os.unlink(args.control_socket)
  tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
  tls.load_cert_chain(args.cert, args.key)
  server = Server(('127.0.0.1', args.port), tls, args.control_socket)
  signal.signal(signal.SIGTERM, lambda *_: server.stopped.set())

  def stop_when_stdin_closes():  # the test process died or let go: leave nothing running
    sys.stdin.buffer.read()
    server.stopped.set()

  threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
  server.serve()


if __name__ == '__main__':
  main()
