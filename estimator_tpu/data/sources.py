"""Image classification data from the sources TPU tutorials use, read into uint8 arrays for records.py to write.

  idx      four IDX files of any image size (MNIST's layout; Fashion-MNIST ships in it)
  cifar10  CIFAR-10's binary layout: data_batch_1.bin ... data_batch_5.bin, test_batch.bin (downloaded if absent)
  digits   scikit-learn's 8x8 digits (shipped with scikit-learn, so offline); a third held out for testing
  folder   one sub-folder of PNG/JPEG images per class (or train/ and test/ holding such folders); decoded and
           resized on the host with TensorFlow
  npz      x_train, y_train, x_test, y_test arrays, as Keras' dataset cache (~/.keras/datasets/*.npz) holds them

Every reader returns a Dataset; a source that is missing, partial or not what it claims is one UserError naming
the file. Splits that come without a test part (digits, a flat folder) are cut by a fixed permutation
(numpy's RandomState, whose stream never changes), so the same source always gives the same splits.
"""
import collections
import hashlib
import io
import os
import tarfile
import urllib.request

import numpy as np
import tensorflow.compat.v1 as tf
from absl import logging

from estimator_tpu.data import records
from estimator_tpu.runtime.errors import UserError

AUTO, MNIST, IDX, CIFAR10, DIGITS, FOLDER, NPZ = 'auto', 'mnist', 'idx', 'cifar10', 'digits', 'folder', 'npz'
SOURCES = (AUTO, MNIST, IDX, CIFAR10, DIGITS, FOLDER, NPZ)

