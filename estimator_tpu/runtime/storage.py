"""Cloud Storage (gs://) as the programs use it: a bounded pre-flight of every gs:// path a run names, and
TensorFlow's storage errors as one line that names the path.

Every file the programs read or write goes through tf.io.gfile, so gs:// works wherever a path does; TensorFlow's
own GCS client does the work. Its failure modes are what this module is about (measured on both TensorFlows
against a GCS server on loopback, tests/test_gcs_*.py):
  * unreachable storage is retried for minutes, not reported: TF 1.15 makes 10 attempts, about 88 s per read and
    176 s per write, and has no setting to bound them; TF 2.15 takes about 194 s by default;
  * on TF 2.15, tf.io.gfile.makedirs in a bucket that does not exist never returns (an Estimator's first act on
    its model_dir);
  * a missing bucket or a 403 otherwise surfaces wherever the first file happens to be touched, as a traceback.
So before TensorFlow touches anything, `check_flag_paths` asks TensorFlow's own client (same endpoints,
credentials and CA handling as the run) about each bucket and path, in a daemon thread that is abandoned at a
deadline. A thread still inside TF's retries cannot be stopped, but it does not keep the process from exiting.
"""
import re
import threading
import time

import tensorflow.compat.v1 as tf
from absl import logging

from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

GCS_PREFIX = 'gs://'
# How long the pre-flight may take for all the paths of a run. A healthy bucket answers in well under a second;
# TensorFlow's first attempt against a silent server alone may take longer than this.
DEADLINE_SECS = 10.0
# The flags that name files or directories a run reads or writes, in the order they are reported.
PATH_FLAGS = ('data_dir', 'source_dir', 'model_dir', 'checkpoint_path', 'warm_start_from', 'export_dir',
              'predictions_file')
GCS_URL = re.compile(r'gs://[^\s\'",;)\]]+')
DENIED_FIX = ('grant the account this program runs as (on a Cloud TPU also the TPU\'s service account) access to '
              'gs://%s, e.g. `gsutil iam ch serviceAccount:ACCOUNT:objectAdmin gs://%s`, or use a bucket it may '
              'use.')
UNREACHABLE_FIX = ('check that this machine reaches Cloud Storage (`gsutil ls gs://%s`; network, proxy, firewall), '
                   'then run the same command again.')


def is_gcs(path):
  return bool(path) and path.startswith(GCS_PREFIX)


def bucket_of(path):
  return path[len(GCS_PREFIX):].split('/', 1)[0]


def flag_paths(fv):
  """[(flag name, path)] of the gs:// paths among PATH_FLAGS that `fv` defines and sets."""
  return [(name, fv[name].value) for name in PATH_FLAGS if name in fv and is_gcs(fv[name].value)]


def check_flag_paths(fv, deadline_secs=DEADLINE_SECS):
  """Runs check_paths on the gs:// paths among the program's flags (PATH_FLAGS); returns them."""
  paths = flag_paths(fv)
  check_paths(paths, deadline_secs)
  return paths


def check_paths(named_paths, deadline_secs=DEADLINE_SECS):
  """Raises a UserError for the first of `named_paths` ([(flag name, gs:// path)]) that a run cannot use.

  Per bucket: does it exist, may we see it; per path: may we see it. All within `deadline_secs` in total, or the
  storage counts as unreachable. Paths that do not exist yet are fine (the run creates them), and so is a bucket
  whose metadata we may not read (403) as long as the paths in it answer. Local paths are ignored.
  """
  named_paths = [(name, path) for name, path in named_paths if is_gcs(path)]
  if not named_paths:
    return
  progress = {'asking': named_paths[0], 'problem': None}
  worker = threading.Thread(target=_probe_all, args=(named_paths, progress), name='gcs-preflight')
  worker.daemon = True  # abandoned at the deadline; TF may go on retrying in it until the process exits
  started = time.time()
  worker.start()
  worker.join(deadline_secs)
  if worker.is_alive():
    name, path = progress['asking']
    raise UserError('Cloud Storage did not answer within %g s about --%s=%s (TensorFlow\'s GCS client was still '
                    'retrying).' % (deadline_secs, name, path), UNREACHABLE_FIX % bucket_of(path))
  if progress['problem'] is not None:
    raise progress['problem']
  logging.info('Cloud Storage answers for %s (%.1f s).', ', '.join('--%s' % name for name, _ in named_paths),
               time.time() - started)


