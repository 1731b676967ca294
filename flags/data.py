"""Where the TFRecords live and where to prepare them from."""
import os

from absl import flags

DEFAULT_DATA_DIR = os.path.join(os.path.expanduser('~'), '.cache', 'estimator_tpu', 'mnist')


def define_data_flags(fv=flags.FLAGS):
  flags.DEFINE_string('data_dir', DEFAULT_DATA_DIR,
                      'Directory with train/validation/test.tfrecords (gs:// works). Prepared on first use.',
                      flag_values=fv)
  flags.DEFINE_string('source_dir', None, 'Prepare the TFRecords from the four IDX files in this directory '
                      '(gzipped or not) instead of fetching MNIST; also CIFAR-10 batches, class folders or an .npz '
                      'file (docs/DATA.md).', flag_values=fv)
  flags.DEFINE_float('download_timeout', 10.0, 'Seconds to wait for each MNIST mirror before trying the next.',
                     lower_bound=0.1, flag_values=fv)
  flags.DEFINE_integer('validation_size', 5000, 'Training images (taken from the end) that form the validation '
                       'split when the TFRecords are prepared.', lower_bound=1, flag_values=fv)
