"""Model directories and checkpoints: where a run keeps its model, finding the checkpoint a user means, warm
starts, and refusing a checkpoint that does not fit the model before training.

`check_checkpoint` cannot be left to the restore: TensorFlow 1.15 fails there, but TensorFlow 2.15 restores
variables of the wrong shape without complaint and fails later somewhere inside the graph.
"""
import datetime
import os
import tempfile

import tensorflow.compat.v1 as tf
from absl import logging

from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

MAX_LISTED_PROBLEMS = 3
# Where tf.train.Checkpoint keeps the graph of the objects it saved (TF 1.15 and 2.15 alike).
OBJECT_GRAPH_KEY = '_CHECKPOINTABLE_OBJECT_GRAPH'
DIFFERENT_MODEL_FIX = ('pass a new --model_dir to train this model from scratch (or delete %s); to continue the '
                       'old training, run the code that wrote it.')


def default_model_dir(program):
  """A new directory under the system temp dir, for local runs that name no --model_dir."""
  stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
  return os.path.join(tempfile.gettempdir(), 'estimator_tpu', '%s-%s' % (program, stamp))


def resolve_model_dir(model_dir, checkpoint_path, program):
  """`model_dir`; else the directory of `checkpoint_path` (eval events go next to it); else a new temp dir."""
  if model_dir:
    return model_dir
  if checkpoint_path:
    return checkpoint_path if tf.io.gfile.isdir(checkpoint_path) else os.path.dirname(checkpoint_path)
  return default_model_dir(program)


def find_model_checkpoint(checkpoint_path, model_dir):
  """The checkpoint evaluate/predict/export use: --checkpoint_path, else the latest in the model directory."""
  if checkpoint_path:
    return find_checkpoint(checkpoint_path, '--checkpoint_path')
  return find_checkpoint(model_dir, '--model_dir')


def warm_start_checkpoint(warm_start_from, model_dir):
  """The checkpoint to warm-start from, or None; says so when model_dir's own checkpoint takes precedence."""
  if not warm_start_from:
    return None
  source = find_checkpoint(warm_start_from, '--warm_start_from')
  own = latest_checkpoint(model_dir)
  if own:
    logging.warning('--warm_start_from is ignored: %s already has a checkpoint (%s), which training continues from.',
                    model_dir, own)
    return None
  logging.info('Warm-starting the trainable variables from %s.', source)
  return source


def latest_checkpoint(model_dir):
  """The newest checkpoint in `model_dir`, or None (also when the directory does not exist yet)."""
  return tf.train.latest_checkpoint(model_dir) if tf.io.gfile.isdir(model_dir) else None


def find_checkpoint(path, flag_name):
  """Returns the checkpoint prefix for `path` (a directory or a prefix like .../model.ckpt-2000).

  Raises a UserError that names `flag_name` when there is none, instead of letting Estimator fail later (or, in
  predict, silently use freshly initialised weights).
  """
  if tf.io.gfile.isdir(path):
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
      raise UserError('%s=%s holds no checkpoint.' % (flag_name, path),
                      'train first (--mode=train with this --model_dir), or point %s at a model directory or '
                      'checkpoint that exists.' % flag_name)
    return latest
  if tf.io.gfile.exists(path + '.index'):
    return path
  raise UserError('%s=%s is neither a model directory nor a checkpoint (no %s.index).' % (flag_name, path, path),
                  'pass a model directory (its latest checkpoint is used) or a checkpoint prefix such as '
                  'DIR/model.ckpt-2000.')


def is_object_checkpoint(checkpoint):
  """True for a checkpoint tf.train.Checkpoint wrote (the Keras route, keras/checkpoints.py), which stores the
  graph of the objects it saved under OBJECT_GRAPH_KEY; False for a tf.train.Saver one (the Estimator routes),
  which stores variables by name only."""
  return tf.train.NewCheckpointReader(checkpoint).has_tensor(OBJECT_GRAPH_KEY)


