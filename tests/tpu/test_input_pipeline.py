"""input_fn alone: static batch shapes, dtypes, values and the batch size taken from params."""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.data import records
from estimator_tpu.estimator import input_fn as estimator_input
from estimator_tpu.tpu import deployment
from estimator_tpu.tpu import input_fn as tpu_input


def first_batches(dataset_fn, count):
  """Shapes, dtypes and the first `count` batches of the dataset dataset_fn() builds."""
  with tf.Graph().as_default():
    dataset = dataset_fn()
    features, labels = tf.data.make_one_shot_iterator(dataset).get_next()
    shapes = (features[model.IMAGE_KEY].shape.as_list(), labels.shape.as_list())
    dtypes = (features[model.IMAGE_KEY].dtype, labels.dtype)
    batches = []
    with tf.Session() as sess:
      try:
        for _ in range(count):
          batches.append(sess.run((features, labels)))
      except tf.errors.OutOfRangeError:
        pass
  return shapes, dtypes, batches


@pytest.mark.parametrize('batch_size', [7, 32])
def test_batches_have_static_shape_from_params(data_dir, batch_size):
  shapes, dtypes, _ = first_batches(
      lambda: tpu_input.train_input_fn_builder(data_dir)({'batch_size': batch_size}), 0)
  assert shapes == ([batch_size, 784], [batch_size])
  assert dtypes == (tf.float32, tf.int32)


