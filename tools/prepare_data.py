"""Writes the TFRecord layout (train/validation/test.tfrecords, or shards of each, and dataset.json) into --data_dir.

  python -m tools.prepare_data --data_dir=DIR                   # fetch MNIST (checksums verified), then convert
  python -m tools.prepare_data --data_dir=DIR --source_dir=IDX  # your own four IDX files (any image size)
  python -m tools.prepare_data --data_dir=DIR --source=digits   # scikit-learn's 8x8 digits, a third held out
  python -m tools.prepare_data --data_dir=DIR --source=cifar10 [--source_dir=BATCHES]   # CIFAR-10's binary batches
  python -m tools.prepare_data --data_dir=DIR --source_dir=CLASS_FOLDERS --image_size=64 [--channels=3]
  python -m tools.prepare_data --data_dir=DIR --source_dir=FILE.npz  # x_train, y_train, x_test, y_test

A split bigger than --shard_mb (128 by default) is written as several files, <split>-00000-of-0000N.tfrecords ...

--source=auto (the default) tells the source from what --source_dir holds (estimator_tpu/data/sources.py).
mnist_tpu.py does this by itself on first use; run it directly to prepare a gs:// bucket for a Cloud TPU:
  python -m tools.prepare_data --data_dir=gs://BUCKET/mnist
"""
from absl import app
from absl import flags

from estimator_tpu.data import prepare
from estimator_tpu.data import records
from estimator_tpu.data import sources
from estimator_tpu.runtime import logs
from estimator_tpu.runtime import storage
from estimator_tpu.runtime import tf_errors
from estimator_tpu.runtime.errors import exit_on_user_error
from estimator_tpu.runtime.errors import preparation_interrupted
from flags import data as data_flags
from flags import help as program_help
from flags import logs as log_flags

FLAGS = flags.FLAGS


def define_source_flags(fv=FLAGS):
  """What only this tool asks: which source, and what a source does not say about itself."""
  flags.DEFINE_enum('source', sources.AUTO, sources.SOURCES, 'Where the images come from: auto (MNIST without '
                    '--source_dir, else what --source_dir holds), mnist, idx, cifar10, digits, folder or npz.',
                    flag_values=fv)
  flags.DEFINE_integer('num_classes', None, 'Classes of an IDX or npz source (default: 10 for IDX, the largest '
                       'label + 1 for npz).', lower_bound=2, flag_values=fv)
  flags.DEFINE_list('image_size', None, 'Folder source: HEIGHT[,WIDTH] every image is resized to (default: the '
                    'first image\'s size).', flag_values=fv)
  flags.DEFINE_integer('channels', 3, 'Folder source: 1 (grayscale) or 3 (RGB).', lower_bound=1, upper_bound=3,
                       flag_values=fv)
  flags.DEFINE_integer('shard_mb', records.SHARD_BYTES // (1024 * 1024), 'A split bigger than this many MB is '
                       'written as several files, <split>-00000-of-0000N.tfrecords (docs/DATA.md).', lower_bound=1,
                       flag_values=fv)


def image_size(values):
  """--image_size as (height, width); None when unset. A bad value is a UsageError (one line from absl)."""
  if not values:
    return None
  try:
    sides = [int(value) for value in values]
  except ValueError:
    sides = []
  if len(sides) not in (1, 2) or min(sides) < 1:
    raise app.UsageError('--image_size=%s: give HEIGHT or HEIGHT,WIDTH in pixels, e.g. --image_size=64'
                         % ','.join(values))
  return (sides[0], sides[-1])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  logs.configure(FLAGS.tf_log)
  exit_on_user_error(prepare_data, image_size(FLAGS.image_size))


def prepare_data(size):
  storage.check_flag_paths(FLAGS)  # gs:// data_dir/source_dir: reachable, bucket there, allowed -- in seconds
  with tf_errors.TensorFlowErrors(data_dir=FLAGS.data_dir):
    try:
      prepare.prepare_data(FLAGS.data_dir, FLAGS.source_dir, FLAGS.download_timeout, FLAGS.validation_size,
                           FLAGS.source, FLAGS.num_classes, size, FLAGS.channels, FLAGS.shard_mb * 1024 * 1024)
    except KeyboardInterrupt:
      raise preparation_interrupted(FLAGS.data_dir) from None


if __name__ == '__main__':
  data_flags.define_data_flags()
  log_flags.define_log_flags()
  define_source_flags()
  app.run(main, flags_parser=program_help.parse_flags)
