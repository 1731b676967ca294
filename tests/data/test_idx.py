"""IDX parsing: the good path (gzipped or not) and every kind of bad header or size."""
import gzip
import struct

import numpy as np
import pytest

from estimator_tpu.data import idx
from estimator_tpu.runtime.errors import UserError


def write(tmp_path, name, data):
  path = str(tmp_path / name)
  with open(path, 'wb') as f:
    f.write(data)
  return path


def images(count=3):
  return np.arange(count * 784, dtype=np.int64).reshape(count, 28, 28).astype(np.uint8)


@pytest.mark.parametrize('gzipped', [False, True])
def test_round_trip(tmp_path, gzipped):
  data = idx.to_bytes(images())
  path = write(tmp_path, 'x-idx3-ubyte' + ('.gz' if gzipped else ''), gzip.compress(data) if gzipped else data)
  np.testing.assert_array_equal(idx.read_images(path), images())


def test_header_layout_is_the_canonical_one():
  labels = np.array([5, 0, 4], np.uint8)
  assert idx.to_bytes(labels) == b'\x00\x00\x08\x01' + struct.pack('>I', 3) + b'\x05\x00\x04'


def test_wrong_magic_names_the_swap(tmp_path):
  path = write(tmp_path, 'labels', idx.to_bytes(np.array([1, 2], np.uint8)))
  with pytest.raises(UserError, match='magic number 0x00000801, expected 0x00000803'):
    idx.read_images(path)


def test_truncated_data(tmp_path):
  path = write(tmp_path, 'imgs', idx.to_bytes(images())[:-10])
  with pytest.raises(UserError, match='truncated or padded'):
    idx.read_images(path)


def test_truncated_header(tmp_path):
  path = write(tmp_path, 'imgs', idx.to_bytes(images())[:9])
  with pytest.raises(UserError, match='truncated inside its header'):
    idx.read_images(path)


def test_too_short(tmp_path):
  with pytest.raises(UserError, match='too short'):
    idx.read_labels(write(tmp_path, 'l', b'\x00\x00'))


def test_images_of_any_size_read_as_they_are(tmp_path):
  wide = np.arange(2 * 12 * 20, dtype=np.int64).reshape(2, 12, 20).astype(np.uint8)
  np.testing.assert_array_equal(idx.read_images(write(tmp_path, 'imgs', idx.to_bytes(wide))), wide)


def test_images_without_pixels(tmp_path):
  path = write(tmp_path, 'imgs', idx.to_bytes(np.zeros((2, 0, 32), np.uint8)))
  with pytest.raises(UserError, match='0x32 pixels'):
    idx.read_images(path)


def test_labels_up_to_the_class_count(tmp_path):
  path = write(tmp_path, 'labels', idx.to_bytes(np.array([1, 12, 3], np.uint8)))
  np.testing.assert_array_equal(idx.read_labels(path, num_classes=13), [1, 12, 3])
  with pytest.raises(UserError, match='labels must be 0-11.*--num_classes'):
    idx.read_labels(path, num_classes=12)


def test_label_out_of_range(tmp_path):
  path = write(tmp_path, 'labels', idx.to_bytes(np.array([1, 12, 3], np.uint8)))
  with pytest.raises(UserError, match='label 12 at index 1'):
    idx.read_labels(path)


def test_gz_name_without_gzip_content(tmp_path):
  path = write(tmp_path, 'labels.gz', idx.to_bytes(np.array([1], np.uint8)))
  with pytest.raises(UserError, match='not gzip'):
    idx.read_labels(path)


def test_damaged_gzip(tmp_path):
  data = gzip.compress(idx.to_bytes(images()))
  path = write(tmp_path, 'imgs.gz', data[:len(data) // 2])
  with pytest.raises(UserError, match='damaged gzip'):
    idx.read_images(path)
