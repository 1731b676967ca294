"""Bad input and failures, end to end through the programs as a user runs them.

Every case must end with exactly one `error: ... Fix: ...` line, exit status 1, no traceback, and no partial
output: no half-written or temporary file, and no directory the failed run created.
"""
import gzip
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from support.paths import REPO_ROOT
from support.damage import flip_byte
from support.mounts import READ_ONLY_MOUNT
from support.programs import assert_one_clear_error
from estimator_tpu import model
from estimator_tpu.data import idx
from estimator_tpu.data import records
from estimator_tpu.tpu import model_fn as model_fn_lib
from support.programs import SCRIPT
from support.programs import TINY
from support.programs import run_script

PREPARE = ['-m', 'tools.prepare_data']  # run from REPO_ROOT


def run_prepare(args, timeout=120):
  return subprocess.run([sys.executable] + PREPARE + ['--validation_size=50'] + args, cwd=REPO_ROOT,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)


def tree(directory):
  """Every file and directory below `directory`, as relative paths."""
  found = set()
  for root, dirs, files in os.walk(directory):
    for name in dirs + files:
      found.add(os.path.relpath(os.path.join(root, name), directory))
  return found


def assert_no_partial_files(directory):
  """No temporary files, and every checkpoint the model directory lists reads back completely."""
  names = tree(directory)
  assert not [n for n in names if '.tmp-' in n or '_temp' in n], names
  state = tf.train.get_checkpoint_state(directory)
  for path in (state.all_model_checkpoint_paths if state else []):
    reader = tf.train.NewCheckpointReader(path)
    for name in reader.get_variable_to_shape_map():
      reader.get_tensor(name)


@pytest.fixture
def model_dir(tmp_path):
  return str(tmp_path / 'model')


def run_local(data_dir, model_dir, *extra):
  return run_script(TINY + ['--data_dir=%s' % data_dir, '--model_dir=%s' % model_dir] + list(extra))


# --- damaged or inconsistent IDX files, through tools/prepare_data.py ---


def _truncate(path):
  data = idx.read_bytes(path)
  with open(path, 'wb') as f:
    f.write(gzip.compress(data[:-100]))


def _swap_magic(path):
  with open(path, 'wb') as f:
    f.write(gzip.compress(idx.to_bytes(np.zeros((110, 28, 28), np.uint8))))  # images where labels belong


def _other_count(path):
  with open(path, 'wb') as f:
    f.write(gzip.compress(idx.to_bytes(np.zeros(109, np.uint8))))


def _not_gzip(path):
  data = idx.read_bytes(path)
  with open(path, 'wb') as f:
    f.write(data)  # still named .gz


def _label_twelve(path):
  labels = idx.read_labels(path).copy()
  labels[7] = 12
  with open(path, 'wb') as f:
    f.write(gzip.compress(idx.to_bytes(labels)))


@pytest.mark.parametrize('damage, name, fragments', [
    (_truncate, 'train-images-idx3-ubyte.gz', ['train-images-idx3-ubyte.gz', 'truncated or padded']),
    (_swap_magic, 't10k-labels-idx1-ubyte.gz', ['magic number 0x00000803, expected 0x00000801']),
    (_other_count, 't10k-labels-idx1-ubyte.gz', ['test split has 110 images but 109 labels']),
    (_not_gzip, 'train-labels-idx1-ubyte.gz', ['named .gz but is not gzip']),
    (_label_twelve, 'train-labels-idx1-ubyte.gz', ['label 12 at index 7', 'labels must be 0-9']),
])
def test_bad_idx_files(tmp_path, idx_dir, damage, name, fragments):
  damage(os.path.join(idx_dir, name))
  data_dir = str(tmp_path / 'data')
  assert_one_clear_error(run_prepare(['--source_dir=%s' % idx_dir, '--data_dir=%s' % data_dir]), *fragments)
  assert not os.path.exists(data_dir)


def test_missing_idx_file_through_mnist_tpu(tmp_path, idx_dir, model_dir):
  os.remove(os.path.join(idx_dir, 'train-images-idx3-ubyte.gz'))
  data_dir = str(tmp_path / 'data')
  result = run_local(data_dir, model_dir, '--source_dir=%s' % idx_dir)
  assert_one_clear_error(result, 'train-images-idx3-ubyte(.gz) not found in %s' % idx_dir)
  assert not os.path.exists(data_dir) and not os.path.exists(model_dir)


