"""What a prepared dataset holds, written beside its TFRecords: `<data_dir>/dataset.json`.

Image height, width and channels, the number of classes and their names, and how many examples each split has.
Data preparation writes it (every source, MNIST included); the input_fns, the networks, the serving signature and
the readiness check read it, so nothing else in the code fixes the images at 28x28x1 or the classes at 10.

A data directory prepared before this file existed has none: it reads as MNIST, which is all such a directory can
hold (records.check_example still checks its first example against that shape).
"""
import collections
import json
import os

import tensorflow.compat.v1 as tf

from estimator_tpu.runtime import atomic_files
from estimator_tpu.runtime.errors import UserError

FILENAME = 'dataset.json'
FORMAT_VERSION = 1
MAX_SIDE = 4096  # pixels; a bigger side is a mistake in the file, not an image a TPU network takes
MAX_CHANNELS = 4


class DataSpec(collections.namedtuple('DataSpec', ['name', 'height', 'width', 'channels', 'class_names',
                                                   'counts', 'shards'], defaults=({},))):
  """A dataset's images (uint8 height x width x channels) and classes; `counts` maps split -> examples (or {});
  `shards` maps split -> number of files for the splits written in more than one (records.split_files), and is
  empty for a directory whose every split is one file (MNIST's, and every directory prepared before shards)."""

  @property
  def num_classes(self):
    return len(self.class_names)

  @property
  def num_pixels(self):
    """Bytes of one image in `image_raw`: height * width * channels."""
    return self.height * self.width * self.channels

  @property
  def image_shape(self):
    """[height, width, channels]: what the networks reshape the flat pixels to."""
    return [self.height, self.width, self.channels]

  @property
  def serving_shape(self):
    """One image as the serving signature takes it: [height, width] for one channel (MNIST's), else with it."""
    return self.image_shape if self.channels > 1 else [self.height, self.width]

  def describe(self):
    return '%s: %dx%dx%d images, %d classes' % (self.name, self.height, self.width, self.channels, self.num_classes)


MNIST = DataSpec('mnist', 28, 28, 1, tuple(str(digit) for digit in range(10)), {})


def path_of(data_dir):
  return os.path.join(data_dir, FILENAME)


def to_json(spec):
  fields = {'format_version': FORMAT_VERSION, 'name': spec.name, 'height': spec.height, 'width': spec.width,
            'channels': spec.channels, 'class_names': list(spec.class_names), 'counts': dict(spec.counts)}
  if spec.shards:  # only then: a directory of one file per split keeps the file it always had
    fields['shards'] = dict(spec.shards)
  return json.dumps(fields, indent=2, sort_keys=True) + '\n'


def write(data_dir, spec):
  """Writes `spec` as <data_dir>/dataset.json, whole or not at all (atomic_files)."""
  check(spec, path_of(data_dir))
  atomic_files.write_text(path_of(data_dir), to_json(spec))


def read(data_dir):
  """The DataSpec of data_dir: from its dataset.json, or MNIST when it has none (prepared before the file existed).

  A file that is there but cannot be used is one UserError naming it.
  """
  path = path_of(data_dir)
  if not tf.io.gfile.exists(path):
    return MNIST
  with tf.io.gfile.GFile(path, 'r') as f:
    text = f.read()
  try:
    fields = json.loads(text)
    spec = DataSpec(str(fields['name']), fields['height'], fields['width'], fields['channels'],
                    tuple(str(name) for name in fields['class_names']),
                    {str(split): count for split, count in fields.get('counts', {}).items()},
                    {str(split): count for split, count in fields.get('shards', {}).items()})
  except (ValueError, KeyError, TypeError, AttributeError) as e:
    raise UserError('%s is not a dataset description (%s: %s).' % (path, type(e).__name__, e), _fix(data_dir))
  check(spec, path)
  return spec


def check(spec, path):
  """Raises a UserError naming `path` unless the shape and classes are ones a network can take."""
  problems = []
  for field in ('height', 'width'):
    value = getattr(spec, field)
    if not isinstance(value, int) or not 1 <= value <= MAX_SIDE:
      problems.append('%s %r is not 1-%d' % (field, value, MAX_SIDE))
  if not isinstance(spec.channels, int) or not 1 <= spec.channels <= MAX_CHANNELS:
    problems.append('channels %r is not 1-%d' % (spec.channels, MAX_CHANNELS))
  if spec.num_classes < 2:
    problems.append('%d class name(s); a classifier needs at least 2' % spec.num_classes)
  for split, count in sorted(spec.shards.items()):
    if not isinstance(count, int) or count < 1:
      problems.append('%s has %r shard files, not a count of 1 or more' % (split, count))
  if problems:
    raise UserError('%s describes no usable dataset: %s.' % (path, '; '.join(problems)),
                    _fix(os.path.dirname(path)))


def _fix(data_dir):
  return ('prepare the data again (python -m tools.prepare_data --data_dir=%s with its --source), which writes '
          'the file; delete it only if the directory holds MNIST.' % data_dir)
