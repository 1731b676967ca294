"""Tiny, learnable stand-ins for MNIST: label k lights up a distinct 7x7 block (plus noise)."""
import gzip
import os

import numpy as np

from estimator_tpu import idx
from estimator_tpu import records


def make_digits(count, seed):
  """Returns (images uint8 [count, 28, 28], labels uint8 [count]); each class is separable by design."""
  rng = np.random.RandomState(seed)
  labels = rng.randint(0, 10, size=count).astype(np.uint8)
  images = rng.randint(0, 60, size=(count, 28, 28)).astype(np.uint8)
  for i, label in enumerate(labels):
    row, col = divmod(int(label), 4)
    images[i, 7 * row:7 * row + 7, 7 * col:7 * col + 7] = 255
  return images, labels


def write_idx_dir(directory, train_count=300, test_count=110, gzipped=True, seed=0):
  """Writes the four standard IDX files; returns the arrays written as a dict keyed like records.IDX_FILES."""
  os.makedirs(directory, exist_ok=True)
  train_images, train_labels = make_digits(train_count, seed)
  test_images, test_labels = make_digits(test_count, seed + 1)
  arrays = {'train_images': train_images, 'train_labels': train_labels,
            'test_images': test_images, 'test_labels': test_labels}
  for key, name in records.IDX_FILES.items():
    data = idx.to_bytes(arrays[key])
    path = os.path.join(directory, name + ('.gz' if gzipped else ''))
    with open(path, 'wb') as f:
      f.write(gzip.compress(data) if gzipped else data)
  return arrays
