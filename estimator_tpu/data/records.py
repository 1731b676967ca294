"""MNIST as TFRecords, in the layout TensorFlow's own MNIST tools write (convert_to_records.py).

`<data_dir>/{train,validation,test}.tfrecords`, or for a split too big for one file of SHARD_BYTES,
`<split>-00000-of-00004.tfrecords` ... (dataset.json counts its shards; split_files lists them); each
tf.train.Example holds `image_raw` (784 uint8 bytes for MNIST; height * width * depth of any dataset, row-major,
channels last), `label` (int64), `height`, `width`, `depth`;
<data_dir>/dataset.json (spec.py) says which shape and classes the directory holds. Data prepared for
tensorflow/tpu's mnist_tpu.py reads here unchanged, and ours there. All file access goes through tf.io.gfile, so `gs://` paths work too.

A split is named by its path `<data_dir>/<split>.tfrecords` (split_path) also when it is sharded: every reader here
(read_dataset, count_examples, check_layout, read_split, require_split, split_exists) reads all of its files, in
order. Reading: `read_dataset` and `parse_batch` are what every route's input_fn starts from; they return plain
(images, labels) tensors, and the routes name them as features.
"""
import os

import numpy as np
import tensorflow.compat.v1 as tf
from absl import logging

from estimator_tpu.data import idx
from estimator_tpu.data import spec as data_spec
from estimator_tpu.runtime import atomic_files
from estimator_tpu.runtime import storage
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

# MNIST's, the default: data_spec.MNIST. Other datasets carry theirs in dataset.json (data_spec.read).
IMAGE_SIZE = data_spec.MNIST.height
NUM_PIXELS = data_spec.MNIST.num_pixels
NUM_CLASSES = data_spec.MNIST.num_classes
FEATURE_SPEC = {
    'image_raw': tf.io.FixedLenFeature([], tf.string),
    'label': tf.io.FixedLenFeature([], tf.int64),
}
READ_BUFFER_BYTES = 8 * 1024 * 1024
# Start of the message of a failed label check; runtime/tf_errors.py recognises it and names the file.
LABEL_RANGE_ERROR = 'labels outside 0-'  # then '<last class id> in <file>: found ...'
SPLITS = ('train', 'validation', 'test')
VALIDATION_SIZE = 5000  # the last 5,000 training images, as convert_to_records.py does
IDX_FILES = {
    'train_images': 'train-images-idx3-ubyte',
    'train_labels': 'train-labels-idx1-ubyte',
    'test_images': 't10k-images-idx3-ubyte',
    'test_labels': 't10k-labels-idx1-ubyte',
}
PROGRESS_EVERY = 10000
# At most this many bytes per TFRecord file: within the 100-200 MB that issue 28 asks of files for Cloud Storage,
# where a file is uploaded whole when it is closed. MNIST's largest split (55,000 x 891 bytes, 49 MB) stays one file.
SHARD_BYTES = 128 * 1024 * 1024
# What one record adds to its image bytes: the Example's other features and keys, and TFRecord's 16 bytes of
# framing (measured: 107 for MNIST's 28x28, 114 for 224x224x3).
EXAMPLE_OVERHEAD_BYTES = 128
TFRECORDS = '.tfrecords'
_COUNTED = {}  # (path, size, mtime) -> records: count_examples' memory
LAYOUT_FIX = ('write each tf.train.Example with `image_raw` (height x width x channels uint8 bytes, as dataset.json '
              'says; 784 for MNIST) and `label` (int64 class id), as `python -m tools.prepare_data` does from every '
              'source (docs/DATA.md).')


def split_path(data_dir, split):
  """The name of a split, which every reader here takes; also the file of a split written as one file."""
  return os.path.join(data_dir, split + TFRECORDS)


def shard_path(data_dir, split, index, count):
  return os.path.join(data_dir, '%s-%05d-of-%05d%s' % (split, index, count, TFRECORDS))


def split_files(path):
  """The files of the split `path` names, in order: its shards when its dataset.json counts more than one, else
  [path] (every directory prepared before shards, and any other file)."""
  data_dir, name = os.path.split(path)
  if not name.endswith(TFRECORDS):
    return [path]
  split = name[:-len(TFRECORDS)]
  count = data_spec.read(data_dir).shards.get(split, 1)
  return [path] if count <= 1 else [shard_path(data_dir, split, index, count) for index in range(count)]


