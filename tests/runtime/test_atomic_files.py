"""Temporary names and the cleanup of what killed writers leave behind (records.py and download.py use them)."""
import gzip
import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from estimator_tpu.data import download
from estimator_tpu.data import idx
from estimator_tpu.data import records
from estimator_tpu.runtime import atomic_files


@pytest.fixture(scope='module')
def dead_pid():
  """The id of a process that has exited (ids are reused only after the counter wraps around)."""
  process = subprocess.Popen([sys.executable, '-c', 'pass'])
  process.wait()
  return process.pid


def temp_of(path, pid, host=None):
  return '%s%s%s-%d-%s' % (path, atomic_files.TEMP_MARKER, host or atomic_files._host(), pid, 'abcd1234')


def touch(path):
  with open(path, 'wb') as f:
    f.write(b'half')


def test_temp_path_names_host_and_process_and_is_fresh(tmp_path):
  path = str(tmp_path / 'train.tfrecords')
  first, second = atomic_files.temp_path(path), atomic_files.temp_path(path)
  assert first != second and first.startswith(path + '.tmp-')
  assert atomic_files._writer_of(first) == (atomic_files._host(), os.getpid())


def test_remove_stale_temps_removes_only_those_of_dead_writers_on_this_host(tmp_path, dead_pid):
  path = str(tmp_path / 'train.tfrecords')
  stale = temp_of(path, dead_pid)
  running = temp_of(path, os.getpid())
  elsewhere = temp_of(path, dead_pid, host='another_host')
  unrelated = path + '.tmp-by-someone-else'
  other_file = temp_of(str(tmp_path / 'test.tfrecords'), dead_pid)
  for name in (path, stale, running, elsewhere, unrelated, other_file):
    touch(name)
  assert atomic_files.remove_stale_temps(path) == [stale]
  assert sorted(os.listdir(str(tmp_path))) == sorted(
      os.path.basename(n) for n in (path, running, elsewhere, unrelated, other_file))


def test_write_splits_is_all_or_nothing(tmp_path):
  images, labels = np.zeros((2, 28, 28), np.uint8), np.array([1, 2])
  splits = [(str(tmp_path / 'train.tfrecords'), images, labels),
            (str(tmp_path / 'test.tfrecords'), [images[0], None], labels)]  # the second cannot be serialized
  with pytest.raises(AttributeError):
    records.write_splits(splits)
  assert os.listdir(str(tmp_path)) == []  # the complete first split was not renamed into place either


def test_write_splits_cleans_up_after_a_killed_writer(tmp_path, dead_pid):
  path = str(tmp_path / 'train.tfrecords')
  touch(temp_of(path, dead_pid))
  records.write_splits([(path, np.zeros((3, 28, 28), np.uint8), np.array([1, 2, 3]))])
  assert os.listdir(str(tmp_path)) == ['train.tfrecords']
  assert records.count_examples(path) == 3


def test_write_verified_cleans_up_after_a_killed_writer(tmp_path, dead_pid):
  path = str(tmp_path / 'train-labels-idx1-ubyte.gz')
  touch(temp_of(path, dead_pid))
  data = idx.to_bytes(np.arange(10, dtype=np.uint8))
  download.write_verified(path, data, hashlib.sha256(data).hexdigest())
  assert os.listdir(str(tmp_path)) == ['train-labels-idx1-ubyte.gz']
  assert gzip.decompress((tmp_path / 'train-labels-idx1-ubyte.gz').read_bytes()) == data


def test_write_text_creates_the_directory_and_leaves_only_the_final_file(tmp_path):
  path = str(tmp_path / 'new' / 'report.json')
  atomic_files.write_text(path, '{"steps": 1}')
  atomic_files.write_text(path, '{"steps": 2}')  # replaces it
  assert os.listdir(str(tmp_path / 'new')) == ['report.json']
  with open(path) as f:
    assert f.read() == '{"steps": 2}'
