"""Finding the checkpoint a user means: a model directory (its latest checkpoint) or one checkpoint prefix."""
import tensorflow.compat.v1 as tf

from estimator_tpu.errors import UserError


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


def checkpoint_step(checkpoint):
  """The global step stored in a checkpoint."""
  return int(tf.train.load_variable(checkpoint, tf.GraphKeys.GLOBAL_STEP))
