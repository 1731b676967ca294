"""Data preparation: IDX files (fetched MNIST or your own) -> the standard TFRecord layout."""
import os

from absl import logging

from estimator_tpu import mnist_source
from estimator_tpu import records

IDX_SUBDIR = 'idx'


def prepare_data(data_dir, source_dir=None, download_timeout=10.0, validation_size=records.VALIDATION_SIZE):
  """Writes train/validation/test TFRecords into data_dir.

  With `source_dir`, converts the four IDX files found there (any 28x28 uint8 digit dataset). Without it, fetches
  MNIST into `<data_dir>/idx` (checksums verified) and converts that.
  """
  if source_dir is None:
    source_dir = os.path.join(data_dir, IDX_SUBDIR)
    logging.info('Fetching MNIST into %s', source_dir)
    mnist_source.fetch_mnist(source_dir, timeout=download_timeout)
  logging.info('Converting IDX files in %s to TFRecords in %s', source_dir, data_dir)
  records.convert_idx_dir(source_dir, data_dir, validation_size)


def ensure_data(data_dir, source_dir=None, download_timeout=10.0, validation_size=records.VALIDATION_SIZE):
  """Prepares data_dir first if it does not hold all three splits yet; returns True if it did."""
  if records.has_all_splits(data_dir):
    return False
  logging.info('No MNIST TFRecords in %s yet: preparing them now.', data_dir)
  prepare_data(data_dir, source_dir, download_timeout, validation_size)
  return True
