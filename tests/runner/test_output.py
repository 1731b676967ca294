"""What the programs print, run as a user runs them: every message once, the training loss while training, no
deprecation noise, and a bounded number of lines (runtime/logs.py, runtime/progress.py).

The runs here have the shape of a default run, scaled down: data prepared from IDX files first, 40 steps logged
every 2 (a default run: 2,000 steps logged every 100, 20 lines), checkpoints at 0, 20 and 40 (0, 1,000, 2,000),
10 evaluation batches and 10 logged predictions. So their line count stands for a default run's, which must stay
under about 150 lines; MAX_LINES leaves room for what a real run adds (MNIST's download, a few more C++ lines).
"""
import json
import re
import subprocess
import sys

import pytest
import tensorflow.compat.v1 as tf

from support.paths import REPO_ROOT
from support.programs import ABSL_PREFIX
from support.programs import TENSORFLOW_HANDLER
from support.programs import assert_every_message_once_and_no_noise
from support.programs import messages

IS_TF2 = int(tf.__version__.split('.')[0]) >= 2
TRAIN_STEPS = 40
DEFAULT_SHAPED = ['--validation_size=50', '--train_steps=%d' % TRAIN_STEPS, '--batch_size=16', '--log_every_steps=2',
                  '--save_checkpoints_steps=20', '--eval_batch_size=11', '--num_predictions=10']
TPU_ARGS = ['--use_tpu=false', '--master=', '--iterations=2']
def run_python(args, timeout=300):
  result = subprocess.run([sys.executable] + args, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stdout + result.stderr


def index_of(lines, text):
  return next(i for i, line in enumerate(lines) if text in line)


def assert_loss_shown_while_training(lines, first_line_after_training):
  progress = [line for line in lines if re.match(r'step \d+/%d  loss \d' % TRAIN_STEPS, line)]
  assert [line.split()[1] for line in progress] == ['%d/%d' % (s, TRAIN_STEPS) for s in range(2, 41, 2)]
  assert 'examples/s' in progress[0] and 'ETA' in progress[0]
  assert index_of(lines, 'step 2/%d  loss' % TRAIN_STEPS) < index_of(lines, first_line_after_training)


def assert_short_prefixes(output):
  """The progress and final lines carry the time only (runtime/logs.py), and no line absl's long prefix."""
  raw = output.splitlines()
  assert not [line for line in raw if ABSL_PREFIX.match(line)], [line for line in raw if ABSL_PREFIX.match(line)]
  progress = [line for line in raw if re.match(r'^\d\d:\d\d:\d\d step \d+/%d  loss \d' % TRAIN_STEPS, line)]
  assert len(progress) == TRAIN_STEPS // 2, raw
  assert re.match(r'^\d\d:\d\d:\d\d Done \(--mode=all\): checkpoint ', [line for line in raw if line][-1]), raw[-3:]


def assert_seed_logged_and_recorded(lines, results_path):
  seed = int(re.search(r'Seed (\d+), picked for this run', '\n'.join(lines)).group(1))
  with open(results_path) as f:
    assert json.load(f)['seed'] == seed


@pytest.fixture(scope='module')
def default_shaped_tpu_run(tmp_path_factory):
  root = tmp_path_factory.mktemp('tpu_output')
  from estimator_tpu.data import synthetic  # pylint: disable=g-import-not-at-top
  synthetic.write_idx_dir(str(root / 'idx'))
  model_dir = str(root / 'model')
  output = run_python(['mnist_tpu.py'] + TPU_ARGS + DEFAULT_SHAPED + [
      '--source_dir=%s' % (root / 'idx'), '--data_dir=%s' % (root / 'data'), '--model_dir=%s' % model_dir])
  return output, root


def test_mnist_tpu_prints_each_message_once_and_the_loss_while_training(default_shaped_tpu_run):
  output, root = default_shaped_tpu_run
  lines = assert_every_message_once_and_no_noise(output)
  assert_loss_shown_while_training(lines, 'Evaluating on test')
  evaluation = [line for line in lines if line.startswith('test: evaluated')]
  assert evaluation == ['test: evaluated %d/10 batches' % done for done in (3, 6, 9, 10)]
  assert len([line for line in lines if line.startswith('Prediction ')]) == 10
  assert len([line for line in lines if line.startswith('Saving checkpoints for')]) == 3
  assert_seed_logged_and_recorded(lines, str(root / 'model' / 'mnist_tpu_results.json'))
  assert_short_prefixes(output)


def test_tf_log_brings_tensorflows_own_lines_back_still_once(default_shaped_tpu_run):
  _, root = default_shaped_tpu_run
  output = run_python(['mnist_tpu.py'] + TPU_ARGS + ['--mode=evaluate', '--eval_batch_size=11', '--tf_log',
                                                     '--data_dir=%s' % (root / 'data'),
                                                     '--model_dir=%s' % (root / 'model')])
  assert not TENSORFLOW_HANDLER.search(output)
  lines = messages(output)
  assert lines.count('Calling model_fn.') == 1 and 'Evaluation [10/10]' in lines
  assert [line for line in lines if 'deprecated' in line]


def test_mnist_prints_each_message_once_and_the_loss_while_training(tmp_path, idx_dir):
  output = run_python(['mnist.py'] + DEFAULT_SHAPED + [
      '--source_dir=%s' % idx_dir, '--data_dir=%s' % (tmp_path / 'data'), '--model_dir=%s' % (tmp_path / 'm')])
  lines = assert_every_message_once_and_no_noise(output)
  assert_loss_shown_while_training(lines, 'test: evaluated')
  assert [line for line in lines if line.startswith('test: evaluated')][-1] == 'test: evaluated 10/10 batches'
  assert_seed_logged_and_recorded(lines, str(tmp_path / 'm' / 'mnist_results.json'))
  assert_short_prefixes(output)


@pytest.mark.skipif(not IS_TF2, reason='mnist_keras.py is the TF 2.x route; TF %s' % tf.__version__)
def test_mnist_keras_prints_each_message_once_and_the_loss_while_training(tmp_path, idx_dir):
  output = run_python(['mnist_keras.py'] + TPU_ARGS + DEFAULT_SHAPED + [
      '--source_dir=%s' % idx_dir, '--data_dir=%s' % (tmp_path / 'data'), '--model_dir=%s' % (tmp_path / 'm')])
  lines = assert_every_message_once_and_no_noise(output)
  assert_loss_shown_while_training(lines, 'test: evaluated')
  assert_seed_logged_and_recorded(lines, str(tmp_path / 'm' / 'mnist_keras_results.json'))
  assert_short_prefixes(output)


def test_prepare_data_prints_its_counts_once(tmp_path, idx_dir):
  output = run_python(['-m', 'tools.prepare_data', '--source_dir=%s' % idx_dir, '--validation_size=50',
                       '--data_dir=%s' % (tmp_path / 'data')])
  lines = assert_every_message_once_and_no_noise(output, max_lines=15)
  assert [line for line in lines if 'examples written' in line] == [
      'train.tfrecords: all 250 examples written.', 'validation.tfrecords: all 50 examples written.',
      'test.tfrecords: all 110 examples written.']
