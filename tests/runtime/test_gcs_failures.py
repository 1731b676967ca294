"""Cloud Storage failing, and data in another layout: one `error: ... Fix: ...` line naming the path, exit status
1, within seconds, and nothing half-written in the bucket.

Without the pre-flight of runtime/storage.py, TF 1.15 retries unreachable storage for ~88 s per read and ~176 s per
write, and TF 2.15's makedirs in a missing bucket never returns (tests/gcs_fixture.py's server shows both). Every
program runs as a user runs it, inside the sandbox; the bucket is listed through the server's own API afterwards.
"""
import os
import sys
import time

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from support.tiny_run import TINY_VALIDATION
from estimator_tpu.data import records
from estimator_tpu.data import synthetic
from estimator_tpu.runtime.errors import UserError
from support.programs import assert_one_clear_error
from support.gcs_fixture import upload_splits
from support.programs import TINY
from support.programs import run_script

TF2 = tf.__version__.startswith('2.')
BOUND_SECS = 30  # what a user waits, at most, to be told: TF import and the pre-flight's 10 s deadline included
MISSING_BUCKET = 'estimator-tpu-no-such-bucket'
SPLIT_OBJECTS = ['mnist/test.tfrecords', 'mnist/train.tfrecords', 'mnist/validation.tfrecords']


def run_timed(gcs, args, env=None):
  """Runs `python ARGS` inside the sandbox; returns (CompletedProcess, seconds it took)."""
  started = time.time()
  result = gcs.run([sys.executable] + args, env=env, timeout=120)
  return result, time.time() - started


@pytest.mark.parametrize('mode', ['down', 'frozen'])
def test_prepare_data_without_reachable_storage_is_one_line_in_seconds(gcs, mode):
  """The issue's case: `python -m tools.prepare_data --data_dir=gs://...` and Cloud Storage refuses connections
  (down) or accepts them and never answers (frozen)."""
  gcs.set_mode(mode)
  result, elapsed = run_timed(gcs, ['-m', 'tools.prepare_data', '--data_dir=%s' % gcs.url('mnist')])
  assert_one_clear_error(result, 'Cloud Storage did not answer within 10 s about --data_dir=%s' % gcs.url('mnist'),
                         'gsutil ls gs://%s' % gcs.bucket)
  assert elapsed < BOUND_SECS, elapsed
  gcs.reset()
  assert gcs.object_names() == []


def test_bucket_that_does_not_exist_is_one_line_in_seconds(gcs, data_dir):
  """A --model_dir in a missing bucket: on TF 2.15 the Estimator's makedirs would never return."""
  data = upload_splits(gcs, data_dir)
  model_dir = 'gs://%s/model' % MISSING_BUCKET
  result, elapsed = run_timed(gcs, ['mnist_tpu.py'] + TINY + ['--data_dir=%s' % data, '--model_dir=%s' % model_dir])
  assert_one_clear_error(result, 'the bucket gs://%s of --model_dir=%s does not exist' % (MISSING_BUCKET, model_dir),
                         'gsutil mb')
  assert elapsed < BOUND_SECS, elapsed
  assert gcs.object_names() == SPLIT_OBJECTS


def test_permission_denied_on_the_model_dir_is_one_line_in_seconds(gcs, data_dir):
  data = upload_splits(gcs, data_dir)
  gcs.deny('model')
  result, elapsed = run_timed(gcs, ['mnist_tpu.py'] + TINY + ['--data_dir=%s' % data,
                                                             '--model_dir=%s' % gcs.url('model')])
  assert_one_clear_error(result, 'permission denied on --model_dir=%s (HTTP 403' % gcs.url('model'),
                         'gs://%s' % gcs.bucket)
  assert elapsed < BOUND_SECS, elapsed
  assert gcs.object_names() == SPLIT_OBJECTS


