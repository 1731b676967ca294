"""mnist_tpu.py's (and mnist.py's) modes, run in-process on tiny synthetic data against a model trained once (tiny_model)."""
import csv
import os

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from absl import flags

import mnist
import mnist_tpu
from support import tiny_run
from estimator_tpu import runner
from estimator_tpu.data import records
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime.errors import UserError
from flags import mnist as mnist_flags
from flags import modes
from support.programs import parse_flags
from support.programs import scalar_events
from support.tiny_run import run_mnist


def model_args(tiny_model, model_dir, *extra):
  """Flags that use tiny_model's data and checkpoint but write into a model directory of the test's own."""
  data_dir, trained_dir = tiny_model
  return ['--data_dir=%s' % data_dir, '--model_dir=%s' % model_dir,
          '--checkpoint_path=%s' % tf.train.latest_checkpoint(trained_dir)] + list(extra)


def test_every_mode_has_a_function():
  assert sorted(list(runner.MODES) + [runner.CHECK_TPU]) == sorted(modes.MODES)


@pytest.mark.parametrize('num_predictions, eval_batch_size, expected', [(7, 5, 7), (-1, 50, 110), (500, 50, 110)])
def test_predict_writes_one_row_per_requested_image(tmp_path, tiny_model, num_predictions, eval_batch_size,
                                                    expected):
  csv_path = str(tmp_path / 'predictions.csv')
  predictions = tiny_run.run(['--mode=predict', '--num_predictions=%d' % num_predictions,
                              '--eval_batch_size=%d' % eval_batch_size, '--predictions_file=%s' % csv_path]
                             + model_args(tiny_model, tmp_path / 'model'))
  _, labels = records.read_split(records.split_path(tiny_model[0], 'test'))
  with open(csv_path) as f:
    rows = list(csv.DictReader(f))
  assert len(predictions) == len(rows) == expected
  assert [int(row['index']) for row in rows] == list(range(expected))
  assert [int(row['label']) for row in rows] == labels[:expected].tolist()
  assert [int(row['class_id']) for row in rows] == [p['class_id'] for p in predictions]
  assert all(0.0 <= float(row['probability']) <= 1.0 for row in rows)
  assert [name for name in os.listdir(str(tmp_path)) if 'predictions' in name] == ['predictions.csv']  # no temp


def test_training_writes_loss_and_learning_rate_for_every_step(tiny_model):
  events = scalar_events(tiny_model[1])
  # host_call's curves, named for what they are; nothing else (no sparser copy of the loss from Estimator).
  assert sorted(events) == ['train/learning_rate', 'train/loss']
  steps = list(range(tiny_run.TINY_STEPS))
  assert [step for step, _ in events['train/loss']] == steps
  assert [step for step, _ in events['train/learning_rate']] == steps
  fv = tiny_run.parse(tiny_run.TINY_ARGS)
  np.testing.assert_allclose([rate for _, rate in events['train/learning_rate']],
                             tiny_run.default_learning_rates(fv, steps), rtol=1e-5, atol=1e-9)
  losses = [loss for _, loss in events['train/loss']]
  assert np.all(np.isfinite(losses)) and np.mean(losses[-5:]) < np.mean(losses[:5])


def test_evaluation_writes_its_metrics_at_the_checkpoint_step(tmp_path, tiny_model):
  metrics, _ = tiny_run.run(['--mode=evaluate'] + model_args(tiny_model, tmp_path / 'model'))
  events = scalar_events(str(tmp_path / 'model' / 'eval_test'))
  assert events['accuracy'] == [(tiny_run.TINY_STEPS, pytest.approx(metrics['accuracy']))]
  assert events['mean_loss'] == [(tiny_run.TINY_STEPS, pytest.approx(metrics['mean_loss']))]


def test_checkpoints_are_saved_on_loop_boundaries(tiny_model):
  # TINY_ARGS: --save_checkpoints_steps=15 with --iterations=10 -> every 20 steps, plus the final one.
  state = tf.train.get_checkpoint_state(tiny_model[1])
  assert [checkpoints.checkpoint_step(path) for path in state.all_model_checkpoint_paths] == [0, 20, 30]


def test_train_and_evaluate_evaluates_every_k_steps(tmp_path, tiny_model):
  model_dir = tmp_path / 'model'
  metrics, counted = tiny_run.run(['--mode=train_and_evaluate', '--eval_every_steps=20', '--eval_split=validation',
                                   '--data_dir=%s' % tiny_model[0], '--model_dir=%s' % model_dir])
  assert counted == 50  # the whole validation split
  events = scalar_events(str(model_dir / 'eval_validation'))
  assert [step for step, _ in events['accuracy']] == [20, 30]
  assert events['accuracy'][-1][1] == pytest.approx(metrics['accuracy'])
  assert metrics['global_step'] == tiny_run.TINY_STEPS