def require_own_route(model_dir, keras_route):
  """Refuses, before anything is written, a model_dir whose latest checkpoint the other kind of route wrote.

  The two kinds cannot read each other's checkpoints: the Estimator routes restore variables by name and would
  report them all missing; the Keras route's tf.train.Checkpoint restores nothing from a name-based checkpoint,
  silently starts from step 0, and its first save repoints the folder's `checkpoint` index at its own files, so
  the Estimator run that owned the folder no longer finds its checkpoint.
  """
  latest = latest_checkpoint(model_dir)
  if latest is None:
    return
  try:
    keras_checkpoint = is_object_checkpoint(latest)
  except tf.errors.OpError:
    return  # unreadable: check_checkpoint (and the restore) say so
  if keras_route and not keras_checkpoint:
    raise UserError('--model_dir=%s holds a checkpoint of mnist.py/mnist_tpu.py (%s, variables saved by name), '
                    'which mnist_keras.py cannot continue from.' % (model_dir, os.path.basename(latest)),
                    'pass a new --model_dir to train with mnist_keras.py, or continue that training with '
                    'mnist_tpu.py (or mnist.py).')
  if keras_checkpoint and not keras_route:
    raise UserError('--model_dir=%s holds an object-based checkpoint (%s), as mnist_keras.py writes, which the '
                    'Estimator routes cannot continue from.' % (model_dir, os.path.basename(latest)),
                    'pass a new --model_dir, or continue that training with mnist_keras.py.')


def checkpoint_step(checkpoint):
  """The global step stored in a checkpoint."""
  return int(tf.train.load_variable(checkpoint, tf.GraphKeys.GLOBAL_STEP))


def check_checkpoint(model_dir, expected_variables):
  """Raises a UserError if model_dir's latest checkpoint cannot be read or was written by a different model.

  `expected_variables()` returns {name: shape} of what the model saves; it is only called when there is a
  checkpoint. Extra variables in the checkpoint are fine (the restore ignores them); missing ones and other shapes
  are not. Reading every tensor also checks their CRCs: ~0.1 s for this model's 40 MB with Adam slots.
  """
  checkpoint = tf.train.latest_checkpoint(model_dir)
  if checkpoint is None:
    return
  expected = expected_variables()
  try:
    reader = tf.train.NewCheckpointReader(checkpoint)
    stored = reader.get_variable_to_shape_map()
    for name in sorted(set(expected) & set(stored)):
      reader.get_tensor(name)
  except tf.errors.OpError as e:
    raise UserError('cannot read the checkpoint %s (%s).' % (checkpoint, essence(e)),
                    'restore --model_dir=%s from a good copy, or pass a new --model_dir to train from scratch.'
                    % model_dir)
  problems = []
  for name, shape in sorted(expected.items()):
    if name not in stored:
      problems.append('%s is missing' % name)
    elif list(stored[name]) != shape:
      problems.append('%s has shape %s there but %s here' % (name, list(stored[name]), shape))
  if problems:
    more = len(problems) - MAX_LISTED_PROBLEMS
    raise UserError('--model_dir=%s holds a checkpoint of a different model (%s): %s%s.'
                    % (model_dir, os.path.basename(checkpoint), '; '.join(problems[:MAX_LISTED_PROBLEMS]),
                       ' and %d more' % more if more > 0 else ''),
                    DIFFERENT_MODEL_FIX % model_dir)


def remove_checkpoint_staging(model_dir):
  """Removes what a checkpoint save that failed part-way left in model_dir: TensorFlow writes a checkpoint's data
  into `<prefix>_temp...` (TF 1.15: `_temp_<id>`) and renames it when complete, so a staging folder is never read,
  but a failed save leaves it taking space. Only for a run that owns model_dir (no other writer there)."""
  staged = tf.io.gfile.glob(os.path.join(model_dir, '*.ckpt-*_temp*'))
  for path in staged:
    if tf.io.gfile.isdir(path):
      tf.io.gfile.rmtree(path)
    else:
      tf.io.gfile.remove(path)
  return staged
