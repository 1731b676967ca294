"""runtime/storage.py in-process: which flags it checks, its deadline, and TensorFlow's storage errors as one line.

The same code against a real GCS server, on both TensorFlows, is in test_gcs_failures.py; here TensorFlow's GCS
calls are replaced by stand-ins, so the deadline and the messages can be checked in milliseconds.
"""
import threading
import time

import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu.runtime import storage
from estimator_tpu.runtime.errors import UserError
from support.programs import parse as parse_flags

# What TF's GCS client says, as measured against the loopback server (tests/gcs_fixture.py).
FORBIDDEN = ("Error executing an HTTP request: HTTP response code 403 with body '{\"error\": {\"code\": 403, "
             "\"message\": \"someone@example.iam.gserviceaccount.com does not have storage.objects.get access.\"}}' "
             "when reading gs://b/mnist/train.tfrecords")
RETRIES_FAILED = ("All 10 retry attempts failed. The last failure: Unavailable: Error executing an HTTP request: "
                  "libcurl code 7 meaning 'Couldn't connect to server', error details: Failed to connect to "
                  "www.googleapis.com port 443: Connection refused")


def test_the_flags_that_name_storage():
  fv = parse_flags(['--use_tpu=false', '--master=', '--data_dir=gs://b/mnist', '--model_dir=/tmp/local',
                    '--mode=predict', '--predictions_file=gs://c/p.csv', '--checkpoint_path=gs://b/m/model.ckpt-5'])
  assert storage.flag_paths(fv) == [('data_dir', 'gs://b/mnist'), ('checkpoint_path', 'gs://b/m/model.ckpt-5'),
                                    ('predictions_file', 'gs://c/p.csv')]


@pytest.fixture(autouse=True)
def no_real_storage(monkeypatch):
  """These tests must never reach TensorFlow's real GCS client (outside the sandbox it would go to Google)."""
  def refuse(path):
    raise AssertionError('a real storage call: %s' % path)
  for name in ('stat', 'exists'):
    monkeypatch.setattr(tf.io.gfile, name, refuse)


def test_no_gs_paths_means_no_check(monkeypatch):
  storage.check_paths([('data_dir', '/tmp/data'), ('model_dir', None)])


def test_each_bucket_once_then_each_path(monkeypatch):
  calls = []
  monkeypatch.setattr(tf.io.gfile, 'stat', lambda path: calls.append(('stat', path)))
  monkeypatch.setattr(tf.io.gfile, 'exists', lambda path: calls.append(('exists', path)) or False)
  storage.check_paths([('data_dir', 'gs://b/mnist'), ('model_dir', 'gs://b/model'), ('export_dir', 'gs://c/x')])
  assert calls == [('stat', 'gs://b'), ('exists', 'gs://b/mnist'), ('exists', 'gs://b/model'), ('stat', 'gs://c'),
                   ('exists', 'gs://c/x')]


def test_a_call_that_does_not_return_is_abandoned_at_the_deadline(monkeypatch):
  release = threading.Event()

  def retrying(path):  # TF retrying an unreachable server; then it gives up, and the worker with it
    release.wait(30)
    raise tf.errors.AbortedError(None, None, RETRIES_FAILED)

  monkeypatch.setattr(tf.io.gfile, 'stat', retrying)
  started = time.time()
  try:
    with pytest.raises(UserError) as raised:
      storage.check_paths([('data_dir', 'gs://b/mnist')], deadline_secs=0.3)
  finally:
    release.set()
  assert time.time() - started < 2
  assert str(raised.value).startswith('Cloud Storage did not answer within 0.3 s about --data_dir=gs://b/mnist')


def test_missing_bucket_and_denied_path(monkeypatch):
  def missing(path):
    raise tf.errors.NotFoundError(None, None, 'The specified bucket b was not found.')

  monkeypatch.setattr(tf.io.gfile, 'stat', missing)
  with pytest.raises(UserError, match=r'^the bucket gs://b of --model_dir=gs://b/m does not exist\. Fix: create'):
    storage.check_paths([('model_dir', 'gs://b/m')])

  def denied(path):
    raise tf.errors.PermissionDeniedError(None, None, FORBIDDEN)

  monkeypatch.setattr(tf.io.gfile, 'stat', denied)  # the bucket's metadata may be hidden...
  monkeypatch.setattr(tf.io.gfile, 'exists', lambda path: True)  # ...while its objects may be used: fine
  storage.check_paths([('model_dir', 'gs://b/m')])
  monkeypatch.setattr(tf.io.gfile, 'exists', denied)
  with pytest.raises(UserError) as raised:
    storage.check_paths([('model_dir', 'gs://b/m')])
  assert str(raised.value).startswith('permission denied on --model_dir=gs://b/m (HTTP 403: someone@example.iam.'
                                      'gserviceaccount.com does not have storage.objects.get access). Fix: grant')


@pytest.mark.parametrize('error, expected', [
    (tf.errors.NotFoundError(None, None, 'The specified path gs://b/mnist/train.tfrecords was not found.'),
     'gs://b/mnist/train.tfrecords was not found: it was deleted or moved while the run used it'),
    (tf.errors.PermissionDeniedError(None, None, FORBIDDEN),
     'permission denied on gs://b/mnist/train.tfrecords during the run (HTTP 403: someone@'),
    (tf.errors.AbortedError(None, None, RETRIES_FAILED),
     'Cloud Storage stopped answering during the run; TensorFlow gave up after its retries (All 10 retry'),
], ids=['deleted', 'denied', 'gone'])
def test_storage_errors_during_a_run_are_one_line(error, expected):
  translated = storage.user_error(error)
  assert str(translated).startswith(expected), str(translated)
  assert '\n' not in str(translated) and str(translated).count(' Fix: ') == 1


def test_other_errors_are_not_storage_errors():
  assert storage.user_error(tf.errors.NotFoundError(None, None, '/tmp/x; No such file or directory')) is None
  assert storage.user_error(ValueError('gs://b/x')) is None
