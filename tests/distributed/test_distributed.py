"""tools/mnist_cluster.py: mnist.py's Estimator trained by several processes that TF_CONFIG ties into a cluster.

The end-to-end test starts a real cluster on 127.0.0.1 (a ps, the chief, two workers and an evaluator, each a
process running tools/mnist_cluster.py) and checks what each part of tf.estimator.train_and_evaluate must do; the others check
how TF_CONFIG and the flags are read.
"""
import glob
import json
import os
import signal
import subprocess
import sys

import pytest
import tensorflow.compat.v1 as tf
from absl import flags

import mnist
from support.paths import REPO_ROOT
from support.processes import group_alive
from estimator_tpu.distributed import local_cluster
from estimator_tpu.distributed import tf_config
from estimator_tpu.distributed import training as distributed
from estimator_tpu.estimator import input_fn as estimator_input
from estimator_tpu.estimator import model_fn as estimator_model_fn
from estimator_tpu.runtime.errors import UserError
from flags import mnist as mnist_flags
from flags import mnist_cluster as mnist_cluster_flags
from support.programs import parse_flags
from support.programs import assert_every_message_once_and_no_noise

MNIST = os.path.join(REPO_ROOT, 'mnist.py')
MNIST_CLUSTER = ['-m', 'tools.mnist_cluster']  # run from REPO_ROOT
TRAIN_STEPS = 60
NUM_WORKERS = 2
TRAINING_TASKS = ['chief-0'] + ['worker-%d' % i for i in range(NUM_WORKERS)]
MIN_STEPS_PER_TASK = 5  # a fair share is TRAIN_STEPS / 3 = 20; a task that only joined at the end does 1 or 2
CLUSTER_TIMEOUT_SECS = 80  # measured: about 25 s on the loaded 2-core machine
EVAL_BATCH = 50


def final_checkpoint_step(model_dir):
  """The global step stored in the newest checkpoint. Its file name may be a step behind: with asynchronous
  workers the global step can move between the chief reading it for the name and saving the variables."""
  assert tf.train.latest_checkpoint(model_dir)
  return int(tf.train.load_variable(model_dir, tf.GraphKeys.GLOBAL_STEP))


def evaluation_steps(eval_dir):
  """Global steps of every evaluation whose summaries are in `eval_dir`."""
  steps = set()
  for path in glob.glob(os.path.join(eval_dir, 'events.out.tfevents.*')):
    for event in tf.train.summary_iterator(path):
      if any(value.tag == 'accuracy' for value in event.summary.value):
        steps.add(event.step)
  return steps


def run_cluster(tmp_path, data_dir, model_dir):
  """Runs the cluster to its end; returns (task results, pids). Whatever happens, every task is stopped."""
  command = [sys.executable] + MNIST_CLUSTER + ['--data_dir=%s' % data_dir, '--model_dir=%s' % model_dir,
             '--train_steps=%d' % TRAIN_STEPS, '--batch_size=16', '--eval_batch_size=%d' % EVAL_BATCH,
             '--save_checkpoints_steps=20', '--eval_throttle_secs=1', '--num_predictions=3',
             '--wait_for_workers_secs=60', '--log_every_steps=20']
  cluster = local_cluster.LocalCluster(command, str(tmp_path / 'logs'), num_workers=NUM_WORKERS)
  try:
    cluster.start()
    return cluster.wait(timeout_secs=CLUSTER_TIMEOUT_SECS), cluster.pids()
  except local_cluster.ClusterError as e:
    logs = ''.join('\n--- %s ---\n%s' % (task.name, cluster.log_tail(task)) for task in cluster.tasks)
    pytest.fail('%s%s' % (e, logs))
  finally:
    cluster.stop()


def test_cluster_trains_on_every_worker_and_its_final_checkpoint_evaluates(tmp_path, data_dir):
  model_dir = str(tmp_path / 'model')
  results, pids = run_cluster(tmp_path, data_dir, model_dir)

  # Every process is gone; the chief, the workers and the evaluator ended by themselves, the ps was stopped.
  assert not [task.name for task, pid in pids.items() if group_alive(pid)]
  ended = {r.task.name: (r.returncode, r.stopped) for r in results}
  assert ended == dict({name: (0, False) for name in TRAINING_TASKS + ['evaluator-0']},
                       **{'ps-0': (-signal.SIGTERM, True)})

  # Every training task ran a fair part of the steps, and together exactly the steps the global step counted:
  # the last task to finish read the final global step, and nothing but the tasks' steps moved it.
  steps = distributed.read_task_steps(model_dir)
  assert sorted(steps) == TRAINING_TASKS
  assert all(s['steps'] >= MIN_STEPS_PER_TASK for s in steps.values()), steps
  final_global_step = max(s['global_step_at_end'] for s in steps.values())
  assert sum(s['steps'] for s in steps.values()) == final_global_step, steps

  # The chief saved a final checkpoint at max_steps or a little beyond (tasks stop asynchronously: each finishes
  # the step it is in when the global step passes max_steps).
  final_step = final_checkpoint_step(model_dir)
  assert TRAIN_STEPS <= final_step <= final_global_step

  # The evaluator evaluated checkpoints on the validation split until it found one at max_steps or beyond, then
  # exited by itself. That one may be a periodic checkpoint saved just before the chief's final one.
  validation_steps = evaluation_steps(os.path.join(model_dir, 'eval_%s' % distributed.VALIDATION_EVAL_NAME))
  assert TRAIN_STEPS <= max(validation_steps) <= final_step, (validation_steps, final_step)

  # The chief evaluated the final checkpoint on the test split, and an evaluation from it here agrees.
  with open(os.path.join(model_dir, mnist.ROUTE.results_file)) as f:
    reported = json.load(f)
  assert reported['global_step'] == final_step
  assert reported['eval']['examples'] == 110 and len(reported['predictions']) == 3
  # Each task's log says what it did, once per message: the training tasks their progress, the evaluator its results.
  logs = {}
  for result in results:
    with open(result.log_path) as f:
      logs[result.task.name] = assert_every_message_once_and_no_noise(f.read(), max_lines=40)
  assert [line for line in logs['chief-0'] if line.startswith('step ') and ' loss ' in line]
  assert [line for line in logs['evaluator-0'] if line.startswith('Saving dict for global step')]
  estimator = tf.estimator.Estimator(estimator_model_fn.model_fn_builder(1e-3, 1000, 0.5), model_dir=model_dir)
  metrics = estimator.evaluate(estimator_input.eval_input_fn_builder(data_dir, 'test', EVAL_BATCH), steps=None)
  assert metrics['global_step'] == final_step
  assert metrics['accuracy'] == pytest.approx(reported['eval']['accuracy'])
  assert metrics['accuracy'] >= 0.9  # the synthetic digits are separable; chance is 0.1


