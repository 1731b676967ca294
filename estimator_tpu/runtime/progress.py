"""Progress lines: what a user reads while a run trains and evaluates, the same for every route.

Training logs one line per interval -- step/total, loss, examples/s, elapsed time and the time left:

  step 400/2000  loss 0.0613  3390 examples/s  elapsed 0:00:16  ETA 0:01:01

A hook sees one session.run at a time: one step off TPU, one loop of --iterations steps on a TPU, where the host
only sees loop boundaries. So the interval is CPU_EVERY_STEPS off TPU and one loop on a TPU (the caller passes
every_steps=iterations), and the loss is that of the last step the session.run ran. Evaluation logs the batches
done about every quarter of the way. `TrainingMeter` and `EvaluationMeter` decide when and what to log; the session
hooks (Estimator, TPUEstimator) and the Keras callbacks (mnist_keras.py) only feed them.
"""
import logging as std_logging
import sys
import time

import tensorflow.compat.v1 as tf
from absl import logging

CPU_EVERY_STEPS = 100
EVALUATION_LINES = 4  # about one line per quarter of the evaluation
# The first line comes this soon even when the first interval takes longer (a slow CPU, a big batch): a user sees
# within seconds that training runs, and how fast.
FIRST_LINE_SECONDS = 5.0
# On a terminal a live line (the same fields) is redrawn in place at most this often between the logged lines.
LIVE_EVERY_SECONDS = 0.5
CLEAR_LINE = '\r\033[K'


def every_steps(log_every_steps, use_tpu=False, iterations=None):
  """The training progress interval: --log_every_steps, else one loop on a TPU and CPU_EVERY_STEPS off it."""
  if log_every_steps:
    return log_every_steps
  return iterations if use_tpu else CPU_EVERY_STEPS