CIFAR10_TRAIN = tuple('data_batch_%d.bin' % i for i in range(1, 6))
CIFAR10_TEST = 'test_batch.bin'
CIFAR10_SIDE = 32
CIFAR10_RECORD = 1 + 3 * CIFAR10_SIDE * CIFAR10_SIDE  # a label byte, then the red, green and blue planes
CIFAR10_CLASSES = ('airplane', 'automobile', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')
CIFAR10_URL = 'https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz'
CIFAR10_MD5 = 'c32a1d4ab5d03f1284b67883e8d87530'  # the archive's, as its page publishes it
CIFAR10_SUBDIR = 'cifar-10-batches-bin'  # what the archive unpacks to

DIGITS_TEST_FRACTION = 1.0 / 3  # scikit-learn's tutorials hold out a third (or a half) of the 1,797 images
FOLDER_TEST_FRACTION = 0.2  # as Keras' image_dataset_from_directory(validation_split=0.2) in the flowers tutorial
IMAGE_EXTENSIONS = ('.png', '.jpg', '.jpeg')
NPZ_KEYS = ('x_train', 'y_train', 'x_test', 'y_test')
SPLIT_SEED = 0


class Dataset(collections.namedtuple('Dataset', ['name', 'class_names', 'train_images', 'train_labels',
                                                 'test_images', 'test_labels'])):
  """uint8 images [n, height, width] or [n, height, width, channels] and int labels, per split."""

  @property
  def image_shape(self):
    shape = list(self.train_images.shape[1:])
    return shape + [1] if len(shape) == 2 else shape


def detect(source_dir):
  """The source a --source_dir holds when --source=auto: an .npz file, CIFAR-10 batches, class folders (sub-folders
  and no IDX file), else IDX files, the historical meaning of --source_dir (whose errors name the files missing)."""
  if source_dir is None:
    return MNIST
  if source_dir.endswith('.npz'):
    return NPZ
  if _cifar10_dir(source_dir):
    return CIFAR10
  has_idx = any(tf.io.gfile.exists(os.path.join(source_dir, name + suffix))
                for name in records.IDX_FILES.values() for suffix in ('', '.gz'))
  if not has_idx and tf.io.gfile.isdir(source_dir) and any(
      tf.io.gfile.isdir(os.path.join(source_dir, entry)) for entry in tf.io.gfile.listdir(source_dir)):
    return FOLDER
  return IDX


def read(source, source_dir, num_classes=None, image_size=None, channels=3, download_timeout=10.0):
  """The Dataset of `source` (SOURCES; AUTO detects it from source_dir). MNIST is prepare.py's (fetched); for
  CIFAR10 source_dir is where its batches are, or are downloaded to."""
  if source == AUTO:
    source = detect(source_dir)
  if source in (IDX, CIFAR10, FOLDER, NPZ) and not source_dir:
    raise UserError('--source=%s needs --source_dir (where its files are).' % source,
                    'pass --source_dir=DIR (for npz: the .npz file).')
  if source == IDX:
    return read_idx(source_dir, num_classes or records.NUM_CLASSES)
  if source == CIFAR10:
    return read_cifar10(source_dir, download_timeout)
  if source == DIGITS:
    return read_digits()
  if source == FOLDER:
    return read_folder(source_dir, image_size, channels)
  if source == NPZ:
    return read_npz(source_dir, num_classes)
  raise ValueError('no reader for source %r' % source)


def read_idx(source_dir, num_classes=records.NUM_CLASSES):
  """The four standard IDX files of source_dir, gzipped or not, images of any size."""
  arrays = records.read_idx_dir(source_dir, num_classes)
  return Dataset(_name_of(source_dir), _numbered(num_classes), arrays['train_images'], arrays['train_labels'],
                 arrays['test_images'], arrays['test_labels'])


def _cifar10_dir(source_dir):
  """source_dir, or its cifar-10-batches-bin sub-folder, when it holds CIFAR-10's first batch; else None."""
  for folder in (source_dir, os.path.join(source_dir, CIFAR10_SUBDIR)):
    if tf.io.gfile.exists(os.path.join(folder, CIFAR10_TRAIN[0])):
      return folder
  return None


def read_cifar10(source_dir, download_timeout=10.0):
  """CIFAR-10's six binary batches (their folder, or one above it); fetched into source_dir when it has none."""
  folder = _cifar10_dir(source_dir)
  if folder is None:
    folder = fetch_cifar10(source_dir, download_timeout)
  missing = [name for name in CIFAR10_TRAIN + (CIFAR10_TEST,)
             if not tf.io.gfile.exists(os.path.join(folder, name))]
  if missing:
    raise UserError('%s holds part of CIFAR-10: %s missing.' % (folder, ', '.join(missing)),
                    'put all six batches there (%s), as %s unpacks them.'
                    % (', '.join(CIFAR10_TRAIN + (CIFAR10_TEST,)), os.path.basename(CIFAR10_URL)))
  train = [_read_cifar10_batch(os.path.join(folder, name)) for name in CIFAR10_TRAIN]
  test_images, test_labels = _read_cifar10_batch(os.path.join(folder, CIFAR10_TEST))
  return Dataset('cifar10', _cifar10_names(folder), np.concatenate([images for images, _ in train]),
                 np.concatenate([labels for _, labels in train]), test_images, test_labels)


def _read_cifar10_batch(path):
  with tf.io.gfile.GFile(path, 'rb') as f:
    data = f.read()
  if not data or len(data) % CIFAR10_RECORD:
    raise UserError('%s holds %d bytes, not a whole number of %d-byte CIFAR-10 records (truncated, or not a batch).'
                    % (path, len(data), CIFAR10_RECORD), 'download and unpack %s again.' % CIFAR10_URL)
  rows = np.frombuffer(data, np.uint8).reshape(-1, CIFAR10_RECORD)
  labels = rows[:, 0]
  if labels.max() >= len(CIFAR10_CLASSES):
    bad = int(np.argmax(labels >= len(CIFAR10_CLASSES)))
    raise UserError('%s has label %d in record %d; CIFAR-10 labels are 0-9.' % (path, labels[bad], bad),
                    'download and unpack %s again.' % CIFAR10_URL)
  # Each record holds the red plane, then green, then blue (row-major): channels last for TensorFlow.
  images = rows[:, 1:].reshape(-1, 3, CIFAR10_SIDE, CIFAR10_SIDE).transpose(0, 2, 3, 1)
  return np.ascontiguousarray(images), labels


def _cifar10_names(folder):
  """The class names of batches.meta.txt when it is there and lists ten, else CIFAR-10's published ones."""
  path = os.path.join(folder, 'batches.meta.txt')
  if tf.io.gfile.exists(path):
    with tf.io.gfile.GFile(path, 'r') as f:
      names = [line.strip() for line in f.read().splitlines() if line.strip()]
    if len(names) == len(CIFAR10_CLASSES):
      return tuple(names)
  return CIFAR10_CLASSES


def fetch_cifar10(dest_dir, timeout=10.0, url=CIFAR10_URL, md5=CIFAR10_MD5):
  """Downloads CIFAR-10's binary archive, checks its md5 and unpacks the batches into dest_dir; returns their folder.

  Nothing is written unless the whole archive arrived with the right checksum.
  """
  logging.info('Downloading CIFAR-10 from %s', url)
  try:
    with urllib.request.urlopen(url, timeout=timeout) as response:
      archive = response.read()
  except (OSError, ValueError) as e:  # URLError, timeouts and refused connections are OSErrors
    raise UserError('%s holds no CIFAR-10 batches and %s could not be downloaded (%s: %s).'
                    % (dest_dir, url, type(e).__name__, e),
                    'download %s where the network allows, unpack it and pass the folder it makes (%s) as '
                    '--source_dir.' % (os.path.basename(url), CIFAR10_SUBDIR))
  actual = hashlib.md5(archive).hexdigest()
  if actual != md5:
    raise UserError('%s has md5 %s, expected %s (incomplete or not the CIFAR-10 archive).' % (url, actual, md5),
                    'download it again, or unpack a good copy and pass its folder as --source_dir.')
  folder = os.path.join(dest_dir, CIFAR10_SUBDIR)
  tf.io.gfile.makedirs(folder)
  with tarfile.open(fileobj=io.BytesIO(archive), mode='r:gz') as tar:
    for member in tar.getmembers():
      name = os.path.basename(member.name)
      if member.isfile() and (name.endswith('.bin') or name == 'batches.meta.txt'):
        with tf.io.gfile.GFile(os.path.join(folder, name), 'wb') as f:
          f.write(tar.extractfile(member).read())
  return folder


def read_digits():
  """scikit-learn's 8x8 digits (values 0-16, scaled to 0-255), a third held out for testing."""
  try:
    from sklearn import datasets  # pylint: disable=g-import-not-at-top  # only this source needs it
  except ImportError:
    raise UserError('--source=digits reads scikit-learn\'s digits, and scikit-learn is not installed.',
                    "pip install 'scikit-learn' (or this project with its extra: pip install -e '.[digits]').")
  digits = datasets.load_digits()
  images = np.round(digits.images * (255.0 / 16.0)).astype(np.uint8)
  labels = digits.target.astype(np.uint8)
  train, test = holdout(len(labels), DIGITS_TEST_FRACTION)
  return Dataset('digits', _numbered(10), images[train], labels[train], images[test], labels[test])


def holdout(count, test_fraction, seed=SPLIT_SEED):
  """(train indices, test indices) of `count` examples: a fixed permutation, its first test_fraction for testing."""
  order = np.random.RandomState(seed).permutation(count)
  cut = int(round(count * test_fraction))
  return order[cut:], order[:cut]


def read_folder(source_dir, image_size=None, channels=3):
  """A folder with one sub-folder of images per class (or train/ and test/ each holding such sub-folders).

  Images are decoded and resized on the host to `image_size` (height, width); None takes the first image's size.
  The classes are the sub-folders' names, sorted. A flat folder keeps FOLDER_TEST_FRACTION for testing.
  """
  if not tf.io.gfile.isdir(source_dir):
    raise UserError('%s is not a folder.' % source_dir,
                    'pass --source_dir=DIR with one sub-folder of PNG/JPEG images per class.')
  split_dirs = [os.path.join(source_dir, split) for split in ('train', 'test')]
  if all(tf.io.gfile.isdir(path) for path in split_dirs):
    train_files, class_names = _class_files(split_dirs[0])
    test_files, test_names = _class_files(split_dirs[1])
    if test_names != class_names:
      raise UserError('%s has the classes %s, %s has %s.' % (split_dirs[0], ', '.join(class_names), split_dirs[1],
                                                             ', '.join(test_names)),
                      'give train/ and test/ the same class sub-folders.')
  else:
    files, class_names = _class_files(source_dir)
    train, test = holdout(len(files), FOLDER_TEST_FRACTION)
    train_files, test_files = [files[i] for i in train], [files[i] for i in test]
  with _Decoder(channels) as decoder:
    size = image_size or decoder.size_of(train_files[0][0])
    train_images, train_labels = decoder.decode_all(train_files, size)
    test_images, test_labels = decoder.decode_all(test_files, size)
  # Shuffled once, by a fixed permutation: files come class by class, and training shuffles within a buffer only.
  order = np.random.RandomState(SPLIT_SEED).permutation(len(train_labels))
  return Dataset(_name_of(source_dir), class_names, train_images[order], train_labels[order], test_images,
                 test_labels)


def _class_files(folder):
  """([(path, class id)], class names) of a folder with one sub-folder of images per class."""
  class_names = tuple(sorted(name.rstrip('/') for name in tf.io.gfile.listdir(folder)
                             if tf.io.gfile.isdir(os.path.join(folder, name))))
  if len(class_names) < 2:
    raise UserError('%s has %d class sub-folder(s); a classifier needs at least 2.' % (folder, len(class_names)),
                    'put each class\'s PNG/JPEG images in a sub-folder named after it.')
  files = []
  for class_id, name in enumerate(class_names):
    images = sorted(entry for entry in tf.io.gfile.listdir(os.path.join(folder, name))
                    if entry.lower().endswith(IMAGE_EXTENSIONS))
    if not images:
      raise UserError('the class folder %s holds no PNG or JPEG images.' % os.path.join(folder, name),
                      'add its images (.png, .jpg, .jpeg) or remove the folder.')
    files += [(os.path.join(folder, name, image), class_id) for image in images]
  return files, class_names


class _Decoder(object):
  """Decodes and resizes images with TensorFlow's ops in a graph of its own (the same on TF 1.15 and 2.x)."""

  def __init__(self, channels):
    self._channels = channels

  def __enter__(self):
    self._graph = tf.Graph()
    with self._graph.as_default():
      self._contents = tf.placeholder(tf.string, [])
      self._size = tf.placeholder(tf.int32, [2])
      self._decoded = tf.io.decode_image(self._contents, channels=self._channels, expand_animations=False)
      resized = tf.image.resize_images(self._decoded, self._size, method=tf.image.ResizeMethod.BILINEAR)
      self._resized = tf.cast(tf.clip_by_value(tf.round(resized), 0, 255), tf.uint8)
    self._session = tf.Session(graph=self._graph)
    return self

  def __exit__(self, *exc_info):
    self._session.close()

  def _read(self, path):
    with tf.io.gfile.GFile(path, 'rb') as f:
      return f.read()

  def size_of(self, path):
    return tuple(self._run(self._decoded, path).shape[:2])

  def _run(self, tensor, path, size=(1, 1)):
    try:
      return self._session.run(tensor, {self._contents: self._read(path), self._size: size})
    except tf.errors.InvalidArgumentError as e:
      raise UserError('%s is not an image TensorFlow can decode (%s).' % (path, e.message.splitlines()[0]),
                      'replace or remove the file; PNG and JPEG are read.')

  def decode_all(self, files, size):
    images = np.zeros([len(files)] + list(size) + [self._channels], np.uint8)
    for i, (path, _) in enumerate(files):
      images[i] = self._run(self._resized, path, size)
      if (i + 1) % records.PROGRESS_EVERY == 0:
        logging.info('decoded %d/%d images', i + 1, len(files))
    return images, np.array([label for _, label in files], np.uint8)


def read_npz(path, num_classes=None):
  """x_train, y_train, x_test, y_test of an .npz file (Keras' cache of mnist, fashion_mnist, cifar10 ...)."""
  if not tf.io.gfile.exists(path):
    raise UserError('%s does not exist.' % path, 'pass the .npz file itself as --source_dir.')
  with tf.io.gfile.GFile(path, 'rb') as f:
    data = f.read()
  try:
    arrays = np.load(io.BytesIO(data), allow_pickle=False)
  except (ValueError, OSError) as e:
    raise UserError('%s is not a readable .npz file (%s).' % (path, e), 'save it with numpy.savez again.')
  missing = [key for key in NPZ_KEYS if key not in arrays.files]
  if missing:
    raise UserError('%s has no %s (it holds: %s).' % (path, ', '.join(missing), ', '.join(arrays.files) or 'nothing'),
                    'save the arrays as %s, as Keras\' datasets cache holds them.' % ', '.join(NPZ_KEYS))
  split = {key: arrays[key] for key in NPZ_KEYS}
  for part in ('train', 'test'):
    images, labels = split['x_' + part], split['y_' + part].reshape(-1) if split['y_' + part].ndim == 2 else \
        split['y_' + part]
    if images.ndim not in (3, 4) or images.dtype.kind not in 'ui' or (images.size and images.max() > 255) or \
        (images.size and images.min() < 0):
      raise UserError('%s: x_%s is %s %s; images must be integers 0-255, [n, height, width(, channels)].'
                      % (path, part, images.dtype, list(images.shape)), 'save the images as uint8.')
    if labels.ndim != 1 or labels.dtype.kind not in 'ui' or len(labels) != len(images):
      raise UserError('%s: y_%s is %s %s for %d images; labels must be [n] (or [n, 1]) class ids.'
                      % (path, part, labels.dtype, list(split['y_' + part].shape), len(images)),
                      'save one integer label per image.')
    split['x_' + part], split['y_' + part] = images.astype(np.uint8), labels
  if split['x_train'].shape[1:] != split['x_test'].shape[1:]:
    raise UserError('%s: x_train images are %s, x_test ones %s.' % (path, list(split['x_train'].shape[1:]),
                                                                   list(split['x_test'].shape[1:])),
                    'use training and test images of one size.')
  classes = num_classes or int(max(split['y_train'].max(), split['y_test'].max())) + 1
  for part in ('train', 'test'):
    labels = split['y_' + part]
    if labels.min() < 0 or labels.max() >= classes:
      raise UserError('%s: y_%s has labels outside 0-%d.' % (path, part, classes - 1),
                      'pass --num_classes=N for N classes, or fix the labels.')
  return Dataset(_name_of(path), _numbered(classes), split['x_train'], split['y_train'].astype(np.int64),
                 split['x_test'], split['y_test'].astype(np.int64))


def _numbered(num_classes):
  return tuple(str(i) for i in range(num_classes))


def _name_of(path):
  return os.path.splitext(os.path.basename(os.path.normpath(path)))[0] or 'data'