def split_exists(path):
  """Whether every file of the split is there."""
  return all(tf.io.gfile.exists(name) for name in split_files(path))


def require_split(data_dir, split):
  """Returns the split's path, or raises a UserError that says how to create it."""
  path = split_path(data_dir, split)
  missing = [name for name in split_files(path) if not tf.io.gfile.exists(name)]
  if missing:
    raise UserError('%s is missing.' % missing[0],
                    'run `python -m tools.prepare_data --data_dir=%s` (downloads MNIST), or pass --source_dir with '
                    'your own IDX files.' % data_dir)
  return path


def read_dataset(path):
  """The serialized Examples of one split, file after file, in order (on TF 2.x without tf.data's autotuning
  thread). Training shuffles them after this, as it does one file's."""
  files = split_files(path)
  dataset = tf.data.TFRecordDataset(files[0] if len(files) == 1 else files, buffer_size=READ_BUFFER_BYTES)
  options = tf.data.Options()
  if hasattr(options, 'autotune'):  # TF 2.x; datasets built on this one inherit the option
    # TF 2.15's autotuning thread sleeps between optimisations for periods that double up to a minute, and
    # destroying an iterator waits for it to wake: a training call could end in up to a minute of silence
    # (measured: 48 s after 93 s of training; gdb showed RootDataset::Iterator's destructor waiting while the
    # thread sat in Model::OptimizeLoop). Without it the same seeded run trained at the same examples/s to the
    # same losses, without the wait. TF 1.15 showed no such wait in any of its runs here, and there a change of
    # options would change which model a given --seed trains, so it keeps its defaults.
    options.autotune.enabled = False
    dataset = dataset.with_options(options)
  return dataset


def decode_images(image_raw, batch_size, num_pixels=NUM_PIXELS):
  """[batch] strings of num_pixels uint8 bytes -> float32 [batch_size, num_pixels]; batch_size -1 leaves the batch
  dynamic.

  TPU rule 15 (TPU dtypes): the cast to float32 happens here, on the host: TF 1.15's TPU infeed takes no uint8 (bool, int32, int64,
  uint32, bfloat16, float32 and complex64; tensorflow/python/tpu/ops/tpu_ops.py, _SUPPORTED_INFEED_DTYPES), TF
  2.15's adds uint8 and int8; float32 works on both, and the model computes in float32 anyway.
  """
  pixels = tf.io.decode_raw(image_raw, tf.uint8)
  # The reshape pins the static shape [batch_size, num_pixels] that decode_raw cannot know.
  return tf.cast(tf.reshape(pixels, [batch_size, num_pixels]), tf.float32)


def parse_batch(serialized, batch_size, source='the input', spec=data_spec.MNIST):
  """Parses a [batch_size] vector of serialized Examples at once (one op per batch, not per example).

  Returns (images float32 [batch_size, spec.num_pixels] with values 0..255, labels int32 [batch_size]). `source`
  (the file name) goes into the error raised when a label is not a class id of `spec`.
  """
  parsed = tf.io.parse_example(serialized, FEATURE_SPEC)
  images = decode_images(parsed['image_raw'], batch_size, spec.num_pixels)
  labels = check_labels(tf.reshape(parsed['label'], [batch_size]), source, spec.num_classes)
  return images, tf.cast(labels, tf.int32)


def check_labels(labels, source, num_classes=NUM_CLASSES):
  """Returns `labels`, failing (InvalidArgumentError) when one is not in [0, num_classes).

  The loss cannot be trusted to do this: only the CPU kernel of sparse_softmax_cross_entropy checks the range;
  on GPU and TPU a bad label silently gives a wrong loss or NaN. The input pipeline runs on the host CPU in
  every mode, so the check here holds on TPU too, and costs one comparison per label.
  """
  bad = tf.logical_or(labels < 0, labels >= num_classes)
  check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(bad)),
                              ['%s%d in %s: found' % (LABEL_RANGE_ERROR, num_classes - 1, source),
                               tf.boolean_mask(labels, bad)])
  with tf.control_dependencies([check]):
    return tf.identity(labels)