# --- TF_CONFIG and the flags -----------------------------------------------------------------------------------------

CLUSTER = {'chief': ['127.0.0.1:2220'], 'worker': ['127.0.0.1:2221', '127.0.0.1:2222'], 'ps': ['127.0.0.1:2223']}


def set_tf_config(monkeypatch, cluster=None, task_type=None, index=0, text=None):
  if text is None:
    text = json.dumps({'cluster': cluster or CLUSTER, 'task': {'type': task_type, 'index': index}})
  monkeypatch.setenv(tf_config.NAME, text)


@pytest.mark.parametrize('task_type,index', [('chief', 0), ('worker', 1), ('ps', 0), ('evaluator', 0)])
def test_each_task_finds_itself_in_tf_config(monkeypatch, task_type, index):
  set_tf_config(monkeypatch, task_type=task_type, index=index)
  task = distributed.task_from_tf_config(distributed=True)
  assert task == (task_type, index)
  assert task.trains == (task_type in ('chief', 'worker')) and task.is_chief == (task_type == 'chief')


def test_local_run_without_tf_config(monkeypatch):
  monkeypatch.delenv(tf_config.NAME, raising=False)
  assert distributed.task_from_tf_config(distributed=False) is None


@pytest.mark.parametrize('setting,distributed_flag,problem', [
    (None, True, 'a cluster task needs TF_CONFIG to describe the cluster and this task; it is not set.'),
    ({'task': {'type': 'worker', 'index': 0}}, True, 'it is set without "cluster"'),
    ({'task_type': 'worker'}, False, 'TF_CONFIG describes a cluster (1 chief, 1 ps, 2 worker), but this program'),
    ('{"cluster": ', True, 'TF_CONFIG is not valid JSON'),
    ('["chief"]', True, 'not a JSON object'),
    ({'task_type': 'master'}, True, "TF_CONFIG's task type is 'master'."),
    ({'task_type': 'worker', 'index': 2}, True, 'TF_CONFIG does not describe a usable task: 2 is not a valid task_id'),
    ({'cluster': {'chief': ['127.0.0.1:2220'], 'worker': ['127.0.0.1:2221']}, 'task_type': 'chief'}, True,
     'has workers but no "ps" job'),
    ({'cluster': {'worker': ['127.0.0.1:2221'], 'ps': ['127.0.0.1:2223']}, 'task_type': 'worker'}, True,
     'it must have one "chief" node'),
])
def test_tf_config_mistakes_are_user_errors(monkeypatch, setting, distributed_flag, problem):
  if setting is None:
    monkeypatch.delenv(tf_config.NAME, raising=False)
  elif isinstance(setting, str):
    set_tf_config(monkeypatch, text=setting)
  elif 'task_type' in setting:
    set_tf_config(monkeypatch, setting.get('cluster'), setting['task_type'], setting.get('index', 0))
  else:
    set_tf_config(monkeypatch, text=json.dumps(setting))
  with pytest.raises(UserError) as error:
    distributed.task_from_tf_config(distributed=distributed_flag)
  assert problem in str(error.value)
  assert error.value.fix


def parse_mnist_flags(args):
  return parse_flags(mnist_flags.define_flags, args)


def parse_cluster_flags(args):
  return parse_flags(mnist_cluster_flags.define_flags, args)


def test_distributed_needs_an_explicit_model_dir():
  with pytest.raises(flags.IllegalFlagValueError, match='every task must use the same --model_dir'):
    parse_cluster_flags([])
  fv = parse_cluster_flags(['--model_dir=/shared/model'])
  assert fv.model_dir == '/shared/model'


def test_distributed_tasks_do_not_prepare_data():
  with pytest.raises(flags.IllegalFlagValueError, match='prepare the data once beforehand'):
    parse_cluster_flags(['--model_dir=/shared/model', '--source_dir=/idx'])
  assert parse_mnist_flags(['--source_dir=/idx']).source_dir == '/idx'  # a local run prepares it itself


def test_mnist_with_a_cluster_in_tf_config_but_without_distributed_stops_with_one_line(tmp_path, data_dir):
  env = dict(os.environ, TF_CONFIG=json.dumps({'cluster': CLUSTER, 'task': {'type': 'chief', 'index': 0}}))
  result = subprocess.run([sys.executable, MNIST, '--data_dir=%s' % data_dir, '--model_dir=%s' % (tmp_path / 'm')],
                          cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)
  assert result.returncode == 1
  assert result.stderr.strip().splitlines()[-1].startswith(
      'error: TF_CONFIG describes a cluster (1 chief, 1 ps, 2 worker), but this program trains on this machine '
      'only. Fix: ')
  assert not os.path.exists(str(tmp_path / 'm'))
