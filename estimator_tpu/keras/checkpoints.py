"""TPU rule 12 (checkpoints): TPUEstimator checkpointed and restored by itself; with Keras the
program does.

The optimiser's step counter plays the global step: checkpoints are named by it, and a rerun
restores it, so --train_steps is a total like TPUEstimator's max_steps.
"""
import tensorflow as tf

from estimator_tpu.runtime.checkpoints import DIFFERENT_MODEL_FIX
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

KEEP_CHECKPOINT_MAX = 5


def build_checkpoint_manager(model, model_dir):
  """Checkpoints of the model and its optimiser (whose step counter is the TF2 global step) in
  model_dir.

  TPUEstimator checkpointed and restored by itself; with Keras the program does it.
  """
  checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
  return tf.train.CheckpointManager(checkpoint, model_dir, max_to_keep=KEEP_CHECKPOINT_MAX)


def restore(manager):
  """Restores the latest checkpoint, if any, into the model and its optimiser; a checkpoint of
  another model (other layers or shapes) is a UserError before anything is written, not a chain
  of tracebacks mid-restore. assert_existing_objects_matched: every object the checkpoint holds
  must find its variable, of the same shape; else a partial match would restore silently.
  """
  latest = manager.latest_checkpoint
  if latest is None:
    return
  try:
    manager.checkpoint.restore(latest).assert_existing_objects_matched()
  except (AssertionError, ValueError, tf.errors.OpError) as e:
    raise UserError('--model_dir=%s holds a checkpoint of a different model (%s): %s'
                    % (manager.directory, latest.rsplit('/', 1)[-1], essence(e)),
                    DIFFERENT_MODEL_FIX % manager.directory)


def latest_step(model_dir):
  """The step of the newest checkpoint in model_dir (0 if none): checkpoints are named ckpt-<step>
  (below)."""
  latest = tf.train.latest_checkpoint(model_dir)
  return int(latest.rsplit('-', 1)[1]) if latest else 0


class SaveCheckpoints(tf.keras.callbacks.Callback):
  """Saves through a CheckpointManager every `every_steps` steps and at the end, named by the step.

  With steps_per_execution > 1 Keras calls on_train_batch_end once per execution, so -- as with
  TPUEstimator's iterations_per_loop -- a checkpoint can only fall on those boundaries.
  """

  def __init__(self, manager, every_steps):
    super(SaveCheckpoints, self).__init__()
    self._manager = manager
    self._every_steps = every_steps
    self._last_saved = None

  @property
  def manager(self):
    return self._manager

  @property
  def every_steps(self):
    return self._every_steps

  def _save_if(self, due):
    step = int(self.model.optimizer.iterations.numpy())
    if due(step - self._last_saved):
      self._manager.save(checkpoint_number=step)
      self._last_saved = step

  def on_train_begin(self, logs=None):
    self._last_saved = int(self.model.optimizer.iterations.numpy())

  def on_train_batch_end(self, batch, logs=None):
    self._save_if(lambda unsaved_steps: unsaved_steps >= self._every_steps)

  def on_train_end(self, logs=None):
    self._save_if(lambda unsaved_steps: unsaved_steps > 0)
