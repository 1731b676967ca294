"""Writes the MNIST TFRecord layout (train/validation/test.tfrecords) into --data_dir.

  python -m tools.prepare_data --data_dir=DIR                   # fetch MNIST (checksums verified), then convert
  python -m tools.prepare_data --data_dir=DIR --source_dir=IDX  # convert your own four IDX files (gzipped or not)

mnist_tpu.py does this by itself on first use; run it directly to prepare a gs:// bucket for a Cloud TPU:
  python -m tools.prepare_data --data_dir=gs://BUCKET/mnist
"""
from absl import app
from absl import flags

from estimator_tpu.data import prepare
from estimator_tpu.runtime import logs
from estimator_tpu.runtime import storage
from estimator_tpu.runtime import tf_errors
from estimator_tpu.runtime.errors import exit_on_user_error
from estimator_tpu.runtime.errors import preparation_interrupted
from flags import data as data_flags
from flags import help as program_help
from flags import logs as log_flags

FLAGS = flags.FLAGS


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  logs.configure(FLAGS.tf_log)
  exit_on_user_error(prepare_data)


def prepare_data():
  storage.check_flag_paths(FLAGS)  # gs:// data_dir/source_dir: reachable, bucket there, allowed -- in seconds
  with tf_errors.TensorFlowErrors(data_dir=FLAGS.data_dir):
    try:
      prepare.prepare_data(FLAGS.data_dir, FLAGS.source_dir, FLAGS.download_timeout, FLAGS.validation_size)
    except KeyboardInterrupt:
      raise preparation_interrupted(FLAGS.data_dir) from None


if __name__ == '__main__':
  data_flags.define_data_flags()
  log_flags.define_log_flags()
  app.run(main, flags_parser=program_help.parse_flags)
