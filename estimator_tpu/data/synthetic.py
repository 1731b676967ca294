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
