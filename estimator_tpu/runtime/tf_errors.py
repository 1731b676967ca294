"""TensorFlow errors a user can fix, as UserErrors that say what to do.

Errors that only show up while TensorFlow runs are translated by `TensorFlowErrors`, a context manager around
the estimator calls: damaged TFRecords, labels outside the classes, NaN loss, permission problems, a full disk,
Cloud Storage failing during a run, and checkpoint restores that still fail. It recognises errors by type; the only
text it relies on is the "Restoring from checkpoint failed" prefix that tf.train.Saver gives restore errors in
both TensorFlow versions, and the operating system's own words for a full disk (DISK_FULL_MARKERS).
(Checks that can run before training, and so fail earlier, are in preflight.py and checkpoints.py.)
"""
import logging as std_logging

import tensorflow.compat.v1 as tf

from estimator_tpu.data import records
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime import storage
from estimator_tpu.runtime.checkpoints import DIFFERENT_MODEL_FIX
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

RESTORE_FAILED = 'Restoring from checkpoint failed'
# What the OS says when a write finds no room (ENOSPC, EDQUOT) or passes the file-size limit (EFBIG); TensorFlow
# keeps the OS's text in its error message (a ResourceExhaustedError for ENOSPC, with a hint about GPU memory that
# does not apply), Python in its OSError.
DISK_FULL_MARKERS = ('No space left on device', 'Disk quota exceeded', 'File too large')


def disk_full_error(error, where, then):
  """The UserError for a write that found the disk full, or None if `error` is something else.

  `where` names the flag and path that chose the disk (--model_dir=...), `then` what to do once there is room.
  """
  message = getattr(error, 'message', None) or str(error)
  if not isinstance(error, (tf.errors.OpError, OSError)) or not any(marker in message for marker in DISK_FULL_MARKERS):
    return None
  reason = next(marker for marker in DISK_FULL_MARKERS if marker in message)
  return UserError('the disk of %s is full: a write failed (%s).' % (where, reason),
                   'free space on it, or pass a %s on a disk with room; then %s.' % (where.split('=')[0], then))


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

      with tf_errors.TensorFlowErrors(data_dir, model_dir) as guard:
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
    if isinstance(error, tf.errors.InvalidArgumentError) and records.LABEL_RANGE_ERROR in message:
      return _label_error(message)
    if isinstance(error, (tf.errors.NotFoundError, tf.errors.InvalidArgumentError)) and RESTORE_FAILED in message:
      return self._restore_error(message)
    if isinstance(error, tf.errors.DataLossError):
      return self._data_loss(error)
    full = self._disk_full(error, message)
    if full is not None:
      return full
    if storage.user_error(error) is not None:  # a gs:// object deleted, access revoked, storage gone mid-run
      return storage.user_error(error)
    if isinstance(error, tf.errors.PermissionDeniedError):
      return UserError('permission denied: %s.' % essence(error).rstrip('.'),
                       'make --model_dir writable and --data_dir readable for this user (on a Cloud TPU, for the '
                       "TPU's service account as well).")
    return None

  def _disk_full(self, error, message):
    """Disk full in --model_dir (checkpoints, events) or in --data_dir (preparing data): the one whose path the
    message names, else --model_dir if there is one."""
    in_model_dir = self.model_dir and (self.model_dir in message or not (self.data_dir and self.data_dir in message))
    if in_model_dir:
      full = disk_full_error(error, '--model_dir=%s' % self.model_dir,
                             'run the same command again: training resumes from the last complete checkpoint')
      if full is not None:
        checkpoints.remove_checkpoint_staging(self.model_dir)
      return full
    if self.data_dir:
      return disk_full_error(error, '--data_dir=%s' % self.data_dir,
                             'run the same command again (no split was published half-written)')
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
                     % (self.model_dir, essence(original)), DIFFERENT_MODEL_FIX % self.model_dir)

  def _data_loss(self, error):
    # Name the damaged file if it is one of the splits: reading them again is cheap, and only done on failure.
    if self.data_dir:
      for split in records.SPLITS:
        path = records.split_path(self.data_dir, split)
        if records.split_exists(path):
          try:
            records.count_examples(path)
          except UserError as damaged:
            return damaged
    return UserError('a file could not be read intact (%s).' % essence(error),
                     'if it is a checkpoint in --model_dir, restore it from a copy or pass a new --model_dir; '
                     'if it is data, prepare it again with `python -m tools.prepare_data`.')


def _label_error(message):
  line = next(line for line in message.splitlines() if records.LABEL_RANGE_ERROR in line)
  detail = line[line.index(records.LABEL_RANGE_ERROR):]
  return UserError('%s.' % detail.replace(']', '').replace(' [', ' ').strip(),
                   'fix or drop the examples whose label is not a class id of the data (0-9 for MNIST), then write '
                   'the TFRecords again.')
