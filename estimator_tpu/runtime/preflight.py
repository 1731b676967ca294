"""Cheap checks that fail in seconds, before anything slow: a directory can be written; a TPU worker answers; a
TPU is attached to this machine.

`require_writable_dir` proves a model or data directory writable before a download or a training run is wasted on
it.

`require_reachable` is a bounded TCP probe of a TPU worker, run before TPUEstimator gets a chance to retry for
minutes. TPUEstimator connects to `grpc://HOST:PORT` only when the first session starts, and an absent worker then costs
minutes of gRPC retries before an error that rarely says "unreachable". A TCP connect to the same port answers in
milliseconds (refused) or within a timeout (dropped). It proves that something listens there, not that it is a
healthy TPU worker; it is a cheap pre-flight, not a health check.

`require_tpu_attached` is the pre-flight of a TPU VM, where the TPU is a device of this machine and there is no
worker port to probe: it looks for the TPU's device files (see attached_tpu_devices).
"""
import glob
import os
import re
import socket
import threading

import tensorflow.compat.v1 as tf

from estimator_tpu.runtime import atomic_files
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

DEFAULT_TIMEOUT_SECS = 10.0
GRPC_ADDRESS = re.compile(r'^grpc://(?P<host>[^\s:/]+):(?P<port>\d+)$')
# Name resolution is not covered by the socket timeout, so the whole probe runs in a thread we wait for at most
# this much longer than the timeout.
JOIN_SLACK_SECS = 1.0
# PCI vendor id of Google, which sysfs reports for TPU chips.
GOOGLE_PCI_VENDOR = '0x1ae0'


def split_address(address):
  """Returns (host, port) of 'grpc://HOST:PORT', or raises a UserError."""
  match = GRPC_ADDRESS.match(address or '')
  if not match:
    raise UserError('%r is not a TPU worker address.' % address,
                    'name the worker as grpc://HOST:PORT (e.g. grpc://10.240.1.2:8470), or use --tpu_name.')
  return match.group('host'), int(match.group('port'))


def probe(host, port, timeout_secs=DEFAULT_TIMEOUT_SECS):
  """Tries a TCP connection; returns None if it was accepted, else the reason (refused, timed out, ...)."""
  outcome = {'error': 'no answer within %g s' % timeout_secs}

  def connect():
    try:
      socket.create_connection((host, port), timeout=timeout_secs).close()
      outcome['error'] = None
    except socket.timeout:
      pass  # the default message says it
    except OSError as e:
      outcome['error'] = e.strerror or str(e)

  worker = threading.Thread(target=connect, name='tpu-probe')
  worker.daemon = True  # a resolver stuck past the deadline must not keep the process alive
  worker.start()
  worker.join(timeout_secs + JOIN_SLACK_SECS)
  return outcome['error']


def require_reachable(address, timeout_secs=DEFAULT_TIMEOUT_SECS):
  """Raises a UserError unless a TCP connection to the grpc:// `address` succeeds within `timeout_secs`."""
  host, port = split_address(address)
  error = probe(host, port, timeout_secs)
  if error is not None:
    raise UserError('the TPU worker %s is not reachable: %s (TCP connect, %g s limit).' % (address, error,
                                                                                           timeout_secs),
                    "check that the TPU is READY (`gcloud compute tpus list`), that --tpu_name/--master name it, and "
                    "that this VM can reach it (same network and zone, firewall allows port %d)." % port)


def attached_tpu_devices(dev_root='/dev', sys_root='/sys'):
  """Device files of TPU chips attached to this machine (a TPU VM); [] elsewhere. Reads files only, no TensorFlow.

  TPU VMs expose their chips as /dev/accel<N> (v2-v4) or as VFIO groups /dev/vfio/<N> (v5e and later;
  /dev/vfio/vfio is only VFIO's control node). Both are generic Linux interfaces, so a device whose PCI vendor
  sysfs names and is not Google's does not count; an accel node without a vendor in sysfs does, a VFIO group
  only with Google's vendor (ray-project/ray#65034 and #63322 describe both false positives). `dev_root` and
  `sys_root` stand for /dev and /sys (tests point them at a temporary directory).
  """
  found = []
  for path in sorted(glob.glob(os.path.join(dev_root, 'accel*'))):
    vendor = _read_text(os.path.join(sys_root, 'class', 'accel', os.path.basename(path), 'device', 'vendor'))
    if vendor in (None, GOOGLE_PCI_VENDOR):
      found.append(path)
  for path in sorted(glob.glob(os.path.join(dev_root, 'vfio', '*'))):
    group = os.path.basename(path)
    vendors = glob.glob(os.path.join(sys_root, 'kernel', 'iommu_groups', group, 'devices', '*', 'vendor'))
    if group.isdigit() and any(_read_text(vendor) == GOOGLE_PCI_VENDOR for vendor in vendors):
      found.append(path)
  return found