def test_unwritable_data_dir_fails_before_reading_anything(tmp_path, idx_dir):
  blocker = tmp_path / 'a-file'
  blocker.write_text('')
  before = tree(str(tmp_path))
  result = run_prepare(['--source_dir=%s' % idx_dir, '--data_dir=%s' % (blocker / 'data')])
  assert_one_clear_error(result, 'cannot write to --data_dir=%s' % (blocker / 'data'))
  assert tree(str(tmp_path)) == before


# --- damaged TFRecords and missing splits, through mnist_tpu.py ---


@pytest.mark.parametrize('split', ['train', 'test'])
def test_tfrecord_with_flipped_bytes(data_dir, model_dir, split):
  path = records.split_path(data_dir, split)
  flip_byte(path, 5000)  # inside the 6th record (each is ~890 bytes)
  before = tree(data_dir)
  line = assert_one_clear_error(run_local(data_dir, model_dir), '%s is damaged: record 5 fails its check' % path,
                                'tools.prepare_data --data_dir=%s' % data_dir)
  assert 'corrupted record' in line
  assert tree(data_dir) == before and not os.path.exists(model_dir)  # found before training started


def test_truncated_tfrecord(data_dir, model_dir):
  path = records.split_path(data_dir, 'train')
  with open(path, 'r+b') as f:
    f.truncate(os.path.getsize(path) - 100)
  assert_one_clear_error(run_local(data_dir, model_dir), '%s is damaged: record 249 fails its check' % path)
  assert not os.path.exists(model_dir)


def test_tfrecord_labels_outside_0_9(data_dir, model_dir):
  path = records.split_path(data_dir, 'train')
  images, labels = records.read_split(path)
  labels[[3, 40]] = [10, 255]
  records.write_split(path, images, labels)
  line = assert_one_clear_error(run_local(data_dir, model_dir), 'labels outside 0-9 in %s' % path, 'Fix: fix or drop')
  found = line.split(': found ')[1].split('.')[0].split()
  assert found and set(found) <= {'10', '255'}  # the bad labels of the batch that hit them
  assert_no_partial_files(model_dir)
  assert not os.path.exists(os.path.join(model_dir, 'mnist_tpu_results.json'))


def test_missing_split_file(data_dir, model_dir):
  os.remove(records.split_path(data_dir, 'test'))
  before = tree(data_dir)
  assert_one_clear_error(run_local(data_dir, model_dir), '%s holds train.tfrecords, validation.tfrecords but not '
                         'test.tfrecords' % data_dir, 'tools.prepare_data --data_dir=%s' % data_dir)
  assert tree(data_dir) == before and not os.path.exists(model_dir)  # not overwritten by a fresh MNIST download


# --- model directory problems ---


def test_unwritable_model_dir_fails_before_any_work(tmp_path, idx_dir):
  blocker = tmp_path / 'a-file'
  blocker.write_text('')
  data_dir, model_dir = str(tmp_path / 'data'), str(blocker / 'model')
  result = run_local(data_dir, model_dir, '--source_dir=%s' % idx_dir)
  assert_one_clear_error(result, 'cannot write to --model_dir=%s' % model_dir)
  assert not os.path.exists(data_dir)  # checked before the data was prepared




def test_read_only_model_dir(tmp_path, data_dir):
  """--model_dir inside a directory nobody may write. Root ignores permission bits, so as root the directory is
  made a read-only bind mount instead, in a mount namespace of the run's own (nothing else sees it)."""
  parent = tmp_path / 'read-only'
  parent.mkdir()
  if os.geteuid() == 0:
    result = subprocess.run(['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', READ_ONLY_MOUNT,
                             'sh', str(parent), sys.executable, SCRIPT] + TINY +
                            ['--data_dir=%s' % data_dir, '--model_dir=%s' % (parent / 'model')],
                            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            timeout=300)
  else:
    parent.chmod(0o555)
    try:
      result = run_local(data_dir, str(parent / 'model'))
    finally:
      parent.chmod(0o755)
  assert_one_clear_error(result, 'cannot write to --model_dir=%s' % (parent / 'model'))
  assert os.listdir(str(parent)) == []


