"""Tiny, learnable stand-ins for MNIST: label k lights up a distinct 7x7 block (plus noise).

For the tests and the benchmark's smoke mode: seconds of training instead of minutes, in the same IDX layout.

The default digits are separable by design. `confusion` > 0 makes the classes overlap: that fraction of the
images shows the block of a different, random class, so no model can beat an accuracy of 1 - confusion (the
Bayes rate), and comparisons between programs are not all pinned at 100%.
"""
import gzip
import os

import numpy as np

from estimator_tpu.data import idx
from estimator_tpu.data import records


def make_digits(count, seed, confusion=0.0):
  """Returns (images uint8 [count, 28, 28], labels uint8 [count]).

  With confusion=0 each class is separable by design; otherwise that fraction of the images shows another
  class's block (see shown_classes).
  """
  rng = np.random.RandomState(seed)
  labels = rng.randint(0, 10, size=count).astype(np.uint8)
  images = rng.randint(0, 60, size=(count, 28, 28)).astype(np.uint8)
  for i, shown in enumerate(shown_classes(labels, confusion, seed)):
    row, col = divmod(int(shown), 4)
    images[i, 7 * row:7 * row + 7, 7 * col:7 * col + 7] = 255
  return images, labels


def shown_classes(labels, confusion, seed):
  """The class whose block each image shows: its label, or for a `confusion` fraction another random class."""
  if not confusion:
    return labels
  rng = np.random.RandomState(seed + 1000)  # separate stream: confusion=0 keeps the historical digits
  confused = rng.uniform(size=len(labels)) < confusion
  others = (labels + rng.randint(1, 10, size=len(labels))) % 10
  return np.where(confused, others, labels).astype(np.uint8)


def write_idx_dir(directory, train_count=300, test_count=110, gzipped=True, seed=0, confusion=0.0):
  """Writes the four standard IDX files; returns the arrays written as a dict keyed like records.IDX_FILES."""
  os.makedirs(directory, exist_ok=True)
  train_images, train_labels = make_digits(train_count, seed, confusion)
  test_images, test_labels = make_digits(test_count, seed + 1, confusion)
  arrays = {'train_images': train_images, 'train_labels': train_labels,
            'test_images': test_images, 'test_labels': test_labels}
  for key, name in records.IDX_FILES.items():
    data = idx.to_bytes(arrays[key])
    path = os.path.join(directory, name + ('.gz' if gzipped else ''))
    with open(path, 'wb') as f:
      f.write(gzip.compress(data) if gzipped else data)
  return arrays


def read_shown_classes(images):
  """The class whose block each image shows, read back from the pixels (blocks are 255, noise below 60).

  Mean of `labels == read_shown_classes(images)` is the best accuracy any model can reach on those images.
  """
  blocks = [images[:, 7 * row:7 * row + 7, 7 * col:7 * col + 7].mean(axis=(1, 2))
            for row, col in (divmod(k, 4) for k in range(10))]
  return np.argmax(np.stack(blocks, axis=1), axis=1).astype(np.uint8)


def make_images(count, seed, height=32, width=32, channels=3, num_classes=10):
  """Returns (images uint8 [count, height, width, channels], labels uint8 [count]) of any size, learnable the same
  way as make_digits: label k lights cell k of a 4x4 grid (each channel a little differently), over noise."""
  rng = np.random.RandomState(seed)
  labels = rng.randint(0, num_classes, size=count).astype(np.uint8)
  images = rng.randint(0, 60, size=(count, height, width, channels)).astype(np.uint8)
  cell_h, cell_w = max(1, height // 4), max(1, width // 4)
  for i, label in enumerate(labels):
    row, col = divmod(int(label) % 16, 4)
    for channel in range(channels):
      images[i, row * cell_h:(row + 1) * cell_h, col * cell_w:(col + 1) * cell_w, channel] = 255 - 40 * channel
  return images, labels


def write_cifar10_dir(directory, per_batch=40, test_count=40, seed=0):
  """Writes the six batches of CIFAR-10's binary layout (label byte, then the red, green, blue planes of 32x32)."""
  os.makedirs(directory, exist_ok=True)
  names = ['data_batch_%d.bin' % i for i in range(1, 6)] + ['test_batch.bin']
  for offset, name in enumerate(names):
    images, labels = make_images(test_count if name == 'test_batch.bin' else per_batch, seed + offset)
    planes = images.transpose(0, 3, 1, 2).reshape(len(labels), -1)
    with open(os.path.join(directory, name), 'wb') as f:
      f.write(np.concatenate([labels[:, None], planes], axis=1).astype(np.uint8).tobytes())
  return directory


def write_npz(path, train_count=120, test_count=40, shape=(28, 28), seed=0, label_column=False):
  """Writes x_train, y_train, x_test, y_test as Keras' datasets cache holds them (CIFAR's labels as [n, 1])."""
  height, width = shape[:2]
  channels = shape[2] if len(shape) == 3 else 1
  arrays = {}
  for part, count, offset in (('train', train_count, 0), ('test', test_count, 1)):
    images, labels = make_images(count, seed + offset, height, width, channels)
    arrays['x_' + part] = images if len(shape) == 3 else images[..., 0]
    arrays['y_' + part] = labels[:, None] if label_column else labels
  np.savez(path, **arrays)
  return arrays


def write_class_folders(directory, class_names=('cats', 'dogs', 'fish'), per_class=12, size=(20, 24), seed=0,
                        extension='.png'):
  """Writes one sub-folder of PNG (or JPEG) images per class, the class's block lit in each."""
  import tensorflow.compat.v1 as tf  # pylint: disable=g-import-not-at-top  # only this writer encodes images
  images, _ = make_images(len(class_names) * per_class, seed, size[0], size[1], 3, len(class_names))
  labels = np.repeat(np.arange(len(class_names)), per_class)
  with tf.Graph().as_default():
    pixels = tf.placeholder(tf.uint8, [size[0], size[1], 3])
    encoded = tf.image.encode_png(pixels) if extension == '.png' else tf.image.encode_jpeg(pixels, quality=95)
    with tf.Session() as session:
      for i, label in enumerate(labels):
        folder = os.path.join(directory, class_names[label])
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, 'img%03d%s' % (i, extension)), 'wb') as f:
          f.write(session.run(encoded, {pixels: _with_block(images[i], int(label))}))
  return directory


def _with_block(image, label):
  """`image` with only class `label`'s cell lit (make_images lit the cell of its own random label)."""
  image = np.minimum(image, 59).astype(np.uint8)
  height, width = image.shape[:2]
  cell_h, cell_w = max(1, height // 4), max(1, width // 4)
  row, col = divmod(label % 16, 4)
  image[row * cell_h:(row + 1) * cell_h, col * cell_w:(col + 1) * cell_w] = 255
  return image
