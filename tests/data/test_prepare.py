"""prepare.ensure_data: when mnist_tpu.py prepares data, when it refuses to, and how it checks what is there."""
import os

import pytest

from estimator_tpu.data import download
from estimator_tpu.data import prepare
from estimator_tpu.data import records
from estimator_tpu.runtime.errors import UserError

TINY_VALIDATION = 50


@pytest.fixture
def no_download(monkeypatch):
  def fail(*args, **kwargs):
    raise AssertionError('nothing may be downloaded here')

  monkeypatch.setattr(download, 'fetch_mnist', fail)


def listing(directory):
  return {name: os.path.getmtime(os.path.join(directory, name)) for name in os.listdir(directory)}


def test_prepares_an_empty_data_dir(tmp_path, idx_dir, no_download):
  data_dir = str(tmp_path / 'data')
  assert prepare.ensure_data(data_dir, idx_dir, validation_size=TINY_VALIDATION)
  assert sorted(os.listdir(data_dir)) == ['dataset.json', 'test.tfrecords', 'train.tfrecords', 'validation.tfrecords']


def test_complete_data_is_used_as_it_is(data_dir, idx_dir, no_download):
  before = listing(data_dir)
  assert not prepare.ensure_data(data_dir, idx_dir, validation_size=TINY_VALIDATION)
  assert listing(data_dir) == before


def test_some_splits_missing_is_refused_rather_than_overwritten(data_dir, no_download):
  os.remove(records.split_path(data_dir, 'validation'))
  before = listing(data_dir)
  with pytest.raises(UserError, match='holds train.tfrecords, test.tfrecords but not validation.tfrecords'):
    prepare.ensure_data(data_dir)
  assert listing(data_dir) == before


def test_some_splits_missing_with_a_source_dir_rebuilds_all(data_dir, idx_dir, no_download):
  os.remove(records.split_path(data_dir, 'train'))
  assert prepare.ensure_data(data_dir, idx_dir, validation_size=TINY_VALIDATION)
  assert records.count_examples(records.split_path(data_dir, 'train')) == 250


def test_a_damaged_split_stops_the_run(data_dir, no_download):
  path = records.split_path(data_dir, 'validation')
  with open(path, 'r+b') as f:
    f.seek(100)
    f.write(b'\x00\x01\x02')
  with pytest.raises(UserError, match='%s is damaged: record 0 fails its check' % path):
    prepare.ensure_data(data_dir)


def test_an_empty_split_stops_the_run(data_dir, no_download):
  open(records.split_path(data_dir, 'test'), 'wb').close()
  with pytest.raises(UserError, match='test.tfrecords holds no examples'):
    prepare.ensure_data(data_dir)