def test_estimator_eval_input_reads_in_order_and_keeps_the_partial_batch(data_dir):
  images, labels = records.read_split(records.split_path(data_dir, 'test'))  # 110 examples
  _, _, batches = first_batches(lambda: estimator_input.eval_input_fn_builder(data_dir, 'test', 25)(), 100)
  assert len(batches) == -(-110 // 25)
  assert [batch[1].shape for batch in batches] == [(25,)] * 4 + [(10,)]
  got_images = np.concatenate([features[model.IMAGE_KEY] for features, _ in batches])
  got_labels = np.concatenate([label for _, label in batches])
  np.testing.assert_array_equal(got_images, images.reshape(110, 784).astype(np.float32))
  np.testing.assert_array_equal(got_labels, labels)


def test_training_input_repeats_and_shuffles(data_dir):
  _, _, batches = first_batches(lambda: tpu_input.train_input_fn_builder(data_dir)({'batch_size': 100}),
                                6)  # 250 train examples -> >2 epochs
  assert len(batches) == 6
  first_epoch_labels = np.concatenate([label for _, label in batches[:2]])
  _, ordered = records.read_split(records.split_path(data_dir, 'train'))
  assert not np.array_equal(first_epoch_labels, ordered[:200])


def read_all(input_fn, batch_size):
  """Every batch of input_fn({'batch_size': batch_size}) until the dataset ends, plus its static shapes."""
  with tf.Graph().as_default():
    dataset = input_fn({'batch_size': batch_size})
    element = tf.data.make_one_shot_iterator(dataset).get_next()
    shapes = tf.nest.map_structure(lambda tensor: tensor.shape.as_list(), element)
    batches = []
    with tf.Session() as sess:
      while True:
        try:
          batches.append(sess.run(element))
        except tf.errors.OutOfRangeError:
          return shapes, batches


@pytest.mark.parametrize('num_examples, global_batch, expected', [
    (110, 50, (3, 40)), (100, 50, (2, 0)), (1, 50, (1, 49)), (10000, 1024, (10, 240))])
def test_eval_padding_fills_the_last_batch(num_examples, global_batch, expected):
  assert deployment.eval_padding(num_examples, global_batch) == expected


# (global batch, batch per input_fn call): on CPU params['batch_size'] is the global batch; on a TPU with 4 cores
# it is a quarter of it, and the padding must still fill whole global batches.
@pytest.mark.parametrize('global_batch, batch_size', [(25, 25), (40, 10)])
def test_eval_input_has_every_example_once_then_weight_0_padding(data_dir, global_batch, batch_size):
  images, labels = records.read_split(records.split_path(data_dir, 'test'))  # 110 examples
  steps = tpu_input.eval_steps(data_dir, 'test', global_batch)
  input_fn = tpu_input.eval_input_fn_builder(data_dir, 'test', global_batch, steps)
  padding = steps * global_batch - len(labels)
  shapes, batches = read_all(input_fn, batch_size)
  assert shapes == ({model.IMAGE_KEY: [batch_size, 784], model.WEIGHT_KEY: [batch_size]},
                    [batch_size])
  assert len(batches) * batch_size == steps * global_batch == len(labels) + padding
  weights = np.concatenate([features[model.WEIGHT_KEY] for features, _ in batches])
  got_images = np.concatenate([features[model.IMAGE_KEY] for features, _ in batches])
  got_labels = np.concatenate([label for _, label in batches])
  np.testing.assert_array_equal(weights, [1.0] * len(labels) + [0.0] * padding)
  np.testing.assert_array_equal(got_images[:len(labels)], images.reshape(-1, 784).astype(np.float32))
  np.testing.assert_array_equal(got_labels[:len(labels)], labels)


def test_eval_input_evaluates_a_prefix_of_the_split(data_dir):
  images, _ = records.read_split(records.split_path(data_dir, 'test'))
  steps = tpu_input.eval_steps(data_dir, 'test', 25, 2)
  input_fn = tpu_input.eval_input_fn_builder(data_dir, 'test', 25, steps)
  _, batches = read_all(input_fn, 25)
  weights = np.concatenate([features[model.WEIGHT_KEY] for features, _ in batches])
  got_images = np.concatenate([features[model.IMAGE_KEY] for features, _ in batches])
  assert steps == 2 and weights.tolist() == [1.0] * 50
  np.testing.assert_array_equal(got_images, images[:50].reshape(50, 784).astype(np.float32))


@pytest.mark.parametrize('num_examples, batch_size, expected', [(7, 5, 7), (-1, 50, 110), (110, 25, 110)])
def test_predict_input_yields_exactly_the_requested_examples(data_dir, num_examples, batch_size, expected):
  images, _ = records.read_split(records.split_path(data_dir, 'test'))
  shapes, batches = read_all(tpu_input.predict_input_fn_builder(data_dir, 'test', num_examples, batch_size),
                             batch_size)
  assert shapes == {model.IMAGE_KEY: [None, 784]}  # the short last batch is TPUEstimator's to pad
  assert [len(batch[model.IMAGE_KEY]) for batch in batches[:-1]] == [batch_size] * (len(batches) - 1)
  got_images = np.concatenate([batch[model.IMAGE_KEY] for batch in batches])
  np.testing.assert_array_equal(got_images, images[:expected].reshape(-1, 784).astype(np.float32))


def autotune_setting(dataset):
  """tf.data's autotuning switch as the dataset's options hold it: TF 2.x's autotune.enabled, TF 1.15's
  experimental_optimization.autotune (None there means TensorFlow's default, on)."""
  options = dataset.options()
  return options.autotune.enabled if hasattr(options, 'autotune') else options.experimental_optimization.autotune


def test_tf2_datasets_run_without_the_autotuning_thread_and_tf1_keeps_its_defaults(data_dir):
  """On TF 2.x every dataset read from a split has autotuning off (an iterator's end waited up to a minute for
  its thread, data/records.py); on TF 1.15 the options are untouched, so a --seed trains the same model as before."""
  expected = False if tf.__version__.startswith('2.') else None
  with tf.Graph().as_default():
    datasets = {
        'estimator train': estimator_input.train_input_fn_builder(data_dir, 8)(),
        'estimator eval': estimator_input.eval_input_fn_builder(data_dir, 'test', 8)(),
        'estimator predict': estimator_input.predict_input_fn_builder(data_dir, 'test', 7, 5)(),
        'tpu train': tpu_input.train_input_fn_builder(data_dir)({'batch_size': 8}),
        'tpu eval': tpu_input.eval_input_fn_builder(data_dir, 'test', 25, steps=5)({'batch_size': 25}),
        'tpu predict': tpu_input.predict_input_fn_builder(data_dir, 'test', 7, 5)({'batch_size': 5}),
    }
    assert {name: autotune_setting(dataset) for name, dataset in datasets.items()} == {
        name: expected for name in datasets}
