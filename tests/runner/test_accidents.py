"""Accidents a user has, end to end through the programs: Ctrl-C, a full disk, an output flag that names the wrong
kind of place or one that cannot be written, a prediction count of zero.

Each ends in one line and a non-zero exit, with nothing half-written: `error: ... Fix: ...` for a mistake or a
full disk, and for Ctrl-C `stopped: ...` with the step reached, the last checkpoint and the command that goes on
from there, naming the --model_dir the run really used (the default one is new each run).
"""
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu.data import records
from estimator_tpu.data import synthetic
from estimator_tpu.runtime.errors import INTERRUPTED_STATUS
from support import mounts
from support.paths import REPO_ROOT
from support.programs import SCRIPT
from support.programs import TINY
from support.programs import assert_one_clear_error
from support.programs import run_script

PREPARE = [sys.executable, '-m', 'tools.prepare_data', '--validation_size=50']
WAIT_SECONDS = 180
# Smaller than a checkpoint of the model (about 40 MB with Adam's slots) or its SavedModel (about 13 MB), larger
# than the write checks' probes: the disk fills at the first real write.
SMALL_DISK_BYTES = 2 * 1024 * 1024


def start(command, log_path, env=None):
  with open(log_path, 'w') as log:  # a file, not a pipe nobody reads
    return subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)


def interrupt_when(process, condition):
  """Sends SIGINT (what Ctrl-C sends) once `condition()` holds; returns the exit status."""
  deadline = time.time() + WAIT_SECONDS
  while not condition():
    assert process.poll() is None, 'the process ended (status %s) before Ctrl-C' % process.returncode
    assert time.time() < deadline
    time.sleep(0.02)
  process.send_signal(signal.SIGINT)
  return process.wait(timeout=WAIT_SECONDS)


def read(path):
  with open(path) as f:
    return f.read()


def stopped_line(log):
  assert 'Traceback' not in log and 'KeyboardInterrupt' not in log, log[-3000:]
  lines = [line for line in log.splitlines() if line.startswith('stopped: ')]
  assert len(lines) == 1, log[-3000:]
  return lines[0]


def files_below(directory):
  return sorted(os.path.relpath(os.path.join(root, name), directory)
                for root, dirs, files in os.walk(directory) for name in dirs + files)


# (program, its checkpoints' prefix, what it logs when it restores one)
CTRL_C_PROGRAMS = [
    ('mnist_tpu.py', 'model.ckpt-', 'Restoring parameters from %s'),
    pytest.param('mnist_keras.py', 'ckpt-', 'Restored %s (step',
                 marks=pytest.mark.skipif(tf.__version__.startswith('1.'), reason='mnist_keras.py is TF 2 only')),
]


