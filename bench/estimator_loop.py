"""P1's numerator: examples/s of mnist_tpu.py's own training path (TPUEstimator with use_tpu=False).

A SessionRunHook stamps the end of every session.run. On CPU TPUEstimator runs one step per session.run (the
iterations_per_loop device loop exists only on TPU), which the hook checks through the global step.
"""
import tensorflow.compat.v1 as tf

from bench import timing


class StepClockHook(tf.train.SessionRunHook):
  """Records (timing.Stamp, global step before the run) after every training session.run."""

  def __init__(self):
    self.stamps = []
    self._global_step = None

  def begin(self):
    self._global_step = tf.train.get_global_step()

  def before_run(self, run_context):
    return tf.train.SessionRunArgs(self._global_step)

  def after_run(self, run_context, run_values):
    self.stamps.append((timing.now(), run_values.results))


def train_rate(estimator, input_fn, batch_size, warmup_steps, measure_steps):
  """Runs estimator.train for warmup_steps + measure_steps more steps; returns the timed timing.Window.

  The clock starts when step `warmup_steps` of this call has finished (as in session_loop.train_rate) and stops
  after the last step, before the final checkpoint; checkpoints, summaries and logging inside the window count,
  because they are part of the path being measured.
  """
  clock = StepClockHook()
  estimator.train(input_fn, steps=warmup_steps + measure_steps, hooks=[clock])
  steps_seen = [step for _, step in clock.stamps]
  if len(steps_seen) != warmup_steps + measure_steps or steps_seen != list(range(steps_seen[0],
                                                                                 steps_seen[-1] + 1)):
    raise RuntimeError('expected one training step per session.run, saw global steps %s...' % steps_seen[:5])
  return timing.window(measure_steps * batch_size, clock.stamps[warmup_steps - 1][0], clock.stamps[-1][0])
