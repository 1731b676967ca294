"""Data preparation: fetched MNIST, or any source of sources.py -> the standard TFRecord layout and its
dataset.json."""
import os

import tensorflow.compat.v1 as tf
from absl import logging

from estimator_tpu.data import download
from estimator_tpu.data import records
from estimator_tpu.data import sources
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime.errors import UserError

IDX_SUBDIR = 'idx'
CIFAR10_SUBDIR = 'cifar10'
# Sources that come with few training images (digits: 1,198) keep a tenth of them for validation when
# --validation_size (5,000 by default, MNIST's) would leave less than half to train on.
SMALL_VALIDATION_FRACTION = 10


def prepare_data(data_dir, source_dir=None, download_timeout=10.0, validation_size=records.VALIDATION_SIZE,
                 source=sources.AUTO, num_classes=None, image_size=None, channels=3,
                 shard_bytes=records.SHARD_BYTES):
  """Writes train/validation/test TFRecords and dataset.json into data_dir.

  `source` is one of sources.SOURCES; AUTO reads what `source_dir` holds (IDX files of any size, CIFAR-10 batches,
  class folders, an .npz file), and fetches MNIST into `<data_dir>/idx` (checksums verified) without one.
  `num_classes` (IDX, npz), `image_size` and `channels` (folders) describe sources that do not say. A split of
  more than `shard_bytes` is written as several files (records.write_dataset).
  """
  # Checked first: a download that cannot be stored would be wasted.
  preflight.require_writable_dir(data_dir, 'data_dir')
  if source == sources.AUTO:
    source = sources.detect(source_dir)
  if source in (sources.MNIST, sources.IDX):
    name = os.path.basename(os.path.normpath(source_dir)) if source_dir else 'mnist'
    if source_dir is None:
      source_dir = os.path.join(data_dir, IDX_SUBDIR)
      logging.info('Fetching MNIST into %s', source_dir)
      download.fetch_mnist(source_dir, timeout=download_timeout)
    logging.info('Converting IDX files in %s to TFRecords in %s', source_dir, data_dir)
    records.convert_idx_dir(source_dir, data_dir, validation_size, num_classes or records.NUM_CLASSES,
                            name, shard_bytes)
    return
  if source == sources.CIFAR10 and source_dir is None:
    source_dir = os.path.join(data_dir, CIFAR10_SUBDIR)
  dataset = sources.read(source, source_dir, num_classes, image_size, channels, download_timeout)
  train_count = len(dataset.train_labels)
  if 2 * validation_size > train_count:
    validation_size = max(1, train_count // SMALL_VALIDATION_FRACTION)
    logging.info('%d training examples: the last %d (a tenth) become the validation split.', train_count,
                 validation_size)
  logging.info('Converting %s (%s) to TFRecords in %s', source_dir or source, source, data_dir)
  records.write_dataset(data_dir, dataset.name, dataset.class_names, dataset.train_images, dataset.train_labels,
                        dataset.test_images, dataset.test_labels, validation_size, shard_bytes)


def ensure_data(data_dir, source_dir=None, download_timeout=10.0, validation_size=records.VALIDATION_SIZE):
  """Makes sure data_dir holds all three splits, intact; returns True if it had to prepare them.

  No splits yet: prepares them. Some but not all: refuses (unless `source_dir` says where to rebuild them from),
  because fetching MNIST would overwrite files that may be the user's own dataset. All there: reads each once to
  check every record's CRC (55k MNIST records: ~0.1 s), so damaged data stops the run before training starts.
  """
  preflight.require_readable_dir(data_dir, 'data_dir')  # an unreadable folder is not an empty one
  present = [split for split in records.SPLITS if records.split_exists(records.split_path(data_dir, split))]
  # A split with some of its shards is the user's data too: only a directory without any split file is prepared.
  started = [split for split in records.SPLITS
             if any(tf.io.gfile.exists(name) for name in records.split_files(records.split_path(data_dir, split)))]
  if not started or (source_dir is not None and len(present) < len(records.SPLITS)):
    logging.info('No complete set of TFRecords in %s yet: preparing them now.', data_dir)
    prepare_data(data_dir, source_dir, download_timeout, validation_size)
    return True
  missing = [split for split in records.SPLITS if split not in present]
  if missing:
    raise UserError('%s holds %s but not %s.' % (data_dir, _split_files(data_dir, present) or 'part of the splits',
                                                  _split_files(data_dir, missing, only_missing=True)),
                    'restore the missing file(s), or write all three again with `python -m tools.prepare_data '
                    '--data_dir=%s` (add --source_dir=DIR for your own IDX files).' % data_dir)
  for split in records.SPLITS:
    if records.count_examples(records.split_path(data_dir, split)) == 0:
      raise UserError('%s holds no examples.' % records.split_path(data_dir, split),
                      'prepare the data again with `python -m tools.prepare_data --data_dir=%s`.' % data_dir)
  return False


def _split_files(data_dir, splits, only_missing=False):
  """The splits' file names (`train.tfrecords`; of a sharded split, with only_missing, the shards not there)."""
  names = []
  for split in splits:
    files = records.split_files(records.split_path(data_dir, split))
    missing = [name for name in files if not tf.io.gfile.exists(name)] if only_missing else []
    names += [os.path.basename(name) for name in missing] or [split + records.TFRECORDS]
  return ', '.join(names)