@pytest.mark.parametrize('program,prefix,restored', CTRL_C_PROGRAMS)
def test_ctrl_c_in_training_says_where_it_stopped_and_the_command_that_resumes(tmp_path, data_dir, program, prefix,
                                                                                restored):
  # No --model_dir: the run makes a new one under the temp dir, so the command must name it to resume.
  env = dict(os.environ, TMPDIR=str(tmp_path / 'tmp'))
  os.makedirs(env['TMPDIR'])
  log_path = str(tmp_path / 'run.log')
  script = os.path.join(REPO_ROOT, program)
  process = start([sys.executable, script] + TINY + ['--data_dir=%s' % data_dir, '--train_steps=100000'],
                  log_path, env)
  model_root = os.path.join(env['TMPDIR'], 'estimator_tpu')

  def checkpointed():  # TensorFlow updates the `checkpoint` index last, once a checkpoint is complete
    dirs = os.listdir(model_root) if os.path.isdir(model_root) else []
    index = [os.path.join(model_root, d, 'checkpoint') for d in dirs]
    return any(os.path.exists(path) and '%s0"' % prefix not in read(path) for path in index)

  assert interrupt_when(process, checkpointed) == INTERRUPTED_STATUS
  line = stopped_line(read(log_path))
  (model_dir,) = [os.path.join(model_root, d) for d in os.listdir(model_root)]
  assert line.startswith('stopped: Ctrl-C at step '), line
  step = int(line.split(' at step ')[1].split()[0])
  latest = open(os.path.join(model_dir, 'checkpoint')).readline().split('"')[1]
  saved = int(latest.rsplit('-', 1)[1])
  assert 10 <= saved <= step
  checkpoint = os.path.join(model_dir, '%s%d' % (prefix, saved))
  assert 'the last checkpoint is %s (step %d)' % (checkpoint, saved) in line
  command = shlex.split(line.split('To resume: ', 1)[1])
  assert '--model_dir=%s' % model_dir in command and script in command

  # The command resumes: the same run, to a nearer end, restores the checkpoint the line named.
  resumed = subprocess.run(command + ['--train_steps=%d' % (saved + 5), '--num_predictions=0'], cwd=REPO_ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                           timeout=WAIT_SECONDS, env=env)
  assert resumed.returncode == 0, resumed.stdout[-3000:]
  assert restored % checkpoint in resumed.stdout


def test_ctrl_c_in_data_preparation_publishes_no_split(tmp_path):
  source = str(tmp_path / 'idx')
  # seconds of conversion after the first progress line, whatever the machine's speed (fresh-clone CI once saw
  # 60000 finish before the Ctrl-C arrived)
  synthetic.write_idx_dir(source, train_count=180000, test_count=100, gzipped=False)
  data_dir = str(tmp_path / 'data')
  log_path = str(tmp_path / 'prepare.log')
  # Unbuffered: Python 3.7 buffers a stderr that is a file, and the progress line must be there when written.
  process = start(PREPARE + ['--source_dir=%s' % source, '--data_dir=%s' % data_dir], log_path,
                  dict(os.environ, PYTHONUNBUFFERED='1'))
  status = interrupt_when(process, lambda: '.tfrecords: 10000/' in read(log_path))  # the first shard's first line
  assert status == INTERRUPTED_STATUS
  line = stopped_line(read(log_path))
  assert 'Ctrl-C while preparing the TFRecords in %s; no split was published' % data_dir in line
  assert '--data_dir=%s' % data_dir in line and 'tools.prepare_data' in line
  assert files_below(data_dir) == []  # no split, no temporary file


def test_a_full_disk_in_training_is_one_line_and_the_checkpoints_stay_whole(tmp_path, data_dir):
  model_dir = str(tmp_path / 'model')
  os.makedirs(model_dir)
  result, left = mounts.run_on_small_disk(model_dir, SMALL_DISK_BYTES, [sys.executable, SCRIPT] + TINY + [
      '--data_dir=%s' % data_dir, '--model_dir=%s' % model_dir])
  line = assert_one_clear_error(result, 'the disk of --model_dir=%s is full' % model_dir,
                                'No space left on device', 'training resumes from the last complete checkpoint')
  assert 'GPU' not in line and 'ResourceExhausted' not in result.stderr
  assert not [name for name in left if '.tmp-' in name or '_temp' in name], left


def test_a_full_disk_in_export_leaves_no_half_written_saved_model(tmp_path, tiny_model):
  _, trained = tiny_model
  export_dir = str(tmp_path / 'export')
  os.makedirs(export_dir)
  result, left = mounts.run_on_small_disk(export_dir, SMALL_DISK_BYTES, [sys.executable, SCRIPT] + TINY + [
      '--mode=export', '--checkpoint_path=%s' % trained, '--export_dir=%s' % export_dir])
  assert_one_clear_error(result, 'the disk of --export_dir=%s is full' % export_dir, 'export again')
  assert left == []  # TensorFlow's temporary SavedModel folder is removed