def _read_text(path):
  try:
    with open(path) as f:
      return f.read().strip()
  except (IOError, OSError):
    return None


def require_tpu_attached(dev_root='/dev', sys_root='/sys'):
  """Raises a UserError at once unless a TPU is attached to this machine (TPU VM pre-flight); returns its devices.

  Without it, TensorFlow would only say "Cannot find any TPU cores in the system" after building the whole input
  and model graph.
  """
  devices = attached_tpu_devices(dev_root, sys_root)
  if not devices:
    raise UserError('no TPU is attached to this machine (no %s nor Google VFIO group under %s).'
                    % (os.path.join(dev_root, 'accel*'), os.path.join(dev_root, 'vfio')),
                    "run on a TPU VM (gcloud compute tpus tpu-vm ssh NAME), name a TPU Node with --tpu_name=NAME or "
                    "--master=grpc://IP:8470, or run locally with --use_tpu=false --master=''.")
  return devices


def require_readable_dir(path, flag_name, suffix='.tfrecords'):
  """Raises a UserError if the existing directory `path` (--`flag_name`), or a `suffix` file in it, cannot be read.

  Without it an unreadable folder looks empty (its files do not "exist" to a listing that fails), and the run would
  go on to prepare data into it and then report that it cannot write there. A path that does not exist is fine:
  the caller creates it.
  """
  if not tf.io.gfile.isdir(path):
    return
  try:
    names = tf.io.gfile.listdir(path)
    # Local files only: a gs:// path was asked about by the storage pre-flight (storage.py), and a read there
    # is a request of its own.
    for name in names if '://' not in path else ():
      if name.endswith(suffix):
        with tf.io.gfile.GFile(os.path.join(path, name), 'rb') as f:
          f.read(1)
  except tf.errors.OpError as e:
    raise UserError('cannot read --%s=%s (%s).' % (flag_name, path, essence(e)),
                    'make it and its files readable for this user (on a Cloud TPU, for the TPU service account '
                    'as well), or pass another --%s.' % flag_name)


def require_writable_file(path, flag_name):
  """Proves that the file `path` (the value of --`flag_name`) can be written, before any work: not a directory, and
  its directory writable (require_writable_dir, which leaves nothing behind)."""
  if tf.io.gfile.isdir(path):
    raise UserError('--%s=%s is a directory.' % (flag_name, path),
                    'pass a file name for --%s, e.g. %s.' % (flag_name, os.path.join(path, 'predictions.csv')))
  try:
    require_writable_dir(os.path.dirname(path) or '.', flag_name)
  except UserError as e:
    raise UserError('cannot write --%s=%s: %s' % (flag_name, path, e.problem),
                    'pass a --%s in a directory that you may create and write.' % flag_name)


def require_directory_path(path, flag_name):
  """Raises a UserError if `path` names an existing file: --`flag_name` must be a directory (or not exist yet)."""
  if tf.io.gfile.exists(path) and not tf.io.gfile.isdir(path):
    raise UserError('--%s=%s is a file, not a directory.' % (flag_name, path),
                    'pass a directory for --%s (it is created if it does not exist).' % flag_name)


def require_writable_dir(path, flag_name):
  """Proves `path` writable by creating it if needed and writing and removing a small file; UserError if not.

  Run before anything slow, so that an unwritable --model_dir fails in a second rather than after a download
  or at the first checkpoint. Directories it had to create are removed again, so a run that fails later
  leaves nothing behind. On a Cloud TPU this proves that the VM may write; the TPU's service account writes
  checkpoints too and needs the same permission on the bucket.
  """
  created = _first_missing_ancestor(path)
  probe = atomic_files.temp_path(os.path.join(path, '.write-check'))
  try:
    tf.io.gfile.makedirs(path)
    with tf.io.gfile.GFile(probe, 'w') as f:
      f.write('ok')
    tf.io.gfile.remove(probe)
  except tf.errors.OpError as e:
    raise UserError('cannot write to --%s=%s (%s).' % (flag_name, path, essence(e)),
                    'pass a --%s that you may create and write (on a Cloud TPU: a gs:// path the TPU service '
                    'account may write, too).' % flag_name)
  finally:
    if created is not None and tf.io.gfile.isdir(created):
      tf.io.gfile.rmtree(created)


def _first_missing_ancestor(path):
  """Returns the outermost directory that creating `path` would create, or None if `path` exists."""
  if '://' not in path:
    path = os.path.abspath(path)
  missing = None
  while not tf.io.gfile.exists(path):
    parent = os.path.dirname(path.rstrip('/'))
    if parent == path or ('://' in path and '://' not in parent):
      break  # '/' or a bucket: never created, nor removed, here
    missing, path = path, parent
  return missing
