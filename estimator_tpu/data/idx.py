"""Reading and writing IDX files, the format MNIST (and its drop-in replacements) ship in.

An IDX file is a big-endian header -- two zero bytes, a type byte (0x08 = uint8), the number of dimensions --
then one uint32 per dimension, then the data. Images are (count, height, width) -- (count, 28, 28) for MNIST and its
drop-in replacements such as Fashion-MNIST, any size otherwise -- and labels (count,).
"""
import gzip
import struct

import numpy as np

from estimator_tpu.runtime.errors import UserError

UINT8_TYPE = 0x08
IMAGE_MAGIC = 0x00000803  # uint8, 3 dimensions
LABEL_MAGIC = 0x00000801  # uint8, 1 dimension
GZIP_MAGIC = b'\x1f\x8b'


def read_bytes(path, open_fn=open):
  """Returns the file's content, decompressed when it is named *.gz or starts with the gzip magic."""
  with open_fn(path, 'rb') as f:
    raw = f.read()
  if path.endswith('.gz') and not raw.startswith(GZIP_MAGIC):
    raise UserError('%s is named .gz but is not gzip data.' % path,
                    'download the file again, or remove the .gz suffix if it is an uncompressed IDX file.')
  if raw.startswith(GZIP_MAGIC):
    try:
      return gzip.decompress(raw)
    except (OSError, EOFError) as e:
      raise UserError('%s is a damaged gzip file (%s).' % (path, e), 'download the file again.')
  return raw


def parse(data, expected_magic, name):
  """Parses IDX bytes into a uint8 array, checking magic number, dimensions and size against the data length."""
  if len(data) < 4:
    raise UserError('%s is too short to be an IDX file (%d bytes).' % (name, len(data)),
                    'download the file again.')
  magic, = struct.unpack('>I', data[:4])
  if magic != expected_magic:
    raise UserError('%s has magic number 0x%08x, expected 0x%08x (%s).'
                    % (name, magic, expected_magic, 'images' if expected_magic == IMAGE_MAGIC else 'labels'),
                    'check that the images and labels files are not swapped and are IDX files.')
  ndim = magic & 0xff
  header_size = 4 + 4 * ndim
  if len(data) < header_size:
    raise UserError('%s is truncated inside its header.' % name, 'download the file again.')
  shape = struct.unpack('>%dI' % ndim, data[4:header_size])
  expected = header_size + int(np.prod(shape))
  if len(data) != expected:
    raise UserError('%s holds %d bytes but its header %s promises %d (truncated or padded).'
                    % (name, len(data), list(shape), expected), 'download the file again.')
  return np.frombuffer(data, dtype=np.uint8, offset=header_size).reshape(shape)


def read_images(path, open_fn=open):
  """Returns uint8 images (count, height, width) from an IDX images file (gzipped or not)."""
  images = parse(read_bytes(path, open_fn), IMAGE_MAGIC, path)
  if 0 in images.shape[1:]:
    raise UserError('%s holds images of %dx%d pixels.' % ((path,) + images.shape[1:]),
                    'write images of at least one pixel.')
  return images


def read_labels(path, open_fn=open, num_classes=10):
  """Returns uint8 labels (count,) from an IDX labels file, checking that each is a class id 0 to num_classes-1."""
  labels = parse(read_bytes(path, open_fn), LABEL_MAGIC, path)
  last = num_classes - 1
  if labels.size and labels.max() > last:
    bad = int(np.argmax(labels > last))
    raise UserError('%s has label %d at index %d; labels must be 0-%d.' % (path, labels[bad], bad, last),
                    'fix or drop the examples with labels outside 0-%d, or pass --num_classes=N for N classes.'
                    % last)
  return labels


def to_bytes(array):
  """Serialises a uint8 array as IDX (the inverse of `parse`)."""
  array = np.asarray(array)
  if array.dtype != np.uint8:
    raise ValueError('IDX writer takes uint8 arrays, got %s' % array.dtype)
  header = struct.pack('>BBBB', 0, 0, UINT8_TYPE, array.ndim) + struct.pack('>%dI' % array.ndim, *array.shape)
  return header + array.tobytes()