def test_a_full_disk_in_data_preparation_is_one_line_without_a_download_hint(tmp_path, idx_dir):
  data_dir = str(tmp_path / 'data')
  os.makedirs(data_dir)
  result, left = mounts.run_on_small_disk(data_dir, 100 * 1024, PREPARE + [
      '--source_dir=%s' % idx_dir, '--data_dir=%s' % data_dir])
  line = assert_one_clear_error(result, 'the disk of --data_dir=%s is full' % data_dir)
  assert 'download' not in line.lower()
  assert left == []


def test_export_dir_that_is_a_file(tmp_path, tiny_model):
  _, trained = tiny_model
  blocker = tmp_path / 'saved_model.pb'
  blocker.write_text('not a directory')
  result = run_script(TINY + ['--mode=export', '--checkpoint_path=%s' % trained, '--export_dir=%s' % blocker])
  assert_one_clear_error(result, '--export_dir=%s is a file, not a directory' % blocker)
  assert blocker.read_text() == 'not a directory'


def test_export_to_a_read_only_place_names_export_dir(tmp_path, tiny_model):
  _, trained = tiny_model
  parent = tmp_path / 'read-only'
  parent.mkdir()
  result = mounts.run_read_only(str(parent), [sys.executable, SCRIPT] + TINY + [
      '--mode=export', '--checkpoint_path=%s' % trained, '--export_dir=%s' % (parent / 'exports')])
  line = assert_one_clear_error(result, 'cannot write to --export_dir=%s' % (parent / 'exports'))
  assert '--model_dir' not in line.split(' Fix: ')[1] and '--data_dir' not in line
  assert os.listdir(str(parent)) == []


def test_predictions_to_a_read_only_place_name_predictions_file_before_any_work(tmp_path, tiny_model):
  data_dir, trained = tiny_model
  parent = tmp_path / 'read-only'
  parent.mkdir()
  target = parent / 'predictions.csv'
  result = mounts.run_read_only(str(parent), [sys.executable, SCRIPT] + TINY + [
      '--mode=predict', '--data_dir=%s' % data_dir, '--checkpoint_path=%s' % trained,
      '--predictions_file=%s' % target])
  line = assert_one_clear_error(result, 'cannot write --predictions_file=%s' % target)
  assert '--predictions_file' in line.split(' Fix: ')[1] and '--model_dir' not in line.split(' Fix: ')[1]
  assert 'Prediction 0' not in result.stderr  # stopped before predicting
  assert os.listdir(str(parent)) == []


@pytest.mark.parametrize('extra', [['--mode=predict', '--checkpoint_path=/unused/model.ckpt-1'],
                                   ['--predictions_file=/unused/predictions.csv']])
def test_zero_predictions_where_predictions_are_the_point(extra):
  result = run_script(TINY + ['--num_predictions=0'] + extra)
  assert result.returncode != 0
  assert '--num_predictions=0 predicts nothing' in result.stderr and 'Traceback' not in result.stderr


# --- a model_dir of the other kind of route, or of another model: refused before anything is written ---

KERAS_SCRIPT = os.path.join(REPO_ROOT, 'mnist_keras.py')
TF2_ONLY = pytest.mark.skipif(tf.__version__.startswith('1.'), reason='mnist_keras.py is the TensorFlow 2 route')
# An object-based checkpoint as tf.train.Checkpoint writes it (the Keras route's kind), of a small Keras model that
# is not mnist_keras.py's; runs eagerly on TF 1.15 and 2.15 alike.
OTHER_KERAS_MODEL = '''
import sys
import tensorflow as tf
tf.compat.v1.enable_eager_execution()
model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(5,))])
model.compile(optimizer='adam', loss='mse')
model.fit(tf.zeros([4, 5]), tf.zeros([4, 3]), verbose=0)
checkpoint = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
tf.train.CheckpointManager(checkpoint, sys.argv[1], max_to_keep=1).save(checkpoint_number=7)
'''