def serialize_example(image, label):
  """One tf.train.Example in the standard layout; `image` is uint8 [height, width] or [height, width, channels]."""
  height, width = image.shape[:2]
  depth = image.shape[2] if image.ndim == 3 else 1
  int64 = lambda v: tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v)]))
  feature = {
      'height': int64(height),
      'width': int64(width),
      'depth': int64(depth),
      'label': int64(label),
      'image_raw': tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
  }
  return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def write_split(path, images, labels):
  """Writes one split under a temporary name and renames it when complete, so no reader sees half a file."""
  write_splits([(path, images, labels)])


def write_splits(splits):
  """Writes [(path, images, labels)] so that the files appear together, each one complete.

  Every split goes to a temporary name first; the renames, back to back, happen only after all of them are
  written. A writer killed before that changes none of the final names (the next writer removes its temporary
  files, see atomic_files), so a data directory never holds half a file, and a killed first preparation leaves
  no splits rather than some.
  """
  for path, images, labels in splits:
    if len(images) != len(labels):
      raise UserError('%d images but %d labels for %s.' % (len(images), len(labels), path),
                      'pass matching images and labels files.')
  temps = []
  try:
    for path, images, labels in splits:
      atomic_files.remove_stale_temps(path)
      temps.append((atomic_files.temp_path(path), path))
      _write_examples(temps[-1][0], os.path.basename(path), images, labels)
    for temp, path in temps:
      tf.io.gfile.rename(temp, path, overwrite=True)
      logging.info('Wrote %s.', path)
  finally:
    for temp, _ in temps:
      if tf.io.gfile.exists(temp):
        tf.io.gfile.remove(temp)


def _write_examples(path, name, images, labels):
  with tf.io.TFRecordWriter(path) as writer:
    for i, (image, label) in enumerate(zip(images, labels)):
      writer.write(serialize_example(image, label))
      if (i + 1) % PROGRESS_EVERY == 0 and i + 1 < len(images):  # the last count is the line below
        logging.info('%s: %d/%d examples', name, i + 1, len(images))
  logging.info('%s: all %d examples written.', name, len(images))


def find_idx_file(source_dir, name):
  """Returns `<name>` or `<name>.gz` in source_dir, or raises a UserError naming what is missing."""
  for candidate in (name, name + '.gz'):
    path = os.path.join(source_dir, candidate)
    if tf.io.gfile.exists(path):
      return path
  raise UserError('%s(.gz) not found in %s.' % (name, source_dir),
                  'put the four IDX files (%s) there, gzipped or not.' % ', '.join(sorted(IDX_FILES.values())))


def read_idx_dir(source_dir, num_classes=NUM_CLASSES):
  """Reads and checks the four standard IDX files (images of any size); returns dict of uint8 arrays keyed like
  IDX_FILES."""
  arrays = {}
  for key, name in sorted(IDX_FILES.items()):
    path = find_idx_file(source_dir, name)
    if key.endswith('images'):
      arrays[key] = idx.read_images(path, open_fn=tf.io.gfile.GFile)
    else:
      arrays[key] = idx.read_labels(path, open_fn=tf.io.gfile.GFile, num_classes=num_classes)
  if arrays['train_images'].shape[1:] != arrays['test_images'].shape[1:]:
    raise UserError('the training images are %s pixels, the test images %s.'
                    % tuple('x'.join(map(str, arrays[key].shape[1:])) for key in ('train_images', 'test_images')),
                    'use training and test images of one size.')
  return arrays


def convert_idx_dir(source_dir, data_dir, validation_size=VALIDATION_SIZE, num_classes=NUM_CLASSES, name='mnist',
                    shard_bytes=SHARD_BYTES):
  """Writes train/validation/test TFRecords and dataset.json in data_dir from the IDX files in source_dir."""
  arrays = read_idx_dir(source_dir, num_classes)
  write_dataset(data_dir, name, tuple(str(i) for i in range(num_classes)), arrays['train_images'],
                arrays['train_labels'], arrays['test_images'], arrays['test_labels'], validation_size, shard_bytes)


