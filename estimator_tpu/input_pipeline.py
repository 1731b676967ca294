"""input_fn builders: TFRecords -> static-shaped batches of (features, labels).

TPU rules honoured here:
  * The batch size comes from params['batch_size'], which TPUEstimator sets (global batch on CPU, per-core batch
    on TPU); the input_fn never reads flags.
  * Every batch has a fully static shape: XLA compiles one program for one shape, so a short last batch would
    not run. `batch(..., drop_remainder=True)` is what `tf.contrib.data.batch_and_drop_remainder` became.
  * Images leave the host as float32 and labels as int32: TPUs take neither uint8 nor int64.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu import records
from estimator_tpu.model_fn import IMAGE_KEY

AUTOTUNE = tf.data.experimental.AUTOTUNE
FEATURE_SPEC = {
    'image_raw': tf.io.FixedLenFeature([], tf.string),
    'label': tf.io.FixedLenFeature([], tf.int64),
}
SHUFFLE_BUFFER = 10000
READ_BUFFER_BYTES = 8 * 1024 * 1024


# Start of the message of a failed label check; failures.py recognises it and names the file.
LABEL_RANGE_ERROR = 'labels outside 0-%d in' % (model.NUM_CLASSES - 1)


def parse_batch(serialized, batch_size, source='the input'):
  """Parses a [batch_size] vector of serialized Examples at once (one op per batch, not per example).

  `source` (the file name) goes into the error raised when a label is not a class id.
  """
  parsed = tf.io.parse_example(serialized, FEATURE_SPEC)
  pixels = tf.io.decode_raw(parsed['image_raw'], tf.uint8)
  # The reshape pins the static shape [batch_size, 784] that decode_raw cannot know.
  images = tf.cast(tf.reshape(pixels, [batch_size, model.NUM_PIXELS]), tf.float32)
  labels = check_labels(tf.reshape(parsed['label'], [batch_size]), source)
  return {IMAGE_KEY: images}, tf.cast(labels, tf.int32)


def check_labels(labels, source):
  """Returns `labels`, failing (InvalidArgumentError) when one is not in [0, NUM_CLASSES).

  The loss cannot be trusted to do this: only the CPU kernel of sparse_softmax_cross_entropy checks the range;
  on GPU and TPU a bad label silently gives a wrong loss or NaN. The input pipeline runs on the host CPU in
  every mode, so the check here holds on TPU too, and costs one comparison per label.
  """
  bad = tf.logical_or(labels < 0, labels >= model.NUM_CLASSES)
  check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(bad)),
                              ['%s %s: found' % (LABEL_RANGE_ERROR, source), tf.boolean_mask(labels, bad)])
  with tf.control_dependencies([check]):
    return tf.identity(labels)


def input_fn_builder(data_dir, split, is_training):
  """Returns input_fn(params) reading `<data_dir>/<split>.tfrecords`.

  Training shuffles and repeats forever (TPUEstimator stops at max_steps); evaluation reads the split once in
  order, dropping a final partial batch so every batch is full.
  """
  path = records.split_path(data_dir, split)

  def input_fn(params):
    batch_size = params['batch_size']
    dataset = tf.data.TFRecordDataset(path, buffer_size=READ_BUFFER_BYTES)
    if is_training:
      # The serialized split is small (MNIST train: ~50 MB), so keep it in memory after the first epoch.
      dataset = dataset.cache().shuffle(SHUFFLE_BUFFER).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda serialized: parse_batch(serialized, batch_size, path), num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn
