"""What the programs do when things go wrong: cheap checks that fail early, and TensorFlow errors as UserErrors.

Checks run before any training starts, where they can:
  * `require_writable_dir`: the model (or data) directory can be created and written.
  * `check_checkpoint`: a checkpoint already in model_dir is readable and fits the model about to be trained.
    This cannot be left to the restore: TensorFlow 1.15 fails there, but TensorFlow 2.15 restores variables of
    the wrong shape without complaint and fails later somewhere inside the graph.

Errors that only show up while TensorFlow runs are translated by `TensorFlowErrors`, a context manager around
the estimator calls: damaged TFRecords, labels outside 0-9, NaN loss, permission problems, and checkpoint
restores that still fail. It recognises errors by type; the only TensorFlow text it relies on is the
"Restoring from checkpoint failed" prefix that tf.train.Saver gives restore errors in both TensorFlow versions.
"""
import logging as std_logging
import os

import tensorflow.compat.v1 as tf

from estimator_tpu import atomic_files
from estimator_tpu import input_pipeline
from estimator_tpu import model
from estimator_tpu import model_fn as model_fn_lib
from estimator_tpu import records
from estimator_tpu.errors import UserError

RESTORE_FAILED = 'Restoring from checkpoint failed'
# Parts of TensorFlow's error messages that say where an op was defined rather than what went wrong.
_LOCATION_LINES = ('Graph execution error', 'Detected at node', 'Node:', 'Original stack trace', '[[',
                   'Errors may have originated', 'Caused by op')
MAX_LISTED_PROBLEMS = 3


def essence(error):
  """The line of a TensorFlow error message that says what went wrong, without node names and stack traces."""
  message = getattr(error, 'message', None) or str(error)
  for line in message.splitlines():
    if line.strip() and not line[0].isspace() and not line.startswith(_LOCATION_LINES):
      return line.strip()
  return type(error).__name__


def require_writable_dir(path, flag_name):
  """Proves `path` writable by creating it if needed and writing and removing a small file; UserError if not.

  Run before anything slow, so that an unwritable --model_dir fails in a second rather than after a download
  or at the first checkpoint. Directories it had to create are removed again, so a run that fails later
  leaves nothing behind. On a Cloud TPU this proves that the VM may write; the TPU's service account writes
  checkpoints too and needs the same permission on the bucket.
  """
  created = _first_missing_ancestor(path)
  probe = atomic_files.temp_path(os.path.join(path, '.write-check'))
  try:
    tf.io.gfile.makedirs(path)
    with tf.io.gfile.GFile(probe, 'w') as f:
      f.write('ok')
    tf.io.gfile.remove(probe)
  except tf.errors.OpError as e:
    raise UserError('cannot write to --%s=%s (%s).' % (flag_name, path, essence(e)),
                    'pass a --%s that you may create and write (on a Cloud TPU: a gs:// path the TPU service '
                    'account may write, too).' % flag_name)
  finally:
    if created is not None and tf.io.gfile.isdir(created):
      tf.io.gfile.rmtree(created)


def _first_missing_ancestor(path):
  """Returns the outermost directory that creating `path` would create, or None if `path` exists."""
  if '://' not in path:
    path = os.path.abspath(path)
  missing = None
  while not tf.io.gfile.exists(path):
    parent = os.path.dirname(path.rstrip('/'))
    if parent == path or ('://' in path and '://' not in parent):
      break  # '/' or a bucket: never created, nor removed, here
    missing, path = path, parent
  return missing


def model_variables(model_fn):
  """Returns {name: shape} of every variable a TRAIN graph of `model_fn` saves (weights, optimizer slots, step)."""
  with tf.Graph().as_default():
    tf.train.create_global_step()
    features = {model_fn_lib.IMAGE_KEY: tf.zeros([1, model.NUM_PIXELS])}
    model_fn(features, tf.zeros([1], tf.int32), tf.estimator.ModeKeys.TRAIN, {'use_tpu': False, 'batch_size': 1})
    return {variable.op.name: variable.shape.as_list() for variable in tf.global_variables()}


def check_checkpoint(model_dir, model_fn):
  """Raises a UserError if model_dir's latest checkpoint cannot be read or was written by a different model.

  Extra variables in the checkpoint are fine (the restore ignores them); missing ones and other shapes are not.
  Reading every tensor also checks their CRCs: ~0.1 s for this model's 40 MB with Adam slots.
  """
  checkpoint = tf.train.latest_checkpoint(model_dir)
  if checkpoint is None:
    return
  expected = model_variables(model_fn)
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
                    _DIFFERENT_MODEL_FIX % model_dir)


_DIFFERENT_MODEL_FIX = ('pass a new --model_dir to train this model from scratch (or delete %s); to continue the '
                        'old training, run the code that wrote it.')


class StepTracker(tf.train.SessionRunHook):
  """Remembers the global step before and after the latest session.run, to name the step of a failure.

  Off TPU one session.run is one training step. On TPU it is one loop of --iterations steps, and the loss that
  the NaN check sees is the loss of the loop's last step, so a NaN is located to within one loop.
  """

  def __init__(self):
    self.before = None
    self.after = None
    self._global_step = None

  def begin(self):
    self._global_step = tf.train.get_global_step()

  def after_create_session(self, session, coord):
    self.after = int(session.run(self._global_step))

  def before_run(self, run_context):
    self.before = self.after

  def after_run(self, run_context, run_values):
    # Runs before Estimator's NanTensorHook, which is added after the hooks given to train().
    self.after = int(run_context.session.run(self._global_step))


class _DropRecordedErrorLogs(std_logging.Filter):
  """Drops TPUEstimator's "Error recorded from ..." log records.

  TPUEstimator logs every error of its training loop with the op's full creation stack, then re-raises it. A
  translated error then prints as one line; an untranslated one still ends in its full traceback.
  """

  def filter(self, record):
    return not str(record.msg).startswith('Error recorded from')


class TensorFlowErrors(object):
  """Context manager that turns TensorFlow errors a user can fix into UserErrors saying what to do.

      with failures.TensorFlowErrors(data_dir, model_dir) as guard:
        estimator.train(input_fn, max_steps=steps, hooks=guard.hooks)

  `guard.hooks` lets a NaN loss be reported with its step. Errors it does not know pass through unchanged.
  """

  def __init__(self, data_dir=None, model_dir=None):
    self.data_dir = data_dir
    self.model_dir = model_dir
    self.steps = StepTracker()
    self.hooks = [self.steps]
    self._log_filter = _DropRecordedErrorLogs()

  def __enter__(self):
    std_logging.getLogger('tensorflow').addFilter(self._log_filter)
    return self

  def __exit__(self, exc_type, exc, traceback):
    std_logging.getLogger('tensorflow').removeFilter(self._log_filter)
    user_error = self.translate(exc) if exc is not None else None
    if user_error is not None:
      raise user_error from exc
    return False

  def translate(self, error):
    """Returns the UserError for `error`, or None if it is not one a user can fix."""
    if isinstance(error, tf.train.NanLossDuringTrainingError):
      return self._nan_loss()
    message = getattr(error, 'message', None) or str(error)
    if isinstance(error, tf.errors.InvalidArgumentError) and input_pipeline.LABEL_RANGE_ERROR in message:
      return _label_error(message)
    if isinstance(error, (tf.errors.NotFoundError, tf.errors.InvalidArgumentError)) and RESTORE_FAILED in message:
      return self._restore_error(message)
    if isinstance(error, tf.errors.DataLossError):
      return self._data_loss(error)
    if isinstance(error, tf.errors.PermissionDeniedError):
      return UserError('permission denied: %s.' % essence(error).rstrip('.'),
                       'make --model_dir writable and --data_dir readable for this user (on a Cloud TPU, for the '
                       "TPU's service account as well).")
    return None

  def _nan_loss(self):
    # Where the NaN check comes from: Estimator adds NanTensorHook(loss) to every training run (TPUEstimator
    # included); it raises NanLossDuringTrainingError at the first NaN, and TPUEstimator re-raises it after its
    # error recorder. Off TPU it sees every step. On TPU it sees the loss TPUEstimator hands back per device loop
    # (the last step's), so a NaN is caught within --iterations steps; NaN weights keep the loss NaN from then on.
    # It checks for NaN only: a diverging but finite loss (TF 2.15 trains --learning_rate=1e30 to a loss of ~1e29,
    # where TF 1.15 reaches NaN) runs to the end.
    steps = self.steps
    if steps.after is None:
      where = 'during training'
    elif steps.before is None or steps.after - steps.before <= 1:
      where = 'at step %d' % steps.after
    else:
      where = 'in the training loop of steps %d-%d' % (steps.before + 1, steps.after)
    return UserError('the training loss became NaN %s; training stopped and the last checkpoint%s is kept.'
                     % (where, ' in %s' % self.model_dir if self.model_dir else ''),
                     'lower --learning_rate (the default is 1e-3) and train into a new --model_dir.')

  def _restore_error(self, message):
    original = message.split('Original error:', 1)[-1]
    return UserError('--model_dir=%s holds a checkpoint that does not fit this model (%s).'
                     % (self.model_dir, essence(original)), _DIFFERENT_MODEL_FIX % self.model_dir)

  def _data_loss(self, error):
    # Name the damaged file if it is one of the splits: reading them again is cheap, and only done on failure.
    if self.data_dir:
      for split in records.SPLITS:
        path = records.split_path(self.data_dir, split)
        if tf.io.gfile.exists(path):
          try:
            records.count_examples(path)
          except UserError as damaged:
            return damaged
    return UserError('a file could not be read intact (%s).' % essence(error),
                     'if it is a checkpoint in --model_dir, restore it from a copy or pass a new --model_dir; '
                     'if it is data, prepare it again with prepare_data.py.')


def _label_error(message):
  line = next(line for line in message.splitlines() if input_pipeline.LABEL_RANGE_ERROR in line)
  detail = line[line.index(input_pipeline.LABEL_RANGE_ERROR):]
  return UserError('%s.' % detail.replace(']', '').replace(' [', ' ').strip(),
                   'fix or drop the examples whose label is not a digit 0-9, then write the TFRecords again.')