def clock_text(seconds):
  """0:00:16 for 16 s, 1:02:03 for 3723 s."""
  seconds = int(round(max(seconds, 0)))
  return '%d:%02d:%02d' % (seconds // 3600, seconds // 60 % 60, seconds % 60)


def training_line(step, total, loss, examples_per_sec, elapsed, remaining):
  if loss is None:
    loss_text = 'loss n/a'
  else:
    loss_text = 'loss %.4f' % loss if abs(loss) >= 1e-3 else 'loss %.1e' % loss
  return 'step %d/%d  %s  %.0f examples/s  elapsed %s  ETA %s' % (
      step, total, loss_text, examples_per_sec, clock_text(elapsed), clock_text(remaining))


class LiveLine(object):
  """One line redrawn in place on a terminal. Any log record erases it first (a filter on the handlers of the root
  logger, where absl's and TensorFlow's records are written), so a logged line never lands behind it."""

  def __init__(self, stream, handlers=None):
    self._stream = stream
    self._shown = False
    for handler in std_logging.getLogger().handlers if handlers is None else handlers:
      handler.addFilter(self)

  def show(self, text):
    self._stream.write(CLEAR_LINE + text)
    self._stream.flush()
    self._shown = True

  def erase(self):
    if self._shown:
      self._stream.write(CLEAR_LINE)
      self._stream.flush()
      self._shown = False

  def filter(self, record):  # the logging.Filter protocol: erase, and let the record through
    del record
    self.erase()
    return True


def terminal(stream=None, handlers=None):
  """A LiveLine on the stream the log goes to (stderr) if a person watches it on a terminal, else None: a file or
  a pipe gets the logged lines only."""
  stream = stream or sys.stderr
  isatty = getattr(stream, 'isatty', None)
  return LiveLine(stream, handlers) if isatty is not None and isatty() else None


def next_multiple(step, every):
  return (step // every + 1) * every


class TrainingMeter(object):
  """Logs a training line whenever the step passes a multiple of `every_steps`, and once at `total_steps`.

  The step may pass the total: in an asynchronous cluster the other tasks keep the global step moving.
  """

  def __init__(self, total_steps, batch_size, every_steps=CPU_EVERY_STEPS, clock=time.time, log=logging.info,
               live=None):
    self.total_steps = total_steps
    self.batch_size = batch_size
    self.every_steps = max(1, every_steps)
    self._clock = clock
    self._log = log
    self._live = live  # a LiveLine on a terminal, or None (a log file, a pipe)
    self._live_time = None
    self._start_time = self._last_time = None
    self._last_step = self._next_step = None
    self._logged = False
    self._finished = False

  def start(self, step):
    self._start_time = self._last_time = self._live_time = self._clock()
    self._last_step = step
    self._next_step = next_multiple(step, self.every_steps)

  def update(self, step, loss):
    """Called after each session.run (or Keras execution) with the global step reached and the latest loss."""
    now = self._clock()
    if not self._due(step, now):
      self._redraw(step, loss, now)
      return
    self._erase_live()
    self._log('%s', self._line(step, loss, now))
    self._last_time, self._last_step = now, step
    self._next_step = next_multiple(step, self.every_steps)
    self._logged = True
    self._finished = step >= self.total_steps

  def _line(self, step, loss, now):
    steps_per_sec = (step - self._last_step) / max(now - self._last_time, 1e-9)
    remaining = max(self.total_steps - step, 0) / steps_per_sec if steps_per_sec > 0 else 0.0
    return training_line(step, self.total_steps, loss, steps_per_sec * self.batch_size, now - self._start_time,
                         remaining)

  def _due(self, step, now):
    if step >= self.total_steps:
      return not self._finished  # one line at the end, however far past it the step goes
    return step >= self._next_step or (not self._logged and now - self._start_time >= FIRST_LINE_SECONDS)

  def _redraw(self, step, loss, now):
    """On a terminal: the live line, in place, between the logged ones (like Keras' progress bar)."""
    if self._live is None or self._finished or step <= self._last_step or now - self._live_time < LIVE_EVERY_SECONDS:
      return
    self._live.show(self._line(step, loss, now))
    self._live_time = now

  def _erase_live(self):
    if self._live is not None:
      self._live.erase()


class EvaluationMeter(object):
  """Logs `batches done/total` about every quarter of an evaluation of `total_batches` batches."""

  def __init__(self, total_batches, name='evaluation', log=logging.info):
    self.total_batches = total_batches
    self.name = name
    self._every = max(1, -(-total_batches // EVALUATION_LINES))
    self._log = log
    self._next = self._every

  def update(self, batches_done):
    if batches_done < self._next and batches_done < self.total_batches:
      return
    self._log('%s: evaluated %d/%d batches', self.name, batches_done, self.total_batches)
    self._next = next_multiple(batches_done, self._every)


def training_loss_tensor():
  """The loss Estimator trains on: it adds EstimatorSpec.loss to GraphKeys.LOSSES last, just before the hooks
  begin (Estimator._train_with_estimator_spec, TF 1.15 and 2.15). On a TPU that is the loss TPUEstimator returns
  from the device loop, the loss of the loop's last step; the model_fn's own loss tensor lives inside the loop and
  cannot be fetched."""
  losses = tf.get_collection(tf.GraphKeys.LOSSES)
  return losses[-1] if losses else None


class TrainingProgress(tf.train.SessionRunHook):
  """Session hook for Estimator.train / TPUEstimator.train: feeds a TrainingMeter after every session.run."""

  def __init__(self, total_steps, batch_size, every_steps=CPU_EVERY_STEPS, clock=time.time):
    self.meter = TrainingMeter(total_steps, batch_size, every_steps, clock, live=terminal())
    self._global_step = None
    self._loss = None

  def begin(self):
    self._global_step = tf.train.get_global_step()
    self._loss = training_loss_tensor()

  def after_create_session(self, session, coord):
    self.meter.start(int(session.run(self._global_step)))

  def before_run(self, run_context):
    return tf.train.SessionRunArgs(self._loss) if self._loss is not None else None

  def after_run(self, run_context, run_values):
    # Read after the run, so that the step is the one reached (a fetch next to the train op could be either).
    step = int(run_context.session.run(self._global_step))
    self.meter.update(step, None if self._loss is None else float(run_values.results))


class EvaluationProgress(tf.train.SessionRunHook):
  """Session hook for Estimator.evaluate / TPUEstimator.evaluate: feeds an EvaluationMeter the batches done.

  It reads Estimator's eval step counter (GraphKeys.EVAL_STEP), which counts batches on CPU and on TPU alike; on a
  TPU one session.run evaluates a loop of batches.
  """

  def __init__(self, total_batches, name='evaluation'):
    self.meter = EvaluationMeter(total_batches, name)
    self._eval_step = None
    self._runs = 0

  def begin(self):
    counters = tf.get_collection(tf.GraphKeys.EVAL_STEP)
    self._eval_step = counters[0] if counters else None

  def after_run(self, run_context, run_values):
    self._runs += 1
    done = self._runs if self._eval_step is None else int(run_context.session.run(self._eval_step))
    self.meter.update(done)


class KerasTrainingProgress(tf.keras.callbacks.Callback):
  """Keras counterpart of TrainingProgress (mnist_keras.py, TF 2).

  With steps_per_execution > 1 Keras calls on_train_batch_end once per execution, as a TPU loop. Its 'loss' is the
  mean since the start of fit(), the value Keras' own progress bar shows, not the last batch's.
  """

  def __init__(self, total_steps, batch_size, every_steps=CPU_EVERY_STEPS):
    super(KerasTrainingProgress, self).__init__()
    self.meter = TrainingMeter(total_steps, batch_size, every_steps, live=terminal())

  def _step(self):
    return int(self.model.optimizer.iterations.numpy())

  def on_train_begin(self, logs=None):
    self.meter.start(self._step())

  def on_train_batch_end(self, batch, logs=None):
    loss = (logs or {}).get('loss')
    self.meter.update(self._step(), None if loss is None else float(loss))


class KerasEvaluationProgress(tf.keras.callbacks.Callback):
  """Keras counterpart of EvaluationProgress: `batch` is the index of the last batch evaluated so far."""

  def __init__(self, total_batches, name='evaluation'):
    super(KerasEvaluationProgress, self).__init__()
    self.meter = EvaluationMeter(total_batches, name)

  def on_test_batch_end(self, batch, logs=None):
    self.meter.update(batch + 1)