def write_dataset(data_dir, name, class_names, train_images, train_labels, test_images, test_labels,
                  validation_size=VALIDATION_SIZE, shard_bytes=SHARD_BYTES):
  """Writes the three splits, then their dataset.json, into data_dir (created if needed).

  The last `validation_size` training images become the validation split (5,000 for MNIST, as TF's tools do).
  Images are uint8 [n, height, width] or [n, height, width, channels]. A split of more than `shard_bytes` goes into
  as many files of consecutive examples as keep each under it (shard_count); the files of the other layout a
  previous preparation left are removed once dataset.json names the new ones.
  """
  for split, images, labels in (('train', train_images, train_labels), ('test', test_images, test_labels)):
    if len(images) != len(labels):
      raise UserError('the %s split has %d images but %d labels.' % (split, len(images), len(labels)),
                      'use the images and labels files that belong together.')
  if len(train_images) <= validation_size:
    raise UserError('the training set has %d images; at least %d are needed (the last %d become validation).'
                    % (len(train_images), validation_size + 1, validation_size),
                    'use a larger training set or a smaller --validation_size.')
  shape = list(train_images.shape[1:]) + ([1] if train_images.ndim == 3 else [])
  cut = len(train_images) - validation_size
  parts = {'train': (train_images[:cut], train_labels[:cut]),
           'validation': (train_images[cut:], train_labels[cut:]), 'test': (test_images, test_labels)}
  example_bytes = int(np.prod(shape)) + EXAMPLE_OVERHEAD_BYTES
  shards = {split: shard_count(len(parts[split][1]), example_bytes, shard_bytes) for split in SPLITS}
  spec = data_spec.DataSpec(name, shape[0], shape[1], shape[2], tuple(class_names),
                            {split: len(parts[split][1]) for split in SPLITS},
                            {split: count for split, count in shards.items() if count > 1})
  data_spec.check(spec, data_spec.path_of(data_dir))
  tf.io.gfile.makedirs(data_dir)
  files = []
  for split in SPLITS:
    images, labels = parts[split]
    bounds = np.linspace(0, len(labels), shards[split] + 1).astype(int)
    names = ([split_path(data_dir, split)] if shards[split] == 1 else
             [shard_path(data_dir, split, index, shards[split]) for index in range(shards[split])])
    files += [(names[i], images[bounds[i]:bounds[i + 1]], labels[bounds[i]:bounds[i + 1]]) for i in range(len(names))]
  write_splits(files)
  data_spec.write(data_dir, spec)
  _remove_other_layout(data_dir, set(path for path, _, _ in files))
  logging.info('Wrote %s (%s).', data_spec.path_of(data_dir), spec.describe())


