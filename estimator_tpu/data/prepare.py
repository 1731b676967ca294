"""Data preparation: IDX files (fetched MNIST or your own) -> the standard TFRecord layout."""
import os

import tensorflow.compat.v1 as tf
from absl import logging

from estimator_tpu.data import download
from estimator_tpu.data import records
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime.errors import UserError

IDX_SUBDIR = 'idx'


def prepare_data(data_dir, source_dir=None, download_timeout=10.0, validation_size=records.VALIDATION_SIZE):
  """Writes train/validation/test TFRecords into data_dir.

  With `source_dir`, converts the four IDX files found there (any 28x28 uint8 digit dataset). Without it, fetches
  MNIST into `<data_dir>/idx` (checksums verified) and converts that.
  """
  # Checked first: a download that cannot be stored would be wasted.
  preflight.require_writable_dir(data_dir, 'data_dir')
  if source_dir is None:
    source_dir = os.path.join(data_dir, IDX_SUBDIR)
    logging.info('Fetching MNIST into %s', source_dir)
    download.fetch_mnist(source_dir, timeout=download_timeout)
  logging.info('Converting IDX files in %s to TFRecords in %s', source_dir, data_dir)
  records.convert_idx_dir(source_dir, data_dir, validation_size)


def ensure_data(data_dir, source_dir=None, download_timeout=10.0, validation_size=records.VALIDATION_SIZE):
  """Makes sure data_dir holds all three splits, intact; returns True if it had to prepare them.

  No splits yet: prepares them. Some but not all: refuses (unless `source_dir` says where to rebuild them from),
  because fetching MNIST would overwrite files that may be the user's own dataset. All there: reads each once to
  check every record's CRC (55k MNIST records: ~0.1 s), so damaged data stops the run before training starts.
  """
  preflight.require_readable_dir(data_dir, 'data_dir')  # an unreadable folder is not an empty one
  present = [split for split in records.SPLITS if tf.io.gfile.exists(records.split_path(data_dir, split))]
  if not present or (source_dir is not None and len(present) < len(records.SPLITS)):
    logging.info('No complete set of TFRecords in %s yet: preparing them now.', data_dir)
    prepare_data(data_dir, source_dir, download_timeout, validation_size)
    return True
  missing = [split for split in records.SPLITS if split not in present]
  if missing:
    raise UserError('%s holds %s but not %s.' % (data_dir, _split_files(present), _split_files(missing)),
                    'restore the missing file(s), or write all three again with `python -m tools.prepare_data '
                    '--data_dir=%s` (add --source_dir=DIR for your own IDX files).' % data_dir)
  for split in records.SPLITS:
    if records.count_examples(records.split_path(data_dir, split)) == 0:
      raise UserError('%s holds no examples.' % records.split_path(data_dir, split),
                      'prepare the data again with `python -m tools.prepare_data --data_dir=%s`.' % data_dir)
  return False


def _split_files(splits):
  return ', '.join('%s.tfrecords' % split for split in splits)
