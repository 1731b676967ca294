"""estimator_tpu.failures on its own, fed real TensorFlow errors from whichever TensorFlow runs the tests."""
import logging as std_logging
import os
import struct

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from support.damage import flip_byte
from estimator_tpu import model
from estimator_tpu.data import records
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime import errors
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime import tf_errors
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.estimator import input_fn as estimator_input
from estimator_tpu.tpu import model_fn as model_fn_lib
from estimator_tpu.tpu import run_config


def damage_fourth_record(path):
  """Flips a byte inside the 4th record's data; returns the offset TensorFlow reports: where that data starts."""
  offset = 0
  with open(path, 'rb') as f:
    for _ in range(3):  # TFRecord framing: uint64 length, uint32 CRC, data, uint32 CRC
      f.seek(offset)
      offset += 8 + 4 + struct.unpack('<Q', f.read(8))[0] + 4
  flip_byte(path, offset + 20)
  return offset + 12


def run_pipeline(data_dir, split):
  """Reads one split through the real input_fn in a session, so errors come from TensorFlow's own kernels."""
  with tf.Graph().as_default():
    dataset = estimator_input.eval_input_fn_builder(data_dir, split, 10)()
    batch = tf.data.make_one_shot_iterator(dataset).get_next()
    with tf.Session() as sess:
      try:
        while True:
          sess.run(batch)
      except tf.errors.OutOfRangeError:
        pass


def translated(error, **kwargs):
  """The UserError that TensorFlowErrors makes of `error` raised inside it."""
  with pytest.raises(UserError) as raised:
    with tf_errors.TensorFlowErrors(**kwargs):
      raise error
  return raised.value


def caught(function, *args):
  try:
    function(*args)
  except tf.errors.OpError as e:
    return e
  raise AssertionError('%s did not fail' % function.__name__)


# --- essence ---


def test_essence_is_the_cause_without_node_names_or_stacks(data_dir):
  offset = damage_fourth_record(records.split_path(data_dir, 'test'))
  error = caught(run_pipeline, data_dir, 'test')
  assert isinstance(error, tf.errors.DataLossError)
  assert errors.essence(error) == 'corrupted record at %d' % offset


# --- require_writable_dir ---


def test_require_writable_dir_leaves_no_trace(tmp_path):
  preflight.require_writable_dir(str(tmp_path / 'a' / 'b' / 'model'), 'model_dir')
  assert os.listdir(str(tmp_path)) == []


def test_require_writable_dir_keeps_an_existing_dir_as_it_was(tmp_path):
  (tmp_path / 'keep').write_text('x')
  preflight.require_writable_dir(str(tmp_path), 'model_dir')
  assert os.listdir(str(tmp_path)) == ['keep']


def test_require_writable_dir_under_a_file(tmp_path):
  (tmp_path / 'file').write_text('x')
  with pytest.raises(UserError, match='cannot write to --data_dir=%s' % (tmp_path / 'file' / 'd')):
    preflight.require_writable_dir(str(tmp_path / 'file' / 'd'), 'data_dir')
  assert os.listdir(str(tmp_path)) == ['file']


def test_require_writable_dir_that_is_a_file(tmp_path):
  (tmp_path / 'file').write_text('x')
  with pytest.raises(UserError, match='Fix: pass a --model_dir'):
    preflight.require_writable_dir(str(tmp_path / 'file'), 'model_dir')


# --- check_checkpoint ---


def model_fn():
  return model_fn_lib.model_fn_builder(1e-3, 1000, 0.5)


def save_variables(model_dir, build):
  with tf.Graph().as_default():
    tf.train.create_global_step()
    build()
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      return tf.train.Saver().save(sess, os.path.join(model_dir, 'model.ckpt'), global_step=3)


def build_train_graph():
  model_fn()({model.IMAGE_KEY: tf.zeros([2, model.NUM_PIXELS])}, tf.zeros([2], tf.int32),
             tf.estimator.ModeKeys.TRAIN, {'use_tpu': False, 'batch_size': 2})


