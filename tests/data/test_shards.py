"""Splits too big for one file are written as shards (records.write_dataset) and every reader reads all of them, in
order: the input_fns of both Estimator routes and of the Keras route, the counts and checks, require_split and the
readiness check's count. A small shard-size limit makes a tiny folder source need several files."""
import os
import sys

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.data import prepare
from estimator_tpu.data import records
from estimator_tpu.data import sources
from estimator_tpu.data import spec as data_spec
from estimator_tpu.data import synthetic
from estimator_tpu.estimator import input_fn as estimator_input_fn
from estimator_tpu.porting.readiness import route_check
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import input_fn as tpu_input_fn
from support.tpu_topology import image_keys
from support.tpu_topology import read_batches

SIZE = (10, 12)  # 360 bytes an image, ~424 an Example
SHARD_BYTES = 2000  # four Examples a file
IS_TF2 = not tf.__version__.startswith('1.')


@pytest.fixture
def sharded(tmp_path):
  """(data_dir, the Dataset the folder source holds) prepared with shards: train 22 examples in 6 files, validation
  2 in 1, test 6 in 2."""
  source = synthetic.write_class_folders(str(tmp_path / 'photos'), per_class=10, size=(20, 24))
  data_dir = str(tmp_path / 'data')
  prepare.prepare_data(data_dir, source, validation_size=2, image_size=SIZE, shard_bytes=SHARD_BYTES)
  return data_dir, sources.read_folder(source, SIZE)


def expected(dataset, split):
  """(images, labels) the split must hold, in order."""
  return {'train': (dataset.train_images[:-2], dataset.train_labels[:-2]),
          'validation': (dataset.train_images[-2:], dataset.train_labels[-2:]),
          'test': (dataset.test_images, dataset.test_labels)}[split]


def test_dataset_json_counts_the_shards_and_only_they_are_written(sharded):
  data_dir, _ = sharded
  spec = data_spec.read(data_dir)
  assert spec.shards == {'train': 6, 'test': 2}
  assert spec.counts == {'train': 22, 'validation': 2, 'test': 6}
  assert sorted(name for name in os.listdir(data_dir) if name.endswith('.tfrecords')) == sorted(
      ['train-%05d-of-00006.tfrecords' % i for i in range(6)] + ['test-00000-of-00002.tfrecords',
                                                                'test-00001-of-00002.tfrecords',
                                                                'validation.tfrecords'])
  assert all(os.path.getsize(os.path.join(data_dir, name)) <= SHARD_BYTES for name in os.listdir(data_dir))


@pytest.mark.parametrize('split', records.SPLITS)
def test_counts_checks_and_read_split_see_every_example_once_in_order(sharded, split):
  data_dir, dataset = sharded
  path = records.require_split(data_dir, split)
  assert records.split_exists(path)
  records.check_layout(path)
  assert records.count_examples(path) == data_spec.read(data_dir).counts[split]
  assert route_check.count_if_present(data_dir, split) == data_spec.read(data_dir).counts[split]
  images, labels = records.read_split(path)
  np.testing.assert_array_equal(images, expected(dataset, split)[0])
  np.testing.assert_array_equal(labels, expected(dataset, split)[1])
  assert prepare.ensure_data(data_dir) is False  # all there and intact: nothing prepared again


@pytest.mark.parametrize('split', ['train', 'test'])
def test_evaluation_input_fns_read_every_shard_in_order(sharded, split):
  data_dir, dataset = sharded
  images, labels = expected(dataset, split)
  batches = read_batches(lambda params: estimator_input_fn.eval_input_fn_builder(data_dir, split, 4)(), {})
  assert image_keys(np.concatenate([f[model.IMAGE_KEY] for f, _ in batches])) == image_keys(images)
  np.testing.assert_array_equal(np.concatenate([l for _, l in batches]), labels)
  steps = tpu_input_fn.eval_steps(data_dir, split, 4)
  batches = read_batches(tpu_input_fn.eval_input_fn_builder(data_dir, split, 4, steps), {'batch_size': 4})
  weights = np.concatenate([f[model.WEIGHT_KEY] for f, _ in batches])
  real = weights > 0
  assert image_keys(np.concatenate([f[model.IMAGE_KEY] for f, _ in batches])[real]) == image_keys(images)
  np.testing.assert_array_equal(np.concatenate([l for _, l in batches])[real], labels)


def test_training_input_fns_see_every_example_of_every_shard_each_epoch(sharded):
  data_dir, dataset = sharded
  images = expected(dataset, 'train')[0]
  batch = read_batches(tpu_input_fn.train_input_fn_builder(data_dir), {'batch_size': 22}, max_batches=1)[0]
  assert sorted(image_keys(batch[0][model.IMAGE_KEY])) == sorted(image_keys(images))
  batch = read_batches(lambda params: estimator_input_fn.train_input_fn_builder(data_dir, 22)(), {},
                       max_batches=1)[0]
  assert sorted(image_keys(batch[0][model.IMAGE_KEY])) == sorted(image_keys(images))