def _probe_all(named_paths, progress):
  """The worker: probes each bucket once, then each path; the first problem goes to progress['problem']."""
  name, path = named_paths[0]
  try:
    seen = set()
    for name, path in named_paths:
      progress['asking'] = (name, path)
      bucket = bucket_of(path)
      if bucket not in seen:
        seen.add(bucket)
        _probe_bucket(name, path, bucket)
      _probe_path(name, path)
  except UserError as e:
    progress['problem'] = e
  except Exception as e:  # pylint: disable=broad-except  # anything else: reported, never a thread traceback
    progress['problem'] = UserError('cannot use --%s=%s (%s).' % (name, path, _detail(e)),
                                    UNREACHABLE_FIX % bucket_of(path))


def _probe_bucket(name, path, bucket):
  try:
    tf.io.gfile.stat(GCS_PREFIX + bucket)
  except tf.errors.NotFoundError:
    raise UserError('the bucket gs://%s of --%s=%s does not exist.' % (bucket, name, path),
                    'create it (`gsutil mb -l REGION gs://%s`; on a Cloud TPU in the TPU\'s region) or correct the '
                    'bucket name.' % bucket)
  except tf.errors.PermissionDeniedError:
    pass  # may read objects without seeing the bucket's metadata; the path probe decides


def _probe_path(name, path):
  try:
    tf.io.gfile.exists(path)
  except tf.errors.PermissionDeniedError as e:
    bucket = bucket_of(path)
    raise UserError('permission denied on --%s=%s (%s).' % (name, path, _detail(e)), DENIED_FIX % (bucket, bucket))


def _detail(error):
  """The useful part of a TensorFlow storage error: the server's own message where there is one, not its JSON."""
  text = essence(error)
  code = re.search(r'HTTP response code (\d+)', text)
  message = re.search(r'"message":\s*"((?:[^"\\]|\\.)*)"', text)
  if code and message:
    return ('HTTP %s: %s' % (code.group(1), message.group(1))).rstrip('.')
  return text.rstrip('.')


def user_error(error):
  """A UserError for a TensorFlow error about a gs:// object during a run, or None if it is not one.

  The pre-flight catches what is wrong before a run; these are the things that go wrong during one: an object
  deleted while the run reads it, access revoked, storage gone away long enough for TF's retries to run out.
  """
  if not isinstance(error, tf.errors.OpError):
    return None
  message = getattr(error, 'message', None) or str(error)
  urls = GCS_URL.findall(message)
  url = urls[0].rstrip('.') if urls else None
  if isinstance(error, tf.errors.NotFoundError) and url:
    return UserError('%s was not found: it was deleted or moved while the run used it (%s).' % (url, _detail(error)),
                     'restore it (for data: `python -m tools.prepare_data --data_dir=DIR` again), keep other jobs '
                     'from changing that path during a run, and run the same command again.')
  if isinstance(error, tf.errors.PermissionDeniedError) and 'HTTP response code 403' in message:  # GCS's answer
    where = url or 'Cloud Storage'
    bucket = bucket_of(url) if url else 'BUCKET'
    return UserError('permission denied on %s during the run (%s).' % (where, _detail(error)),
                     DENIED_FIX % (bucket, bucket))
  if isinstance(error, (tf.errors.AbortedError, tf.errors.UnavailableError, tf.errors.DeadlineExceededError)) and (
      'retry attempts failed' in message or 'libcurl' in message):
    return UserError('Cloud Storage stopped answering during the run%s; TensorFlow gave up after its retries (%s).'
                     % (' (%s)' % url if url else '', _detail(error)),
                     UNREACHABLE_FIX % (bucket_of(url) if url else 'BUCKET') + ' Training resumes from the last '
                     'checkpoint in --model_dir.')
  return None