def trainable_values(checkpoint):
  names = [name for name, _ in tf.train.list_variables(checkpoint)
           if name.endswith(('kernel', 'bias')) and 'Adam' not in name]
  assert len(names) == 8  # 2 conv + 2 dense layers
  return {name: tf.train.load_variable(checkpoint, name) for name in names}


@pytest.mark.parametrize('warm_start', [True, False])
def test_warm_start_copies_the_source_weights(tmp_path, tiny_model, warm_start):
  # One step at learning rate 0 initialises the variables (from the source, or randomly) and changes nothing.
  model_dir = tmp_path / 'warm'
  args = ['--mode=train', '--train_steps=1', '--learning_rate=0', '--data_dir=%s' % tiny_model[0],
          '--model_dir=%s' % model_dir]
  tiny_run.run(args + (['--warm_start_from=%s' % tiny_model[1]] if warm_start else []))
  source, warm = tf.train.latest_checkpoint(tiny_model[1]), tf.train.latest_checkpoint(str(model_dir))
  assert checkpoints.checkpoint_step(warm) == 1  # a new run, not a continuation of the source
  source_values, warm_values = trainable_values(source), trainable_values(warm)
  same = [np.array_equal(source_values[name], warm_values[name]) for name in sorted(source_values)]
  assert same == [warm_start] * len(same)

  evaluations = [tiny_run.run(['--mode=evaluate', '--data_dir=%s' % tiny_model[0], '--model_dir=%s' % model_dir,
                               '--checkpoint_path=%s' % checkpoint])[0] for checkpoint in (source, warm)]
  if warm_start:
    assert evaluations[1]['accuracy'] == evaluations[0]['accuracy']
    assert evaluations[1]['mean_loss'] == pytest.approx(evaluations[0]['mean_loss'], rel=1e-6)


def test_eval_steps_evaluates_a_prefix(tmp_path, tiny_model):
  metrics, counted = tiny_run.run(['--mode=evaluate', '--eval_steps=1'] + model_args(tiny_model, tmp_path / 'm'))
  assert counted == 50 and 0.0 <= metrics['accuracy'] <= 1.0


@pytest.mark.parametrize('args, message', [
    (['--mode=evaluate', '--eval_steps=4'], r'--eval_steps=4 asks for more batches than the test split fills \(3'),
    (['--mode=predict', '--checkpoint_path=/nonexistent/model.ckpt-5'], 'neither a model directory nor a checkpoint'),
    (['--mode=train', '--warm_start_from=/nonexistent'], '--warm_start_from=/nonexistent is neither'),
])
def test_user_mistakes_are_user_errors(tmp_path, tiny_model, args, message):
  base = model_args(tiny_model, tmp_path / 'model') if '--mode=evaluate' in args else [
      '--data_dir=%s' % tiny_model[0], '--model_dir=%s' % (tmp_path / 'model')]
  with pytest.raises(UserError, match=message):
    tiny_run.run(base + args)


def test_evaluate_without_a_checkpoint_says_how_to_get_one(tmp_path, tiny_model):
  (tmp_path / 'empty').mkdir()
  with pytest.raises(UserError, match='--model_dir=.*empty holds no checkpoint.*train first'):
    tiny_run.run(['--mode=evaluate', '--data_dir=%s' % tiny_model[0], '--model_dir=%s' % (tmp_path / 'empty')])


# --- mnist.py has the same modes (estimator_tpu/runner.py), without check_tpu --------------------------------------

def test_the_estimator_program_has_every_mode_but_check_tpu():
  assert sorted(runner.MODES) == sorted(modes.ESTIMATOR_MODES)
  with pytest.raises(flags.IllegalFlagValueError):
    parse_flags(mnist_flags.define_flags, ['--mode=check_tpu'])


def test_the_estimator_program_trains_evaluates_and_predicts_in_separate_modes(tmp_path, shared_data_dir):
  model_dir = str(tmp_path / 'model')
  common = ['--data_dir=%s' % shared_data_dir, '--model_dir=%s' % model_dir]
  run_mnist(common + ['--mode=train', '--train_steps=20'])
  assert checkpoints.checkpoint_step(tf.train.latest_checkpoint(model_dir)) == 20

  metrics, counted = run_mnist(common + ['--mode=evaluate', '--eval_split=validation'])
  assert (metrics['global_step'], counted) == (20, 50)
  assert os.path.isdir(os.path.join(model_dir, 'eval_validation'))

  csv_path = str(tmp_path / 'predictions.csv')
  predictions = run_mnist(common + ['--mode=predict', '--num_predictions=7', '--predictions_file=%s' % csv_path])
  with open(csv_path) as f:
    rows = list(csv.DictReader(f))
  assert [int(row['index']) for row in rows] == list(range(7)) == [p['index'] for p in predictions]