def test_model_variables_are_weights_adam_slots_and_the_step():
  variables = model.variable_shapes(model_fn())
  assert variables['global_step'] == []
  assert variables['dense_1/kernel'] == [model.DENSE_UNITS, model.NUM_CLASSES]
  assert variables['conv2d/kernel/Adam'] == variables['conv2d/kernel/Adam_1'] == [5, 5, 1, 32]


def test_check_checkpoint_without_a_checkpoint(tmp_path):
  checkpoints.check_checkpoint(str(tmp_path / 'none'), lambda: model.variable_shapes(model_fn()))
  checkpoints.check_checkpoint(str(tmp_path), lambda: model.variable_shapes(model_fn()))


def test_check_checkpoint_accepts_its_own_model_and_extra_variables(tmp_path):
  def build():
    build_train_graph()
    tf.get_variable('something_else', [2])

  save_variables(str(tmp_path), build)
  checkpoints.check_checkpoint(str(tmp_path), lambda: model.variable_shapes(model_fn()))


def test_check_checkpoint_lists_what_differs(tmp_path, monkeypatch):
  monkeypatch.setattr(model, 'CONV_FILTERS', (16, 64))
  save_variables(str(tmp_path), build_train_graph)
  monkeypatch.undo()
  with pytest.raises(UserError) as raised:
    checkpoints.check_checkpoint(str(tmp_path), lambda: model.variable_shapes(model_fn()))
  message = str(raised.value)
  assert 'conv2d/bias has shape [16] there but [32] here' in message
  assert message.count('has shape') == checkpoints.MAX_LISTED_PROBLEMS
  assert 'and 6 more' in message  # bias, kernel of both convs differ, each with two Adam slots: 9 in all


