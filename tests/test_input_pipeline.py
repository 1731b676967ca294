"""input_fn alone: static batch shapes, dtypes, values and the batch size taken from params."""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu import input_pipeline
from estimator_tpu import model_fn as model_fn_lib
from estimator_tpu import records


def first_batches(data_dir, split, is_training, batch_size, count):
  with tf.Graph().as_default():
    dataset = input_pipeline.input_fn_builder(data_dir, split, is_training)({'batch_size': batch_size})
    features, labels = tf.data.make_one_shot_iterator(dataset).get_next()
    shapes = (features[model_fn_lib.IMAGE_KEY].shape.as_list(), labels.shape.as_list())
    dtypes = (features[model_fn_lib.IMAGE_KEY].dtype, labels.dtype)
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
  shapes, dtypes, _ = first_batches(data_dir, 'train', True, batch_size, 0)
  assert shapes == ([batch_size, 784], [batch_size])
  assert dtypes == (tf.float32, tf.int32)


def test_eval_input_reads_in_order_and_drops_the_partial_batch(data_dir):
  images, labels = records.read_split(records.split_path(data_dir, 'test'))  # 110 examples
  _, _, batches = first_batches(data_dir, 'test', False, 25, 100)
  assert len(batches) == 110 // 25
  assert all(batch[1].shape == (25,) for batch in batches)
  got_images = np.concatenate([features[model_fn_lib.IMAGE_KEY] for features, _ in batches])
  got_labels = np.concatenate([label for _, label in batches])
  np.testing.assert_array_equal(got_images, images[:100].reshape(100, 784).astype(np.float32))
  np.testing.assert_array_equal(got_labels, labels[:100])


def test_training_input_repeats_and_shuffles(data_dir):
  _, _, batches = first_batches(data_dir, 'train', True, 100, 6)  # 250 train examples -> >2 epochs
  assert len(batches) == 6
  first_epoch_labels = np.concatenate([label for _, label in batches[:2]])
  _, ordered = records.read_split(records.split_path(data_dir, 'train'))
  assert not np.array_equal(first_epoch_labels, ordered[:200])
