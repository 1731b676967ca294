"""mnist_tpu.py end to end, as a user runs it, on tiny synthetic IDX data (seconds, not minutes)."""
import json
import os

import tensorflow.compat.v1 as tf

from support.programs import TINY
from support.programs import run_script

def test_trains_evaluates_and_predicts(tmp_path, idx_dir):
  data_dir, model_dir = str(tmp_path / 'data'), str(tmp_path / 'model')
  result = run_script(TINY + ['--source_dir=%s' % idx_dir, '--data_dir=%s' % data_dir,
                              '--model_dir=%s' % model_dir])
  assert result.returncode == 0, result.stderr[-3000:]
  # The data directory was prepared on first use, and the run says where it is.
  assert sorted(os.listdir(data_dir)) == ['dataset.json', 'test.tfrecords', 'train.tfrecords', 'validation.tfrecords']
  assert 'Data directory: %s' % data_dir in result.stderr
  assert tf.train.latest_checkpoint(model_dir).endswith('model.ckpt-30')

  with open(os.path.join(model_dir, 'mnist_tpu_results.json')) as f:
    results = json.load(f)
  assert results['global_step'] == 30
  assert results['eval']['examples'] == 110  # every test example, although batches of 50 leave 10 over
  assert 'Evaluating on test: 110 real examples + 40 padding = 3 batches of 50.' in result.stderr
  # The synthetic classes are separable; 30 steps of Adam must learn most of them.
  assert 0.8 <= results['eval']['accuracy'] <= 1.0
  assert 0.0 <= results['eval']['loss'] < 2.3  # below chance-level cross-entropy ln(10)
  assert [p['index'] for p in results['predictions']] == [0, 1, 2, 3]
  for prediction in results['predictions']:
    assert 0 <= prediction['class_id'] <= 9 and 0.0 <= prediction['probability'] <= 1.0


def test_bad_flag_is_one_clear_message_before_any_graph(tmp_path):
  result = run_script(['--use_tpu=false', '--master=', '--train_steps=0', '--model_dir=%s' % (tmp_path / 'm')])
  assert result.returncode != 0
  assert 'train_steps' in result.stderr and 'Traceback' not in result.stderr
  assert not os.path.exists(str(tmp_path / 'm'))


def test_missing_source_data_is_a_user_error(tmp_path):
  result = run_script(TINY + ['--source_dir=%s' % (tmp_path / 'nowhere'), '--data_dir=%s' % (tmp_path / 'd'),
                              '--model_dir=%s' % (tmp_path / 'm')])
  assert result.returncode == 1
  assert result.stderr.count('error: t10k-images-idx3-ubyte(.gz) not found') == 1
  assert 'Traceback' not in result.stderr
  assert not os.path.exists(str(tmp_path / 'd' / 'train.tfrecords'))


def test_evaluating_without_a_checkpoint_is_one_clear_error(tmp_path, data_dir):
  (tmp_path / 'empty').mkdir()
  result = run_script(['--use_tpu=false', '--master=', '--mode=evaluate', '--data_dir=%s' % data_dir,
                       '--model_dir=%s' % (tmp_path / 'empty')])
  assert result.returncode == 1
  assert result.stderr.count('error: --model_dir=%s holds no checkpoint.' % (tmp_path / 'empty')) == 1
  assert 'Traceback' not in result.stderr


def test_mode_flags_are_checked_before_any_graph(tmp_path):
  result = run_script(['--use_tpu=false', '--master=', '--mode=predict'])
  assert result.returncode != 0
  assert '--mode=evaluate/predict/export use a trained model' in result.stderr and 'Traceback' not in result.stderr
