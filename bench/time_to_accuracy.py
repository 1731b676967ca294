"""P4: training time and steps until the evaluation split reaches the target accuracy.

One estimator.train() call trains as mnist_tpu.py does. A CheckpointSaverListener evaluates every checkpoint
(the cadence is --save_checkpoints_steps) on the whole split while the training clock is paused, and stops
training at the first checkpoint that reaches the target. So the time reported is the training wall time a user
would wait (graph build and checkpoint writes included, the measuring evaluations excluded). The process's CPU
seconds are recorded next to it: on a loaded machine they show what the run would cost with the cores to itself.
"""
import time

import tensorflow.compat.v1 as tf
from absl import logging

from bench import timing


class PausableClock(object):
  """Wall and CPU time since creation (a timing.Stamp), minus what passed between pause() and resume()."""

  def __init__(self):
    self._start = timing.now()
    self._paused_at = None
    self._paused_wall = self._paused_cpu = 0.0

  def elapsed(self):
    now = self._paused_at or timing.now()
    return timing.Stamp(now.wall - self._start.wall - self._paused_wall,
                        now.cpu - self._start.cpu - self._paused_cpu)

  def pause(self):
    self._paused_at = timing.now()

  def resume(self):
    now = timing.now()
    self._paused_wall += now.wall - self._paused_at.wall
    self._paused_cpu += now.cpu - self._paused_at.cpu
    self._paused_at = None


class EvaluateEachCheckpoint(tf.estimator.CheckpointSaverListener):
  """Evaluates every saved checkpoint; asks training to stop at the target or when the time budget is spent."""

  def __init__(self, estimator, eval_input_fn, eval_steps, target, max_seconds, clock):
    self._estimator = estimator
    self._eval_input_fn = eval_input_fn
    self._eval_steps = eval_steps
    self._target = target
    self._max_seconds = max_seconds
    self._clock = clock
    self.evaluations = []
    self.stopped_by = None

  def after_save(self, session, global_step_value):
    if global_step_value == 0 or any(e['step'] == global_step_value for e in self.evaluations):
      return False
    training = self._clock.elapsed()
    self._clock.pause()
    eval_start = time.perf_counter()
    metrics = self._estimator.evaluate(self._eval_input_fn, steps=self._eval_steps,
                                       checkpoint_path=tf.train.latest_checkpoint(self._estimator.model_dir))
    self._clock.resume()
    self.evaluations.append({
        'step': int(global_step_value), 'training_seconds': training.wall, 'training_cpu_seconds': training.cpu,
        'accuracy': float(metrics['accuracy']), 'loss': float(metrics['mean_loss']),
        'eval_seconds': time.perf_counter() - eval_start})
    logging.info('step %d after %.1f s of training (%.1f CPU s): accuracy %.4f', global_step_value, training.wall,
                 training.cpu, metrics['accuracy'])
    if metrics['accuracy'] >= self._target:
      self.stopped_by = 'target'
    elif training.wall > self._max_seconds:
      self.stopped_by = 'max_minutes'
    return self.stopped_by is not None


def time_to_accuracy(estimator, train_input_fn, eval_input_fn, eval_steps, max_steps, target, max_seconds):
  """Trains until `target` accuracy, max_steps or max_seconds of training; returns the record as a dict."""
  clock = PausableClock()
  listener = EvaluateEachCheckpoint(estimator, eval_input_fn, eval_steps, target, max_seconds, clock)
  wall_start = time.perf_counter()
  estimator.train(train_input_fn, max_steps=max_steps, saving_listeners=[listener])
  evaluations = listener.evaluations
  reached = next((e for e in evaluations if e['accuracy'] >= target), None)
  last = evaluations[-1] if evaluations else None
  return {
      'target': target,
      'reached': reached is not None,
      'steps': reached['step'] if reached else None,
      'training_seconds': reached['training_seconds'] if reached else None,
      'training_cpu_seconds': reached['training_cpu_seconds'] if reached else None,
      'stopped_by': listener.stopped_by or 'train_steps',
      'best_accuracy': max(e['accuracy'] for e in evaluations) if evaluations else None,
      # Averages over the whole run, start-up included: what a longer or shorter run would cost per step.
      'seconds_per_step': last['training_seconds'] / last['step'] if last else None,
      'cpu_seconds_per_step': last['training_cpu_seconds'] / last['step'] if last else None,
      'wall_seconds_with_evaluations': time.perf_counter() - wall_start,
      'evaluations': evaluations,
  }