@pytest.mark.skipif(not IS_TF2, reason='mnist_keras.py is the TF 2.x route; TF %s' % tf.__version__)
def test_keras_route_reads_every_shard(sharded):
  import mnist_keras  # pylint: disable=g-import-not-at-top  # TF 2 only
  data_dir, dataset = sharded
  images, labels = expected(dataset, 'test')
  eval_dataset, steps = mnist_keras.make_eval_dataset(data_dir, 'test', 4)
  rows = [(x, y, w) for x, y, w in eval_dataset.take(steps).as_numpy_iterator()]
  weights = np.concatenate([w for _, _, w in rows]) > 0
  assert image_keys(np.concatenate([x[model.IMAGE_KEY] for x, _, _ in rows])[weights]) == image_keys(images)
  np.testing.assert_array_equal(np.concatenate([y for _, y, _ in rows])[weights], labels)
  predict = mnist_keras.predict_images(records.split_path(data_dir, 'test'), 6)
  assert image_keys(predict) == image_keys(images)
  train = next(mnist_keras.make_dataset(data_dir, 22).as_numpy_iterator())
  assert sorted(image_keys(train[0][model.IMAGE_KEY])) == sorted(image_keys(expected(dataset, 'train')[0]))


def test_a_missing_shard_is_named(sharded):
  data_dir, _ = sharded
  os.remove(os.path.join(data_dir, 'train-00003-of-00006.tfrecords'))
  with pytest.raises(UserError, match='train-00003-of-00006.tfrecords is missing'):
    records.require_split(data_dir, 'train')
  assert route_check.count_if_present(data_dir, 'train') is None
  with pytest.raises(UserError, match='holds validation.tfrecords, test.tfrecords but not '
                                      'train-00003-of-00006.tfrecords'):
    prepare.ensure_data(data_dir)


def test_shards_left_of_every_split_are_not_prepared_over(sharded):
  """No split complete, but files of them there: the user's data, not an empty directory to fetch MNIST into."""
  data_dir, _ = sharded
  for name in ('train-00003-of-00006.tfrecords', 'test-00000-of-00002.tfrecords', 'validation.tfrecords'):
    os.remove(os.path.join(data_dir, name))
  with pytest.raises(UserError, match='holds part of the splits but not train-00003-of-00006.tfrecords, '
                                      'validation.tfrecords, test-00000-of-00002.tfrecords'):
    prepare.ensure_data(data_dir)
  assert data_spec.read(data_dir).name == 'photos'


def test_preparing_again_in_one_file_removes_the_shards(sharded, tmp_path):
  data_dir, dataset = sharded
  prepare.prepare_data(data_dir, str(tmp_path / 'photos'), validation_size=2, image_size=SIZE)
  assert data_spec.read(data_dir).shards == {}
  assert 'shards' not in open(data_spec.path_of(data_dir)).read()
  assert sorted(name for name in os.listdir(data_dir) if name.endswith('.tfrecords')) == [
      'test.tfrecords', 'train.tfrecords', 'validation.tfrecords']
  np.testing.assert_array_equal(records.read_split(records.split_path(data_dir, 'train'))[1],
                                expected(dataset, 'train')[1])


PREPARE_SHARDED = ('import sys; from estimator_tpu.data import prepare; '
                   'prepare.prepare_data(sys.argv[1], sys.argv[2], validation_size=2, image_size=(10, 12), '
                   'shard_bytes=%d)' % SHARD_BYTES)


def test_shards_on_gcs_prepared_and_read_by_the_readiness_check(gcs, tmp_path):
  """Prepared into a gs:// data_dir by TensorFlow's GCS client (temp names, renames, the glob of the old layout),
  then read by the readiness check, in processes of their own inside the sandbox."""
  source = synthetic.write_class_folders(str(tmp_path / 'photos'), per_class=10, size=(20, 24))
  result = gcs.run([sys.executable, '-c', PREPARE_SHARDED, gcs.url('data'), source])
  assert result.returncode == 0, result.stderr[-3000:]
  names = [name for name in gcs.object_names('data/') if name.endswith('.tfrecords')]
  assert names == sorted(['data/train-%05d-of-00006.tfrecords' % i for i in range(6)] + [
      'data/test-00000-of-00002.tfrecords', 'data/test-00001-of-00002.tfrecords', 'data/validation.tfrecords'])
  assert '"shards"' in gcs.read_object('data/dataset.json').decode()
  result = gcs.run([sys.executable, 'mnist_tpu.py', '--mode=check_tpu', '--num_shards=2', '--batch_size=8',
                    '--eval_batch_size=4', '--data_dir=%s' % gcs.url('data'), '--model_dir=%s' % gcs.url('model')],
                   timeout=600)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  assert 'from all 22 training examples' in result.stdout, result.stdout
  assert any(line.startswith('PASS eval_coverage (rule 9): test: 6 examples')
             for line in result.stdout.splitlines()), result.stdout


def test_a_bad_shard_count_in_dataset_json_is_one_line(sharded):
  data_dir, _ = sharded
  path = data_spec.path_of(data_dir)
  text = open(path).read().replace('"train": 6', '"train": 0')
  with open(path, 'w') as f:
    f.write(text)
  with pytest.raises(UserError, match='describes no usable dataset: train has 0 shard files'):
    records.require_split(data_dir, 'train')
