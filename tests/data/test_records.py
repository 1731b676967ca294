"""TFRecords in the standard layout: IDX -> TFRecord -> parsed back, byte for byte."""
import os

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu.data import records
from estimator_tpu.data import synthetic
from estimator_tpu.runtime.errors import UserError


@pytest.mark.parametrize('gzipped', [True, False])
def test_round_trip_in_standard_layout(tmp_path, gzipped):
  source = synthetic.write_idx_dir(str(tmp_path / 'idx'), train_count=80, test_count=15, gzipped=gzipped)
  data_dir = str(tmp_path / 'data')
  records.convert_idx_dir(str(tmp_path / 'idx'), data_dir, validation_size=20)
  assert sorted(os.listdir(data_dir)) == ['dataset.json', 'test.tfrecords', 'train.tfrecords', 'validation.tfrecords']
  expected = {
      'train': (source['train_images'][:60], source['train_labels'][:60]),
      'validation': (source['train_images'][60:], source['train_labels'][60:]),
      'test': (source['test_images'], source['test_labels']),
  }
  for split, (want_images, want_labels) in expected.items():
    got_images, got_labels = records.read_split(records.split_path(data_dir, split))
    np.testing.assert_array_equal(got_images, want_images)
    np.testing.assert_array_equal(got_labels, want_labels)
    assert records.count_examples(records.split_path(data_dir, split)) == len(want_labels)


def test_examples_carry_every_standard_feature(tmp_path):
  path = str(tmp_path / 'one.tfrecords')
  records.write_split(path, np.full((1, 28, 28), 7, np.uint8), np.array([3]))
  example = tf.train.Example.FromString(next(tf.io.tf_record_iterator(path)))
  feature = example.features.feature
  assert sorted(feature.keys()) == ['depth', 'height', 'image_raw', 'label', 'width']
  assert [feature[k].int64_list.value[0] for k in ('height', 'width', 'depth', 'label')] == [28, 28, 1, 3]
  assert feature['image_raw'].bytes_list.value[0] == b'\x07' * 784


def test_no_partial_file_when_writing_fails(tmp_path):
  path = str(tmp_path / 'train.tfrecords')
  bad_images = [np.zeros((28, 28), np.uint8), None]  # the second one cannot be serialized
  with pytest.raises(AttributeError):
    records.write_split(path, bad_images, np.array([1, 2]))
  assert os.listdir(str(tmp_path)) == []


def test_mismatched_counts_are_refused(tmp_path):
  synthetic.write_idx_dir(str(tmp_path / 'idx'), train_count=80, test_count=15)
  os.replace(str(tmp_path / 'idx' / 't10k-labels-idx1-ubyte.gz'), str(tmp_path / 'idx' / 'keep.gz'))
  synthetic.write_idx_dir(str(tmp_path / 'other'), train_count=80, test_count=16)
  os.replace(str(tmp_path / 'other' / 't10k-labels-idx1-ubyte.gz'), str(tmp_path / 'idx' / 't10k-labels-idx1-ubyte.gz'))
  with pytest.raises(UserError, match='test split has 15 images but 16 labels'):
    records.convert_idx_dir(str(tmp_path / 'idx'), str(tmp_path / 'data'), validation_size=20)
  assert not os.path.exists(str(tmp_path / 'data'))


def test_missing_idx_file_is_named(tmp_path):
  synthetic.write_idx_dir(str(tmp_path / 'idx'), train_count=80, test_count=15)
  os.remove(str(tmp_path / 'idx' / 'train-labels-idx1-ubyte.gz'))
  with pytest.raises(UserError, match='train-labels-idx1-ubyte'):
    records.convert_idx_dir(str(tmp_path / 'idx'), str(tmp_path / 'data'))


def test_missing_split_says_how_to_prepare(tmp_path):
  with pytest.raises(UserError, match='tools.prepare_data'):
    records.require_split(str(tmp_path), 'train')