def test_created_model_dir_is_removed_when_the_run_fails_early(tmp_path, data_dir):
  os.remove(records.split_path(data_dir, 'validation'))
  model_dir = str(tmp_path / 'new' / 'nested' / 'model')
  assert_one_clear_error(run_local(data_dir, model_dir), 'but not validation.tfrecords')
  assert not os.path.exists(str(tmp_path / 'new'))


def _save_checkpoint(model_dir, monkeypatch, dense_units=model.DENSE_UNITS):
  """Saves step 5 of this model_fn's TRAIN graph; another dense layer width makes it a different architecture."""
  monkeypatch.setattr(model, 'DENSE_UNITS', dense_units)
  with tf.Graph().as_default():
    tf.train.create_global_step()
    model_fn_lib.model_fn_builder(1e-3, 1000, 0.5)(
        {model.IMAGE_KEY: tf.zeros([2, model.NUM_PIXELS])}, tf.zeros([2], tf.int32),
        tf.estimator.ModeKeys.TRAIN, {'use_tpu': False, 'batch_size': 2})
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      tf.train.Saver().save(sess, os.path.join(model_dir, 'model.ckpt'), global_step=5)


def test_checkpoint_of_a_different_architecture(data_dir, model_dir, monkeypatch):
  _save_checkpoint(model_dir, monkeypatch, dense_units=64)
  before = tree(model_dir)
  line = assert_one_clear_error(run_local(data_dir, model_dir),
                                '--model_dir=%s holds a checkpoint of a different model (model.ckpt-5)' % model_dir,
                                'dense/bias has shape [64] there but [1024] here', 'pass a new --model_dir')
  assert line.endswith('run the code that wrote it.')
  assert tree(model_dir) == before  # nothing trained, nothing overwritten


def test_checkpoint_without_the_model_variables(data_dir, model_dir):
  with tf.Graph().as_default():
    tf.train.create_global_step()
    tf.get_variable('some_other_model/kernel', [3, 3])
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      tf.train.Saver().save(sess, os.path.join(model_dir, 'model.ckpt'), global_step=5)
  assert_one_clear_error(run_local(data_dir, model_dir), 'a checkpoint of a different model',
                         'conv2d/bias is missing')


def test_damaged_checkpoint(data_dir, model_dir, monkeypatch):
  _save_checkpoint(model_dir, monkeypatch)
  checkpoint = tf.train.latest_checkpoint(model_dir)
  flip_byte(checkpoint + '.data-00000-of-00001', 1000)
  assert_one_clear_error(run_local(data_dir, model_dir, '--train_steps=20'),
                         'cannot read the checkpoint %s' % checkpoint, 'restore --model_dir=%s' % model_dir)


# --- training that goes wrong ---


def test_nan_loss_stops_training_naming_the_step(data_dir, model_dir):
  # 1e38 overflows the first Adam update in both TensorFlows (1e30 still gives a finite loss under TF 2.15).
  result = run_local(data_dir, model_dir, '--learning_rate=1e38')
  line = assert_one_clear_error(result, 'the training loss became NaN at step ', 'lower --learning_rate')
  step = int(line.split('NaN at step ')[1].split(';')[0])
  assert 1 <= step < 30
  # It stopped there: the newest checkpoint is older than the NaN step.
  assert int(tf.train.latest_checkpoint(model_dir).rsplit('-', 1)[1]) < step
  assert_no_partial_files(model_dir)
  assert not os.path.exists(os.path.join(model_dir, 'mnist_tpu_results.json'))


# --- flags that contradict each other ---


@pytest.mark.parametrize('args, message', [
    (['--use_tpu=false', '--master=', '--tpu_name=my-tpu'], 'drop them or pass --use_tpu=true'),
    (['--tpu_name=t', '--master=grpc://10.0.0.2:8470', '--model_dir=gs://b/m', '--data_dir=gs://b/d'],
     'pass only one of them'),
    (['--tpu_name=t', '--model_dir=/tmp/m', '--data_dir=gs://b/d'], 'must be gs:// paths'),
])
def test_contradictory_flags_stop_before_anything_runs(tmp_path, args, message):
  result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'mnist_tpu.py')] + args, cwd=str(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
  assert result.returncode != 0
  assert message in result.stderr and 'Traceback' not in result.stderr
  assert os.listdir(str(tmp_path)) == []
