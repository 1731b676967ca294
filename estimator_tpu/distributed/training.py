"""Training one Estimator across processes: train_and_evaluate in a TF_CONFIG cluster, and who trained how much.

TensorFlow's own distributed runtime, for CPU/GPU clusters (a TPU pod is the other way out; see README). Every
process runs the same program with the same flags; TF_CONFIG (tf_config.py) tells each one the cluster and its
own task. `tf.estimator.RunConfig` reads TF_CONFIG by itself, and `tf.estimator.train_and_evaluate` gives each
task its role: the parameter servers (ps) hold the variables; the chief and the workers each run the training
loop on their own batches and update those variables asynchronously (no step waits for another task); the chief
also initialises the variables and writes checkpoints and summaries; the evaluator evaluates every new checkpoint
until one at `max_steps` or later, then exits. The ps tasks serve until they are stopped.

Each training task writes how many steps it ran to `<model_dir>/task_steps/<type>-<index>.json`.
"""
import json
import os
import time

import tensorflow.compat.v1 as tf
from absl import logging

from estimator_tpu.distributed import tf_config
from estimator_tpu.runtime import atomic_files
from estimator_tpu.runtime.errors import UserError

TASK_STEPS_DIR = 'task_steps'
VALIDATION_EVAL_NAME = 'validation'  # the evaluator's summaries go to <model_dir>/eval_validation
BARRIER_NAME = 'estimator_tpu_start_together'
BARRIER_CAPACITY = 1 << 20  # one element per task and session start; never reached


def task_from_tf_config(distributed):
  """This process's tf_config.Task when `distributed` (tools/mnist_cluster.py); None for a local run (mnist.py).

  Raises a UserError when the program and TF_CONFIG disagree, or when TF_CONFIG is not a cluster an Estimator can
  train in. In a local run a TF_CONFIG cluster is an error rather than ignored: RunConfig would still read it, and
  `Estimator.train` would wait forever for a cluster that nobody started.
  """
  config = tf_config.read()
  cluster = config.get('cluster')
  if not distributed:
    if cluster:
      raise UserError('TF_CONFIG describes a cluster (%s), but this program trains on this machine only.'
                      % tf_config.describe(cluster),
                      'run `python -m tools.mnist_cluster` in every task to train in that cluster, or unset '
                      'TF_CONFIG to train on this machine.')
    return None
  if not cluster:
    raise UserError('a cluster task needs TF_CONFIG to describe the cluster and this task; it is %s.'
                    % ('not set' if not config else 'set without "cluster"'),
                    'set %s in every task, or start a cluster on this machine with `python -m tools.local_cluster`.'
                    % tf_config.EXAMPLE)
  task = _validated_task(config, cluster)
  logging.info('Task %s of the cluster %s.', task.name, tf_config.describe(cluster))
  return task


def _validated_task(config, cluster):
  task_type = (config.get('task') or {}).get('type')
  if task_type not in tf_config.TASK_TYPES:
    raise UserError('TF_CONFIG\'s task type is %r.' % task_type,
                    'set "task": {"type": ..., "index": ...} with a type among %s.' % ', '.join(tf_config.TASK_TYPES))
  if cluster.get(tf_config.WORKER) and not cluster.get(tf_config.PS):
    # Without a ps, Estimator keeps the variables on each task: every worker would train a model of its own.
    raise UserError('TF_CONFIG\'s cluster has workers but no "ps" job, so each task would train its own copy of '
                    'the model.', 'add a parameter server, e.g. "ps": ["HOST:PORT"], to the cluster.')
  try:
    run_config = tf.estimator.RunConfig()  # reads TF_CONFIG and checks it as Estimator will: one chief, index, ...
  except ValueError as e:
    raise UserError('TF_CONFIG does not describe a usable task: %s' % str(e).splitlines()[0],
                    'give every task the same "cluster" with one "chief", and a "task" whose type and index '
                    'name one of its entries (or "evaluator", index 0).')
  return tf_config.Task(run_config.task_type, run_config.task_id)


def task_steps_path(model_dir, task):
  return os.path.join(model_dir, TASK_STEPS_DIR, '%s.json' % task.name)


def read_task_steps(model_dir):
  """{task name: what its TaskStepsHook wrote} for every training task that has finished."""
  result = {}
  for path in sorted(tf.io.gfile.glob(os.path.join(model_dir, TASK_STEPS_DIR, '*.json'))):
    with tf.io.gfile.GFile(path) as f:
      result[os.path.basename(path)[:-len('.json')]] = json.load(f)
  return result


