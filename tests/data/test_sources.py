"""Every source of tools.prepare_data, on tiny data of its layout: what lands in the TFRecords and dataset.json, and
one clear `error: ... Fix: ...` line for a bad or partial source (data/sources.py, data/spec.py)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from estimator_tpu.data import prepare
from estimator_tpu.data import records
from estimator_tpu.data import sources
from estimator_tpu.data import spec as data_spec
from estimator_tpu.data import synthetic
from estimator_tpu.runtime.errors import UserError
from support.paths import REPO_ROOT


def prepared(data_dir):
  """(spec, {split: (images, labels)}) of a prepared directory, read back from its files."""
  spec = data_spec.read(data_dir)
  return spec, {split: records.read_split(records.split_path(data_dir, split)) for split in records.SPLITS}


def test_directory_without_dataset_json_reads_as_mnist(data_dir):
  os.remove(data_spec.path_of(data_dir))
  assert data_spec.read(data_dir) == data_spec.MNIST
  assert records.read_split(records.split_path(data_dir, 'test'))[0].shape[1:] == (28, 28)


def test_idx_prepared_as_mnist_writes_mnist_shape_and_counts(data_dir):
  spec = data_spec.read(data_dir)
  assert spec.image_shape == [28, 28, 1] and spec.class_names == data_spec.MNIST.class_names
  assert spec.counts == {'train': 250, 'validation': 50, 'test': 110}


def test_idx_of_another_size(tmp_path):
  source = tmp_path / 'idx'
  source.mkdir()
  train, test = synthetic.make_images(40, 0, 12, 20, 1), synthetic.make_images(10, 1, 12, 20, 1)
  for key, array in (('train_images', train[0][..., 0]), ('train_labels', train[1]),
                     ('test_images', test[0][..., 0]), ('test_labels', test[1])):
    (source / records.IDX_FILES[key]).write_bytes(synthetic.idx.to_bytes(array))
  prepare.prepare_data(str(tmp_path / 'data'), str(source), validation_size=5)
  spec, splits = prepared(str(tmp_path / 'data'))
  assert spec.image_shape == [12, 20, 1] and spec.counts == {'train': 35, 'validation': 5, 'test': 10}
  np.testing.assert_array_equal(splits['test'][0], test[0][..., 0])


def test_cifar10_batches_become_channels_last_images(tmp_path):
  source = synthetic.write_cifar10_dir(str(tmp_path / 'cifar'), per_batch=8, test_count=6)
  prepare.prepare_data(str(tmp_path / 'data'), source, validation_size=4)
  spec, splits = prepared(str(tmp_path / 'data'))
  assert spec.image_shape == [32, 32, 3] and spec.class_names == sources.CIFAR10_CLASSES
  assert spec.counts == {'train': 36, 'validation': 4, 'test': 6}
  images, labels = synthetic.make_images(6, 5)  # test_batch.bin is the sixth file: seed 0 + 5
  np.testing.assert_array_equal(splits['test'][0], images)
  np.testing.assert_array_equal(splits['test'][1], labels)


def test_cifar10_partial_batches_name_what_is_missing(tmp_path):
  source = synthetic.write_cifar10_dir(str(tmp_path / 'cifar'), per_batch=2, test_count=2)
  os.remove(os.path.join(source, 'data_batch_4.bin'))
  with pytest.raises(UserError, match='holds part of CIFAR-10: data_batch_4.bin missing'):
    sources.read_cifar10(source)


def test_cifar10_truncated_batch(tmp_path):
  source = synthetic.write_cifar10_dir(str(tmp_path / 'cifar'), per_batch=2, test_count=2)
  with open(os.path.join(source, 'test_batch.bin'), 'r+b') as f:
    f.truncate(3073 + 100)
  with pytest.raises(UserError, match='not a whole number of 3073-byte CIFAR-10 records'):
    sources.read_cifar10(source)


def test_cifar10_download_is_checked_against_its_md5(tmp_path):
  archive = tmp_path / 'fake.tar.gz'
  archive.write_bytes(b'not the archive')
  with pytest.raises(UserError, match='has md5 .* expected %s' % sources.CIFAR10_MD5):
    sources.fetch_cifar10(str(tmp_path / 'dest'), url=archive.as_uri())
  assert not os.path.exists(str(tmp_path / 'dest'))


def test_cifar10_unreachable_is_one_line(tmp_path):
  with pytest.raises(UserError, match='could not be downloaded') as error:
    sources.fetch_cifar10(str(tmp_path / 'dest'), url=(tmp_path / 'absent.tar.gz').as_uri())
  assert 'cifar-10-batches-bin' in error.value.fix


def test_digits_hold_out_a_third_the_same_way_every_time(tmp_path):
  pytest.importorskip('sklearn', reason='scikit-learn is the digits extra (pip install -e .[digits])')
  first, second = sources.read_digits(), sources.read_digits()
  assert (len(first.train_labels), len(first.test_labels)) == (1198, 599)
  np.testing.assert_array_equal(first.test_images, second.test_images)
  assert first.train_images.shape[1:] == (8, 8) and first.train_images.max() == 255
  prepare.prepare_data(str(tmp_path / 'data'), source=sources.DIGITS)
  spec, splits = prepared(str(tmp_path / 'data'))
  assert spec.image_shape == [8, 8, 1] and spec.counts == {'train': 1079, 'validation': 119, 'test': 599}
  np.testing.assert_array_equal(splits['test'][1], first.test_labels)


@pytest.mark.parametrize('extension', ['.png', '.jpg'])
def test_class_folders_decoded_and_resized(tmp_path, extension):
  source = synthetic.write_class_folders(str(tmp_path / 'photos'), per_class=10, size=(20, 24),
                                         extension=extension)
  prepare.prepare_data(str(tmp_path / 'data'), source, validation_size=2, image_size=(10, 12))
  spec, splits = prepared(str(tmp_path / 'data'))
  assert spec.class_names == ('cats', 'dogs', 'fish') and spec.image_shape == [10, 12, 3]
  assert spec.counts == {'train': 22, 'validation': 2, 'test': 6}
  images, labels = splits['train']
  # The lit cell of each class survives decoding and resizing: its mean is far above the noise elsewhere.
  for image, label in zip(images, labels):
    row, col = divmod(int(label), 4)
    assert image[row * 2:row * 2 + 2, col * 3:col * 3 + 3].mean() > 150


def test_class_folders_with_train_and_test(tmp_path):
  synthetic.write_class_folders(str(tmp_path / 'photos' / 'train'), per_class=4)
  synthetic.write_class_folders(str(tmp_path / 'photos' / 'test'), per_class=2)
  dataset = sources.read_folder(str(tmp_path / 'photos'))
  assert (len(dataset.train_labels), len(dataset.test_labels)) == (12, 6)
  assert dataset.train_images.shape[1:] == (20, 24, 3)


def test_class_folder_without_images(tmp_path):
  source = synthetic.write_class_folders(str(tmp_path / 'photos'), per_class=2)
  os.makedirs(os.path.join(source, 'zebras'))
  with pytest.raises(UserError, match='zebras holds no PNG or JPEG images'):
    sources.read_folder(source)


def test_undecodable_image_is_named(tmp_path):
  source = synthetic.write_class_folders(str(tmp_path / 'photos'), per_class=2)
  with open(os.path.join(source, 'dogs', 'broken.png'), 'wb') as f:
    f.write(b'not a png')
  with pytest.raises(UserError, match='broken.png is not an image TensorFlow can decode'):
    sources.read_folder(source)


@pytest.mark.parametrize('shape, label_column', [((28, 28), False), ((32, 32, 3), True)])
def test_npz_as_keras_caches_it(tmp_path, shape, label_column):
  path = str(tmp_path / 'cache.npz')
  arrays = synthetic.write_npz(path, train_count=30, test_count=10, shape=shape, label_column=label_column)
  prepare.prepare_data(str(tmp_path / 'data'), path, validation_size=5)
  spec, splits = prepared(str(tmp_path / 'data'))
  assert spec.image_shape == list(shape) + ([1] if len(shape) == 2 else [])
  np.testing.assert_array_equal(splits['test'][0], arrays['x_test'])
  np.testing.assert_array_equal(splits['test'][1], arrays['y_test'].reshape(-1))


def test_npz_without_its_arrays(tmp_path):
  path = str(tmp_path / 'other.npz')
  np.savez(path, images=np.zeros((2, 4, 4), np.uint8))
  with pytest.raises(UserError, match='has no x_train, y_train, x_test, y_test .it holds: images'):
    sources.read_npz(path)


def test_npz_of_float_images(tmp_path):
  path = str(tmp_path / 'float.npz')
  np.savez(path, x_train=np.zeros((2, 4, 4)), y_train=np.zeros(2, int), x_test=np.zeros((2, 4, 4)),
           y_test=np.zeros(2, int))
  with pytest.raises(UserError, match='x_train is float64 .* images must be integers 0-255'):
    sources.read_npz(path)


def test_damaged_dataset_json_is_one_line(data_dir):
  with open(data_spec.path_of(data_dir), 'w') as f:
    json.dump({'name': 'x', 'height': 0, 'width': 28, 'channels': 1, 'class_names': ['a']}, f)
  with pytest.raises(UserError, match='describes no usable dataset: height 0 is not 1-4096; 1 class name'):
    data_spec.read(data_dir)


def test_records_of_another_shape_than_dataset_json_says(data_dir):
  spec = data_spec.read(data_dir)
  data_spec.write(data_dir, spec._replace(height=14))
  records._COUNTED.clear()
  with pytest.raises(UserError, match='is not in the layout of dataset.json: .*784 bytes .*not 392'):
    records.count_examples(records.split_path(data_dir, 'test'))


def test_prepare_data_tool_ends_a_partial_source_in_one_line(tmp_path):
  source = synthetic.write_cifar10_dir(str(tmp_path / 'cifar'), per_batch=2, test_count=2)
  os.remove(os.path.join(source, 'test_batch.bin'))
  result = subprocess.run([sys.executable, '-m', 'tools.prepare_data', '--data_dir=%s' % (tmp_path / 'data'),
                           '--source=cifar10', '--source_dir=%s' % source], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
  assert result.returncode == 1
  errors = [line for line in result.stdout.splitlines() if line.startswith('error: ')]
  assert errors == ['error: %s holds part of CIFAR-10: test_batch.bin missing. Fix: put all six batches there '
                    '(%s), as cifar-10-binary.tar.gz unpacks them.'
                    % (source, ', '.join(sources.CIFAR10_TRAIN + (sources.CIFAR10_TEST,)))]
  assert 'Traceback' not in result.stdout
  assert not os.path.exists(str(tmp_path / 'data' / 'train.tfrecords'))


def test_auto_tells_the_source_from_what_source_dir_holds(tmp_path, idx_dir):
  synthetic.write_cifar10_dir(str(tmp_path / 'cifar' / sources.CIFAR10_SUBDIR), per_batch=1, test_count=1)
  synthetic.write_class_folders(str(tmp_path / 'photos'), per_class=1)
  assert sources.detect(None) == sources.MNIST
  assert sources.detect(idx_dir) == sources.IDX
  assert sources.detect(str(tmp_path / 'cifar')) == sources.CIFAR10  # the folder the archive unpacks to, or above
  assert sources.detect(str(tmp_path / 'photos')) == sources.FOLDER
  assert sources.detect(str(tmp_path / 'x.npz')) == sources.NPZ
  # Anything else keeps --source_dir's old meaning, so its error names the IDX files that are missing.
  assert sources.detect(str(tmp_path / 'nowhere')) == sources.IDX