def snapshot(directory):
  """Every file below `directory` with its contents: what must not change."""
  found = {}
  for name in files_below(directory):
    path = os.path.join(directory, name)
    if os.path.isfile(path):
      with open(path, 'rb') as f:
        found[name] = f.read()
  return found


def other_keras_model_dir(tmp_path):
  model_dir = str(tmp_path / 'keras-model')
  subprocess.run([sys.executable, '-c', OTHER_KERAS_MODEL, model_dir], check=True, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE, timeout=WAIT_SECONDS)
  return model_dir


def copied_model_dir(tmp_path, tiny_model):
  model_dir = str(tmp_path / 'estimator-model')
  shutil.copytree(tiny_model[1], model_dir)
  return model_dir


def test_the_estimator_routes_refuse_a_keras_model_dir(tmp_path, tiny_model):
  model_dir = other_keras_model_dir(tmp_path)
  before = snapshot(model_dir)
  result = run_script(TINY + ['--data_dir=%s' % tiny_model[0], '--model_dir=%s' % model_dir])
  assert_one_clear_error(result, '--model_dir=%s holds an object-based checkpoint (ckpt-7)' % model_dir,
                         'continue that training with mnist_keras.py')
  assert snapshot(model_dir) == before


@TF2_ONLY
def test_mnist_keras_refuses_a_model_dir_of_the_estimator_routes(tmp_path, tiny_model):
  model_dir = copied_model_dir(tmp_path, tiny_model)
  before = snapshot(model_dir)
  result = subprocess.run([sys.executable, KERAS_SCRIPT] + TINY + ['--data_dir=%s' % tiny_model[0],
                                                                    '--model_dir=%s' % model_dir],
                          cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=WAIT_SECONDS)
  assert_one_clear_error(result, 'holds a checkpoint of mnist.py/mnist_tpu.py', 'continue that training with '
                         'mnist_tpu.py')
  assert snapshot(model_dir) == before  # its `checkpoint` index still names its own checkpoints


@TF2_ONLY
def test_mnist_keras_refuses_a_checkpoint_of_another_keras_model(tmp_path, tiny_model):
  model_dir = other_keras_model_dir(tmp_path)
  before = snapshot(model_dir)
  result = subprocess.run([sys.executable, KERAS_SCRIPT] + TINY + ['--data_dir=%s' % tiny_model[0],
                                                                    '--model_dir=%s' % model_dir],
                          cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=WAIT_SECONDS)
  assert_one_clear_error(result, '--model_dir=%s holds a checkpoint of a different model (ckpt-7)' % model_dir,
                         'pass a new --model_dir')
  assert snapshot(model_dir) == before


# --- a data folder that exists but cannot be read ---

# Root reads everything whatever the permission bits say, through two capabilities; without them (dropped from the
# bounding set, so no program it starts gets them back) root obeys the bits like any user.
WITHOUT_ROOT_READS = ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--']


@pytest.mark.parametrize('unreadable', ['folder', 'file'])
def test_an_unreadable_data_dir_is_one_line_not_a_preparation(tmp_path, data_dir, unreadable):
  target = data_dir if unreadable == 'folder' else records.split_path(data_dir, 'train')
  model_dir = str(tmp_path / 'model')
  os.chmod(target, 0)
  try:
    command = [sys.executable, SCRIPT] + TINY + ['--data_dir=%s' % data_dir, '--model_dir=%s' % model_dir]
    result = subprocess.run((WITHOUT_ROOT_READS if os.geteuid() == 0 else []) + command, cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            timeout=WAIT_SECONDS)
  finally:
    os.chmod(target, 0o755 if unreadable == 'folder' else 0o644)
  line = assert_one_clear_error(result, 'cannot read --data_dir=%s' % data_dir, 'Permission denied')
  assert 'preparing them now' not in result.stderr and 'cannot write' not in line
  assert not os.path.exists(model_dir)