class TaskStepsHook(tf.train.SessionRunHook):
  """Counts the training steps this task runs and, at the end, writes them with the global step it started and
  ended at.

  Each session.run of Estimator's training loop is one step of this task and adds exactly 1 to the shared global
  step, so the step counts of all training tasks add up to the final global step.
  """

  def __init__(self, path, task):
    self._path, self._task = path, task
    self._global_step, self._steps, self._start = None, 0, None

  def begin(self):
    self._global_step = tf.train.get_global_step()

  def after_create_session(self, session, coord):
    self._start = int(session.run(self._global_step))

  def after_run(self, run_context, run_values):
    self._steps += 1

  def end(self, session):
    report = {'task': self._task.type, 'index': self._task.index, 'steps': self._steps,
              'global_step_at_start': self._start, 'global_step_at_end': int(session.run(self._global_step))}
    atomic_files.write_text(self._path, json.dumps(report, sort_keys=True))
    logging.info('Task %s trained %d steps; the global step went from %d to %d meanwhile.', self._task.name,
                 self._steps, report['global_step_at_start'], report['global_step_at_end'])


class StartTogetherHook(tf.train.SessionRunHook):
  """Holds each training task, once its session exists, until all `num_tasks` training tasks are there (or
  `timeout_secs` have passed), so that they start training together.

  Without it the chief starts at once and worker i only after a start delay of 5 * (i + 1) s that train_and_evaluate
  adds (to let the model settle before many asynchronous updates arrive); in a short run the chief may finish
  alone. The tasks meet in a queue on the first parameter server, found by the same shared_name from every
  task's graph: each adds one element, then waits until the queue holds `num_tasks`. A queue, unlike a variable,
  needs no initialisation and is never saved in a checkpoint.
  """

  def __init__(self, task, num_tasks, timeout_secs, poll_secs=0.1):
    self._task, self._num_tasks, self._timeout_secs, self._poll_secs = task, num_tasks, timeout_secs, poll_secs
    self._join, self._joined = None, None

  def begin(self):
    with tf.device('/job:%s/task:0' % tf_config.PS):
      queue = tf.queue.FIFOQueue(BARRIER_CAPACITY, tf.int32, shapes=[[]], shared_name=BARRIER_NAME,
                                 name='start_together')
    self._join, self._joined = queue.enqueue(self._task.index), queue.size()

  def after_create_session(self, session, coord):
    session.run(self._join)
    deadline = time.time() + self._timeout_secs
    joined = session.run(self._joined)
    while joined < self._num_tasks and time.time() < deadline:
      time.sleep(self._poll_secs)
      joined = session.run(self._joined)
    if joined < self._num_tasks:
      logging.warning('Task %s: only %d of %d training tasks have joined after %d s; training without waiting '
                      'for the others.', self._task.name, joined, self._num_tasks, self._timeout_secs)
    else:
      logging.info('Task %s: all %d training tasks have joined; training.', self._task.name, self._num_tasks)


def training_hooks(estimator, task, wait_for_workers_secs):
  """The hooks of a training task: its step count, and the start-together wait when asked for and useful."""
  if not task.trains:
    return []
  hooks = [TaskStepsHook(task_steps_path(estimator.model_dir, task), task)]
  num_tasks = estimator.config.num_worker_replicas  # the chief and the workers
  if wait_for_workers_secs > 0 and num_tasks > 1:
    hooks.append(StartTogetherHook(task, num_tasks, wait_for_workers_secs))
  return hooks


def train_and_evaluate(estimator, task, train_input_fn, eval_input_fn, max_steps, eval_throttle_secs,
                       wait_for_workers_secs=0, extra_training_hooks=()):
  """Runs this task's part: trains (chief, worker), evaluates each new checkpoint (evaluator) or serves (ps).

  Returns when this task is done; a ps never returns. `max_steps` is the global step at which all training stops
  (each task stops at the first step it sees at or beyond it). The evaluator reads `eval_input_fn` to its end
  (steps=None) at most every `eval_throttle_secs` seconds, and only when there is a new checkpoint. With
  `wait_for_workers_secs` > 0 the training tasks wait up to that long for each other before their first step.
  `extra_training_hooks` (e.g. runtime/progress.py's) run in the chief and the workers.
  """
  train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=max_steps,
                                      hooks=training_hooks(estimator, task, wait_for_workers_secs)
                                      + list(extra_training_hooks))
  eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None, name=VALIDATION_EVAL_NAME, start_delay_secs=0,
                                    throttle_secs=eval_throttle_secs)
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