def test_permission_denied_on_the_bucket_stops_prepare_data(gcs, idx_dir):
  gcs.deny('')  # the whole bucket, as IAM grants it
  result, elapsed = run_timed(gcs, ['-m', 'tools.prepare_data', '--data_dir=%s' % gcs.url('mnist'),
                                    '--source_dir=%s' % idx_dir])
  assert_one_clear_error(result, 'permission denied on --data_dir=%s' % gcs.url('mnist'))
  assert elapsed < BOUND_SECS, elapsed
  gcs.reset()
  assert gcs.object_names() == []


# Every program checks its gs:// paths before TensorFlow touches one. mnist_keras.py is TF 2 only.
PROGRAMS = {
    'mnist_tpu': ['mnist_tpu.py'] + TINY,
    'mnist': ['mnist.py', '--train_steps=10', '--batch_size=16'],
    'mnist_keras': ['mnist_keras.py', '--use_tpu=false', '--master=', '--train_steps=10', '--batch_size=16'],
    'mnist_cluster': ['-m', 'tools.mnist_cluster', '--train_steps=10', '--batch_size=16'],
}


@pytest.mark.parametrize('program', sorted(PROGRAMS))
def test_every_program_stops_in_seconds_when_storage_is_unreachable(gcs, program):
  if program == 'mnist_keras' and not TF2:
    pytest.skip('mnist_keras.py is the TensorFlow 2 route')
  gcs.set_mode('down')
  # A cluster of one chief: the route reads TF_CONFIG before anything else.
  env = {'TF_CONFIG': '{"cluster": {"chief": ["127.0.0.1:2222"]}, "task": {"type": "chief", "index": 0}}'} \
      if program == 'mnist_cluster' else None
  result, elapsed = run_timed(gcs, PROGRAMS[program] + ['--data_dir=%s' % gcs.url('mnist'),
                                                       '--model_dir=%s' % gcs.url('model')], env=env)
  assert_one_clear_error(result, 'Cloud Storage did not answer within 10 s about --data_dir=%s' % gcs.url('mnist'))
  assert elapsed < BOUND_SECS, elapsed


def test_readiness_check_reports_unreachable_storage_as_its_line(gcs):
  gcs.set_mode('down')
  result, elapsed = run_timed(gcs, ['mnist_tpu.py', '--mode=check_tpu', '--data_dir=%s' % gcs.url('mnist'),
                                    '--model_dir=%s' % gcs.url('model')])
  assert result.returncode == 1 and 'Traceback' not in result.stderr, result.stderr[-3000:]
  assert result.stdout.splitlines()[0].startswith(
      'FAIL storage_access (rule 17): Cloud Storage did not answer within 10 s about --data_dir=%s' % gcs.url('mnist'))
  assert result.stdout.splitlines()[-1] == 'TPU readiness: 0 passed, 1 failed, 0 skipped.'
  assert elapsed < BOUND_SECS, elapsed


def test_object_deleted_mid_read_is_one_line(gcs, tmp_path):
  """train.tfrecords disappears after its first MiB was read: the server deletes it once it has answered one read
  of it. (TF's block cache with 1 MiB blocks makes TF fetch the ~2.5 MB split in three requests; by default it would
  fetch it whole, and only then learn the object is gone.)"""
  synthetic.write_idx_dir(str(tmp_path / 'idx'), train_count=3000 + TINY_VALIDATION, test_count=110)
  records.convert_idx_dir(str(tmp_path / 'idx'), str(tmp_path / 'data'), validation_size=TINY_VALIDATION)
  assert os.path.getsize(records.split_path(str(tmp_path / 'data'), 'train')) > 2 << 20
  data = upload_splits(gcs, str(tmp_path / 'data'))
  gcs.vanish('mnist/train.tfrecords', after_reads=1)
  result, elapsed = run_timed(gcs, ['mnist_tpu.py'] + TINY + ['--mode=train', '--data_dir=%s' % data,
                                                             '--model_dir=%s' % gcs.url('model')],
                              env={'GCS_READ_CACHE_BLOCK_SIZE_MB': '1', 'GCS_READ_CACHE_MAX_SIZE_MB': '16'})
  assert_one_clear_error(result, '%s disappeared while it was being read (' % gcs.url('mnist/train.tfrecords'))
  assert elapsed < BOUND_SECS, elapsed
  assert gcs.object_names() == ['mnist/test.tfrecords', 'mnist/validation.tfrecords']  # no model_dir was written