def shard_count(examples, example_bytes, shard_bytes=SHARD_BYTES):
  """How many files a split of `examples` needs so that none holds more than shard_bytes (at least one)."""
  per_file = max(1, shard_bytes // example_bytes)
  return max(1, -(-examples // per_file))


def _remove_other_layout(data_dir, written):
  """Removes split files of data_dir that the new dataset.json no longer names (a previous layout's shards or
  single files), so no reader and no copy of the directory picks up stale examples."""
  for split in SPLITS:
    for name in [split_path(data_dir, split)] + tf.io.gfile.glob(
        os.path.join(data_dir, '%s-?????-of-?????%s' % (split, TFRECORDS))):
      if name not in written and tf.io.gfile.exists(name):
        tf.io.gfile.remove(name)
        logging.info('Removed %s (written before, not part of the new layout).', name)


def count_examples(path):
  """Number of records of a split (all its files); see _count_file."""
  return sum(_count_file(name) for name in split_files(path))


def _count_file(path):
  """Number of records in a TFRecord file; reads it once, checking every record's CRC (55k MNIST: ~0.1 s), and
  the first record against the layout (check_example). A file is read once per process while its size and
  modification time stay the same: the runner and exact evaluation's input both ask.

  A damaged file (flipped bytes, truncated) raises a UserError naming the file and the first bad record; so does
  one that disappears while it is read (on gs://, a delete by another job).
  """
  try:
    stat = tf.io.gfile.stat(path)
    key = (path, stat.length, stat.mtime_nsec)
  except tf.errors.OpError:
    key = None  # reading it says what is wrong
  if key in _COUNTED:
    return _COUNTED[key]
  count = 0
  for record in _records(path, lambda: count):
    if count == 0:
      check_example(record, path, data_spec.read(os.path.dirname(path)))
    count += 1
  if key is not None:
    _COUNTED[key] = count
  return count


def check_layout(path):
  """Reads the first record of a split and raises a UserError if it is not in this layout (check_example)."""
  path = split_files(path)[0]
  for record in _records(path, lambda: 0):
    check_example(record, path, data_spec.read(os.path.dirname(path)))
    return


def _records(path, records_read):
  """The records of `path`; read errors become UserErrors that name the file and `records_read()`."""
  try:
    for record in tf.io.tf_record_iterator(path):
      yield record
  except tf.errors.DataLossError as e:
    raise UserError('%s is damaged: record %d fails its check (%s).' % (path, records_read(), str(e).splitlines()[0]),
                    'prepare the data again (python -m tools.prepare_data --data_dir=%s, plus --source_dir if it came '
                    'from your own IDX files), or restore the file from a good copy.' % os.path.dirname(path))
  except tf.errors.NotFoundError as e:
    raise UserError('%s disappeared while it was being read (%s).' % (path, essence(e).rstrip('.')),
                    'restore it or prepare the data again (python -m tools.prepare_data --data_dir=%s), and keep other '
                    'jobs from changing the data during a run.' % os.path.dirname(path))
  except tf.errors.OpError as e:
    raise storage.user_error(e) or e


def check_example(record, path, spec=data_spec.MNIST):
  """Raises a UserError naming `path` and the feature unless `record` is a tf.train.Example of this layout:
  `image_raw` one string of spec.num_pixels bytes (784 for MNIST's 28x28 uint8) and `label` one int64. Other
  features are ignored."""
  try:
    feature = tf.train.Example.FromString(record).features.feature
  except Exception:  # pylint: disable=broad-except  # protobuf's DecodeError differs between its versions
    raise UserError('%s does not hold tf.train.Example records: its first record does not parse as one.' % path,
                    LAYOUT_FIX)
  if not feature:
    raise UserError('%s does not hold tf.train.Example records: its first record has no features.' % path,
                    LAYOUT_FIX)
  problem = None
  if 'image_raw' not in feature:
    problem = 'has no feature `image_raw`'
  elif feature['image_raw'].WhichOneof('kind') != 'bytes_list' or len(feature['image_raw'].bytes_list.value) != 1:
    problem = 'has `image_raw` as %s, not one string of bytes' % _describe_feature(feature['image_raw'])
  elif len(feature['image_raw'].bytes_list.value[0]) != spec.num_pixels:
    size = len(feature['image_raw'].bytes_list.value[0])
    shape = [feature[key].int64_list.value[0] for key in ('height', 'width', 'depth')
             if key in feature and feature[key].int64_list.value]
    problem = 'has `image_raw` of %d bytes%s, not %d (%s pixels, one uint8 each)' % (
        size, ' (%s)' % 'x'.join(map(str, shape)) if shape else '', spec.num_pixels,
        'x'.join(map(str, spec.serving_shape)))
  elif 'label' not in feature:
    problem = 'has no feature `label`'
  elif feature['label'].WhichOneof('kind') != 'int64_list' or len(feature['label'].int64_list.value) != 1:
    problem = 'has `label` as %s, not one int64' % _describe_feature(feature['label'])
  if problem:
    layout = 'the MNIST TFRecord layout' if spec == data_spec.MNIST else 'the layout of %s' % data_spec.FILENAME
    raise UserError('%s is not in %s: its first example %s (its features: %s).'
                    % (path, layout, problem, ', '.join(sorted(feature)) or 'none'), LAYOUT_FIX)


def _describe_feature(feature):
  kind = feature.WhichOneof('kind')
  if kind is None:
    return 'an empty feature'
  return '%s of %d value%s' % (kind, len(getattr(feature, kind).value),
                               '' if len(getattr(feature, kind).value) == 1 else 's')


def read_split(path):
  """Returns (images uint8 [n, height, width] (one channel, e.g. MNIST's [n, 28, 28]) or [n, height, width,
  channels], labels int64 [n]) from a split (all its files, in order), the shape its directory's dataset.json
  says; for tests and small tools."""
  shape = data_spec.read(os.path.dirname(path)).serving_shape
  images, labels = [], []
  for record in (record for name in split_files(path) for record in tf.io.tf_record_iterator(name)):
    feature = tf.train.Example.FromString(record).features.feature
    images.append(np.frombuffer(feature['image_raw'].bytes_list.value[0], dtype=np.uint8))
    labels.append(feature['label'].int64_list.value[0])
  return np.array(images, dtype=np.uint8).reshape([-1] + shape), np.array(labels, dtype=np.int64)
