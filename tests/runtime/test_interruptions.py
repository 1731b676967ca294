"""`kill -9` in the middle of training or of data preparation, then the same command again.

A killed process runs no cleanup code, so what it leaves behind is exactly what a crash, an OOM kill or a
preempted VM would leave. The rerun must finish the job as if nothing had happened, and no reader may ever see a
half-written file.
"""
import json
import os
import signal
import subprocess
import sys
import time

import tensorflow.compat.v1 as tf

from support.paths import REPO_ROOT
from estimator_tpu.data import records
from estimator_tpu.data import synthetic
from support.programs import SCRIPT
from support.programs import TINY

PREPARE = ['-m', 'tools.prepare_data']  # run from REPO_ROOT
POLL_SECONDS = 0.01
WAIT_SECONDS = 180


def start(command, log_path):
  # The log goes to a file: a pipe nobody reads would fill up and stall the child.
  with open(log_path, 'w') as log:
    return subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)


def kill_when(process, condition):
  """Polls `condition()` while `process` runs; SIGKILLs it as soon as the condition holds."""
  deadline = time.time() + WAIT_SECONDS
  while not condition():
    assert process.poll() is None, 'the process ended (status %s) before it could be killed' % process.returncode
    assert time.time() < deadline, 'condition not reached in %d s' % WAIT_SECONDS
    time.sleep(POLL_SECONDS)
  os.kill(process.pid, signal.SIGKILL)
  assert process.wait(timeout=30) == -signal.SIGKILL


def checkpoint_step(model_dir):
  path = tf.train.latest_checkpoint(model_dir)
  return int(path.rsplit('-', 1)[1]) if path else None


def assert_checkpoints_complete(model_dir):
  """Every checkpoint the `checkpoint` file lists reads back completely (each tensor's CRC is checked)."""
  state = tf.train.get_checkpoint_state(model_dir)
  assert state and state.all_model_checkpoint_paths
  for path in state.all_model_checkpoint_paths:
    reader = tf.train.NewCheckpointReader(path)
    for name in reader.get_variable_to_shape_map():
      reader.get_tensor(name)


def test_training_killed_mid_run_resumes_and_ends_at_exactly_train_steps(tmp_path, data_dir):
  model_dir = str(tmp_path / 'model')
  train_steps = 35  # not a multiple of the checkpoint cadence (10): the rerun must stop at 35, not 40
  command = [sys.executable, SCRIPT] + TINY + [
      '--data_dir=%s' % data_dir, '--model_dir=%s' % model_dir, '--train_steps=%d' % train_steps, '--num_predictions=0']

  first = start(command, str(tmp_path / 'first.log'))
  kill_when(first, lambda: (checkpoint_step(model_dir) or 0) >= 10)
  killed_at = checkpoint_step(model_dir)
  assert 10 <= killed_at < train_steps
  assert_checkpoints_complete(model_dir)  # whatever the kill interrupted, the listed checkpoints are whole

  second = subprocess.run(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=WAIT_SECONDS)
  assert second.returncode == 0, second.stdout[-3000:]
  assert 'Restoring parameters from %s' % os.path.join(model_dir, 'model.ckpt-%d' % killed_at) in second.stdout
  assert checkpoint_step(model_dir) == train_steps
  assert_checkpoints_complete(model_dir)
  with open(os.path.join(model_dir, 'mnist_tpu_results.json')) as f:
    assert json.load(f)['global_step'] == train_steps
  # TensorFlow stages a checkpoint in `<name>_temp...` and renames it; a kill mid-save would leave that staging
  # area (never read), and ours leave `.tmp-` files. The rerun must leave neither.
  leftovers = [n for n in os.listdir(model_dir) if '.tmp' in n or '_temp' in n]
  assert leftovers == [] or all('_temp' in n for n in leftovers), leftovers


def test_preparation_killed_mid_write_leaves_no_split_and_the_rerun_completes(tmp_path):
  idx_dir, data_dir = str(tmp_path / 'idx'), str(tmp_path / 'data')
  # 10,000 training examples take about a second to write: a window wide enough to kill the writer in.
  synthetic.write_idx_dir(idx_dir, train_count=10050, test_count=100, gzipped=False)
  command = [sys.executable] + PREPARE + ['--source_dir=%s' % idx_dir, '--data_dir=%s' % data_dir,
             '--validation_size=50']
  expected = {'train': 10000, 'validation': 50, 'test': 100}

  def temp_files():
    try:  # the writer makes, renames and removes these while we look: a name gone since is no longer written
      return [n for n in os.listdir(data_dir) if '.tmp-' in n]
    except FileNotFoundError:
      return []

  def size(name):
    try:
      return os.path.getsize(os.path.join(data_dir, name))
    except FileNotFoundError:
      return 0

  def writing_train_split():
    return any(n.startswith('train.tfrecords.tmp-') and size(n) > 0 for n in temp_files())

  first = start(command, str(tmp_path / 'first.log'))
  kill_when(first, writing_train_split)
  assert temp_files(), 'the killed writer left no temporary file: it was not killed mid-write'
  final = [split for split in expected if os.path.exists(records.split_path(data_dir, split))]
  assert final == [], 'a killed preparation must not leave (part of) the splits under their final names'

  second = subprocess.run(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=WAIT_SECONDS)
  assert second.returncode == 0, second.stdout[-3000:]
  assert 'left behind by an interrupted run' in second.stdout
  assert temp_files() == []
  assert sorted(os.listdir(data_dir)) == ['dataset.json', 'test.tfrecords', 'train.tfrecords', 'validation.tfrecords']
  for split, count in expected.items():
    assert records.count_examples(records.split_path(data_dir, split)) == count