# --- TFRecords in another layout: stopped before training, on local disk and on gs:// alike ---------------------------


def example(**features):
  """A serialized tf.train.Example; each keyword is bytes (bytes_list), int (int64_list) or float (float_list)."""
  def feature(value):
    if isinstance(value, bytes):
      return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
    if isinstance(value, float):
      return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))
  return tf.train.Example(features=tf.train.Features(feature={k: feature(v) for k, v in features.items()})
                          ).SerializeToString()


PIXELS = bytes(784)
LAYOUTS = {
    # case: (first record, what the message must say)
    'no-label': (example(image_raw=PIXELS, height=28, width=28), 'its first example has no feature `label` (its '
                 'features: height, image_raw, width)'),
    'float-label': (example(image_raw=PIXELS, label=3.0), 'has `label` as float_list of 1 value, not one int64'),
    'other-size': (example(image_raw=bytes(32 * 32 * 3), label=3, height=32, width=32, depth=3),
                   'has `image_raw` of 3072 bytes (32x32x3), not 784 (28x28 pixels'),
    'image-as-ints': (example(image_raw=7, label=3), 'has `image_raw` as int64_list of 1 value, not one string'),
    'other-name': (example(image=PIXELS, label=3), 'has no feature `image_raw` (its features: image, label)'),
    'not-an-example': (b'\x0a\x09truncated', 'does not hold tf.train.Example records: its first record does not '
                       'parse as one'),
    'no-features': (b'', 'does not hold tf.train.Example records: its first record has no features'),
}


def write_records(path, first, count=20):
  with tf.io.TFRecordWriter(path) as writer:
    for _ in range(count):
      writer.write(first)


@pytest.mark.parametrize('case', sorted(LAYOUTS))
def test_records_in_another_layout_name_the_file_and_the_feature(tmp_path, case):
  record, expected = LAYOUTS[case]
  path = str(tmp_path / 'train.tfrecords')
  write_records(path, record)
  with pytest.raises(UserError) as raised:
    records.count_examples(path)
  assert str(raised.value).startswith(path + ' ') and expected in str(raised.value), str(raised.value)
  assert 'image_raw' in raised.value.fix and 'tools.prepare_data' in raised.value.fix


def test_a_good_first_record_passes(tmp_path):
  path = str(tmp_path / 'train.tfrecords')
  records.write_split(path, np.zeros((3, 28, 28), np.uint8), np.array([1, 2, 3]))
  records.check_layout(path)
  assert records.count_examples(path) == 3


@pytest.mark.parametrize('where', ['local', 'gcs'])
def test_a_split_in_another_layout_stops_the_run_before_training(request, tmp_path, data_dir, where):
  """One line naming the file and the feature, before any checkpoint; the same on a local disk and on gs://."""
  train = records.split_path(data_dir, 'train')
  write_records(train, LAYOUTS['no-label'][0])
  if where == 'local':
    model_dir = str(tmp_path / 'model')
    result = run_script(TINY + ['--mode=train', '--data_dir=%s' % data_dir, '--model_dir=%s' % model_dir])
    # data_dir's dataset.json (written with the records) describes the layout the file is not in.
    assert_one_clear_error(result, '%s is not in the layout of dataset.json: its first example has no feature '
                           '`label`' % train)
    assert not os.path.exists(model_dir)
    return
  gcs = request.getfixturevalue('gcs')
  data = upload_splits(gcs, data_dir)
  result, elapsed = run_timed(gcs, ['mnist_tpu.py'] + TINY + ['--mode=train', '--data_dir=%s' % data,
                                                             '--model_dir=%s' % gcs.url('model')])
  assert_one_clear_error(result, '%s/train.tfrecords is not in the MNIST TFRecord layout: its first example has no '
                         'feature `label`' % data)
  assert elapsed < BOUND_SECS, elapsed
  assert gcs.object_names() == SPLIT_OBJECTS