def test_check_checkpoint_reads_every_tensor(tmp_path):
  path = save_variables(str(tmp_path), build_train_graph)
  flip_byte(path + '.data-00000-of-00001', os.path.getsize(path + '.data-00000-of-00001') // 2)
  with pytest.raises(UserError, match='cannot read the checkpoint %s' % path):
    checkpoints.check_checkpoint(str(tmp_path), lambda: model.variable_shapes(model_fn()))


# --- TensorFlowErrors ---


def test_label_out_of_range_names_the_file(tmp_path, data_dir):
  path = records.split_path(data_dir, 'test')
  images, labels = records.read_split(path)
  labels[12] = 11
  records.write_split(path, images, labels)
  error = caught(run_pipeline, data_dir, 'test')
  assert isinstance(error, tf.errors.InvalidArgumentError)
  message = str(translated(error, data_dir=data_dir))
  assert message.startswith('labels outside 0-9 in %s: found 11. Fix: ' % path)


def test_negative_labels_are_caught_too(data_dir):
  path = records.split_path(data_dir, 'test')
  images, labels = records.read_split(path)
  labels[0] = -1
  records.write_split(path, images, labels)
  assert 'found -1.' in str(translated(caught(run_pipeline, data_dir, 'test')))


def test_data_loss_while_running_names_the_damaged_split(data_dir):
  path = records.split_path(data_dir, 'test')
  offset = damage_fourth_record(path)
  message = str(translated(caught(run_pipeline, data_dir, 'test'), data_dir=data_dir))
  assert message.startswith('%s is damaged: record 3 fails its check (corrupted record at %d).' % (path, offset))


def test_data_loss_elsewhere_gets_the_general_advice(data_dir):
  error = tf.errors.DataLossError(None, None, 'Checksum does not match: stored 1 vs. calculated on the restored '
                                  'bytes 2')
  message = str(translated(error, data_dir=data_dir))
  assert message.startswith('a file could not be read intact (Checksum does not match')
  assert 'checkpoint in --model_dir' in message


def test_restore_failure_of_the_saver(tmp_path):
  model_dir = str(tmp_path)
  save_variables(model_dir, lambda: tf.get_variable('other/kernel', [3]))

  def restore():
    with tf.Graph().as_default():
      tf.train.create_global_step()
      tf.get_variable('dense/kernel', [3])
      with tf.Session() as sess:
        tf.train.Saver().restore(sess, tf.train.latest_checkpoint(model_dir))

  error = caught(restore)
  assert tf_errors.RESTORE_FAILED in str(error)
  message = str(translated(error, model_dir=model_dir))
  assert message.startswith('--model_dir=%s holds a checkpoint that does not fit this model (' % model_dir)
  assert 'dense/kernel not found in checkpoint' in message and 'pass a new --model_dir' in message


def test_permission_denied():
  error = tf.errors.PermissionDeniedError(None, None, 'gs://b/m/model.ckpt-5.index; Permission denied')
  message = str(translated(error))
  assert message.startswith('permission denied: gs://b/m/model.ckpt-5.index; Permission denied. Fix: ')


@pytest.mark.parametrize('error', [ValueError('a bug'), tf.errors.InvalidArgumentError(None, None, 'shape bug')])
def test_other_errors_pass_through_unchanged(error):
  with pytest.raises(type(error)) as raised:
    with tf_errors.TensorFlowErrors(data_dir='/nowhere', model_dir='/nowhere'):
      raise error
  assert raised.value is error


def test_recorded_error_logs_are_dropped_only_inside(caplog):
  logger = std_logging.getLogger('tensorflow')
  with tf_errors.TensorFlowErrors():
    logger.error('Error recorded from %s: %s', 'training_loop', 'long stack')
    logger.error('Model diverged with loss = NaN.')
  logger.error('Error recorded from %s: %s', 'outside', 'kept')
  messages = [record.getMessage() for record in caplog.records]
  assert 'Error recorded from training_loop: long stack' not in messages
  assert 'Model diverged with loss = NaN.' in messages and 'Error recorded from outside: kept' in messages


def nan_from_step_model_fn(first_nan_step):
  """A tiny linear model whose loss is NaN from training step `first_nan_step` (1-based) on."""

  def model_fn(features, labels, mode, params):
    del labels, params
    weight = tf.get_variable('w', [], initializer=tf.ones_initializer())
    step = tf.train.get_global_step()
    loss = tf.reduce_mean(features['x']) * weight
    # During step k the global step reads k - 1 (the increment waits for the loss); it becomes k after the step.
    loss = tf.where(step >= first_nan_step - 1, np.float32(np.nan), loss)
    with tf.control_dependencies([loss]):
      train_op = tf.group(tf.assign_add(weight, 0.0), tf.assign_add(step, 1))
    return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)

  return model_fn


def constant_input_fn(params):
  return tf.data.Dataset.from_tensors(({'x': tf.ones([params['batch_size'], 1])}, tf.zeros([params['batch_size']]))
                                      ).repeat()


def test_nan_loss_names_the_step_it_appeared_in(tmp_path):
  config = run_config.build_run_config(model_dir=str(tmp_path), iterations_per_loop=5, num_shards=1,
                                       save_checkpoints_steps=5, master='')
  estimator = tf.estimator.tpu.TPUEstimator(model_fn=nan_from_step_model_fn(7), config=config, use_tpu=False,
                                            train_batch_size=2)
  with pytest.raises(UserError) as raised:
    with tf_errors.TensorFlowErrors(model_dir=str(tmp_path)) as guard:
      estimator.train(constant_input_fn, max_steps=20, hooks=guard.hooks)
  assert str(raised.value).startswith('the training loss became NaN at step 7; training stopped')
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith('model.ckpt-5')


def test_nan_loss_on_a_device_loop_names_the_loop():
  guard = tf_errors.TensorFlowErrors()
  guard.steps.before, guard.steps.after = 50, 100  # one session.run = 50 steps, as on TPU
  assert 'in the training loop of steps 51-100' in str(guard.translate(tf.train.NanLossDuringTrainingError()))
