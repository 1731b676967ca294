"""The gs:// test fixture itself: a sandbox that can only reach loopback, a server that TensorFlow's own GCS client
works with, and a guard that refuses to run when Google's host names could reach the real service.

Runs under both legs (TF 1.15 / Python 3.7, TF 2.15 / Python 3.11); TensorFlow always runs in a subprocess inside
the sandbox, and what it wrote is read back through the server's own API.
"""
import base64
import hashlib
import json
import os
import sys

import pytest

from support import gcs_sandbox

GFILE_CALLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gcs_gfile_calls.py')


def test_sandbox_has_only_loopback_and_the_names_point_there(gcs):
  seen = gcs.sandbox.check()
  assert seen['names'] == dict.fromkeys(gcs_sandbox.GOOGLE_HOSTS, ['127.0.0.1'])
  assert seen['interfaces'] == ['lo']
  inside = os.readlink('/proc/%d/ns/net' % gcs.sandbox.pid)
  assert os.readlink('/proc/%d/ns/net' % gcs.server.pid) == inside  # the server lives in there...
  assert os.readlink('/proc/self/ns/net') != inside  # ...and this process, like the machine, does not
  with open('/etc/hosts') as outside, open(gcs.sandbox.hosts_file) as hosts:
    assert outside.read() != hosts.read()  # the bind mount stayed private to the sandbox


@pytest.mark.parametrize('addresses', [
    {'www.googleapis.com': '127.0.0.1', 'oauth2.googleapis.com': '127.0.0.1', 'metadata': '127.0.0.1',
     'metadata.google.internal': '127.0.0.1'},
    dict(dict.fromkeys(gcs_sandbox.GOOGLE_HOSTS, '127.0.0.1'), **{'storage.googleapis.com': '127.0.0.2'}),
], ids=['name-missing', 'name-elsewhere'])
def test_guard_refuses_a_name_not_on_loopback(tmp_path, addresses):
  hosts = gcs_sandbox.write_hosts_file(str(tmp_path / 'hosts'), addresses)
  sandbox = gcs_sandbox.Sandbox(str(tmp_path), hosts_file=hosts)
  with pytest.raises(gcs_sandbox.SandboxError, match=r'refusing .*storage\.googleapis\.com'):
    sandbox.start()
  assert sandbox.holder.poll() is not None  # nothing left running


# An upload shaped like TF's, sent by hand inside the sandbox: the four things the server has to fix.
RAW_UPLOAD = r'''
import json, socket, ssl, sys
def connect():
  context = ssl.create_default_context(cafile='/etc/ssl/certs/ca-certificates.crt')
  return context.wrap_socket(socket.create_connection(('www.googleapis.com', 443), timeout=5),
                             server_hostname='www.googleapis.com')
def answer(sock):
  data = b''
  while b'\r\n\r\n' not in data:
    data += sock.recv(65536)
  return data.split(b'\r\n\r\n', 1)[0].decode()
bucket = sys.argv[1]
sock = connect()
sock.sendall(('POST /upload/storage/v1/b/%s/o?uploadType=resumable&name=raw HTTP/1.1\r\n'
              'Host: www.googleapis.com\r\nContent-Length: 0\r\n\r\n' % bucket).encode())
location = [line.split(': ', 1)[1] for line in answer(sock).split('\r\n') if line.lower().startswith('location:')][0]
payload = b'chunked payload'
chunks = b'%x\r\n%s\r\n0\r\n\r\n' % (len(payload), payload)
sock = connect()
sock.sendall(('PUT %s HTTP/1.1\r\nHost: www.googleapis.com\r\nTransfer-Encoding: chunked\r\nContent-Length: %d\r\n'
              'Content-Range: bytes 0-%d/%d\r\nExpect: 100-continue\r\n\r\n'
              % (location.split('googleapis.com', 1)[1], len(chunks), len(payload) - 1, len(payload))).encode())
sock.settimeout(0.5)  # curl gives up waiting for "100 Continue" after 1 s
interim = answer(sock)
sock.settimeout(5)
sock.sendall(chunks)
final = answer(sock)
sock = connect()
sock.sendall(('POST /upload/storage/v1/b/%s/o?uploadType=media&name=empty HTTP/1.1\r\nHost: www.googleapis.com\r\n'
              '\r\n' % bucket).encode())
print(json.dumps({'location': location, 'interim': interim.split('\r\n')[0], 'final': final.split('\r\n')[0],
                  'empty': answer(sock).split('\r\n')[0]}))
'''


def test_server_fixes_what_tensorflow_sends(gcs):
  result = gcs.run([sys.executable, '-c', RAW_UPLOAD, gcs.bucket], timeout=60)
  assert result.returncode == 0, result.stderr
  seen = json.loads(result.stdout)
  assert seen['location'].startswith('https://www.googleapis.com/upload/')  # 1: links in the client's scheme
  assert seen['interim'] == 'HTTP/1.1 100 Continue'  # 4
  assert seen['final'].startswith('HTTP/1.1 200')
  assert gcs.read_object('raw') == b'chunked payload'  # 2: stored without the chunk framing
  assert seen['empty'].startswith('HTTP/1.1 200') and gcs.read_object('empty') == b''  # 3


def test_gfile_and_tfrecords_through_tensorflows_own_client(gcs):
  result = gcs.run([sys.executable, GFILE_CALLS, gcs.url('dir')], timeout=300)
  assert result.returncode == 0, result.stderr[-3000:]
  seen = json.loads(result.stdout.splitlines()[-1])
  assert seen['isdir'] and seen['seek_read_ok'] and seen['records_ok']
  assert seen['listdir'] == ['b/', 'blob.bin', 'copy.bin', 'renamed.txt']
  assert seen['glob'] == [gcs.url('dir/a/renamed.txt')]
  # What the server holds: makedirs' zero-byte markers, the blob byte for byte, the renamed file, no copy.
  objects = {item['name']: item for item in gcs.list_objects()}
  assert sorted(objects) == ['dir/', 'dir/a/', 'dir/a/b/', 'dir/a/blob.bin', 'dir/a/renamed.txt',
                             'dir/records.tfrecord']
  blob = gcs.read_object('dir/a/blob.bin')
  assert len(blob) == int(objects['dir/a/blob.bin']['size']) == seen['size']
  assert hashlib.md5(blob).hexdigest() == seen['blob_md5']
  assert base64.b64decode(objects['dir/a/blob.bin']['md5Hash']) == hashlib.md5(blob).digest()
  assert gcs.read_object('dir/a/renamed.txt') == b'hello gs\n'
