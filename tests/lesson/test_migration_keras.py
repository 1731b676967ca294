"""The TPUStrategy column of docs/MIGRATION.md: mnist_keras.py, the TF 2 route that replaces TPUEstimator.

Every test asserts on what the real code builds -- strategies, models, datasets, checkpoints, event files -- so it
fails if that step of the port were undone. Most need TensorFlow 2.x and say so when skipped.
"""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from absl import flags

import mnist_keras
from support.graphs import rates_at
from support.paths import REPO_ROOT
from estimator_tpu import model
from estimator_tpu.data import records
from estimator_tpu.keras import checkpoints as keras_checkpoints
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import cluster as tpu_cluster
from flags import mnist_keras as mnist_keras_flags
from flags import mnist_tpu as mnist_tpu_flags
from support.programs import EVAL_BATCH
from support.programs import LOCAL_TPU_ARGS
from support.programs import TRAIN_BATCH
from support.programs import parse_flags

IS_TF2 = int(tf.__version__.split('.')[0]) >= 2
requires_tf2 = pytest.mark.skipif(not IS_TF2, reason='mnist_keras.py is the TF 2.x route; TF %s' % tf.__version__)
tf2 = mnist_keras.tf  # the TF API exactly as mnist_keras.py sees it (tf.compat.v2 is another module object)


# --- Shared TPU rules: the Keras program accepts (and checks) mnist_tpu.py's flags --------------------------------

def test_keras_program_has_the_tpu_programs_flags_and_checks():
  keras = parse_flags(mnist_keras_flags.define_flags, LOCAL_TPU_ARGS)
  tpu = parse_flags(mnist_tpu_flags.define_flags, LOCAL_TPU_ARGS)
  assert sorted(keras) == sorted(tpu)
  with pytest.raises(flags.IllegalFlagValueError, match='gs://'):
    parse_flags(mnist_keras_flags.define_flags, ['--tpu_name=t', '--model_dir=/tmp/m'])


class FakeStrategy(object):
  num_replicas_in_sync = 8


def test_keras_refuses_batches_that_do_not_split_over_the_replicas():
  mnist_keras.check_batches_split(FakeStrategy(), [1024, 1000])
  with pytest.raises(UserError, match='divisible by 8'):
    mnist_keras.check_batches_split(FakeStrategy(), [1024, 1004])


# --- TPUEstimator -> TPUStrategy (TF 2.x) ------------------------------------------------------------------------

@requires_tf2
def test_keras_tpu_route_resolves_connects_initializes_then_builds_the_strategy(monkeypatch):
  calls, resolver = [], object()

  def record(name, result=None):
    return lambda *args: calls.append((name,) + args) or result
  monkeypatch.setattr(tpu_cluster, 'resolve_tpu_cluster', record('resolve', resolver))
  monkeypatch.setattr(tf2.config, 'experimental_connect_to_cluster', record('connect'))
  monkeypatch.setattr(tf2.tpu.experimental, 'initialize_tpu_system', record('initialize'))
  monkeypatch.setattr(tf2.distribute, 'TPUStrategy', record('strategy', 'the TPUStrategy'))
  assert mnist_keras.build_strategy('my-tpu', 'us-central1-b', 'proj') == 'the TPUStrategy'
  assert calls == [('resolve', 'my-tpu', 'us-central1-b', 'proj'), ('connect', resolver),
                   ('initialize', resolver), ('strategy', resolver)]


@requires_tf2
def test_keras_unreachable_tpu_is_a_user_error(monkeypatch):
  monkeypatch.setattr(tpu_cluster, 'resolve_tpu_cluster', lambda *args: object())

  def unreachable(resolver):
    raise tf2.errors.UnavailableError(None, None, 'failed to connect to all addresses')
  monkeypatch.setattr(tf2.config, 'experimental_connect_to_cluster', unreachable)
  with pytest.raises(UserError, match='could not connect to TPU .my-tpu.*failed to connect'):
    mnist_keras.build_strategy('my-tpu')


@requires_tf2
def test_keras_without_a_tpu_uses_the_default_strategy():
  strategy = mnist_keras.build_strategy(None)
  assert strategy is tf2.distribute.get_strategy()
  assert strategy.num_replicas_in_sync == 1


@requires_tf2
def test_keras_model_and_optimizer_variables_are_created_by_the_strategy():
  strategy = tf2.distribute.MirroredStrategy(['/cpu:0'])  # a real non-default strategy, as TPUStrategy would be
  keras = mnist_keras.build_model(strategy, 1e-3, 100, 0.5, steps_per_execution=4)
  assert keras.variables
  for variable in keras.variables + [keras.optimizer.iterations]:
    assert strategy.extended.variable_created_in_scope(variable), variable.name


@requires_tf2
def test_keras_model_has_the_variables_of_mnist_cnn():
  with tf.Graph().as_default():
    model.mnist_cnn(tf.zeros([2, 784]), training=True)
    graph_shapes = [v.shape.as_list() for v in tf.trainable_variables()]
  keras_shapes = [v.shape.as_list() for v in mnist_keras.keras_model.build_keras_cnn().trainable_variables]
  assert keras_shapes == graph_shapes


@requires_tf2
def test_keras_model_scales_pixels_like_mnist_cnn():
  keras = mnist_keras.keras_model.build_keras_cnn()
  first_conv = next(layer for layer in keras.layers if isinstance(layer, tf2.keras.layers.Conv2D))
  conv_input = tf2.keras.Model(keras.inputs, first_conv.input)(np.full((2, 784), 255.0, np.float32))
  assert conv_input.shape == (2, 28, 28, 1)
  np.testing.assert_allclose(conv_input.numpy(), 1.0, rtol=1e-6)


@requires_tf2
def test_keras_bfloat16_policy_with_a_float32_output_layer():
  keras = mnist_keras.keras_model.build_keras_cnn(model.BFLOAT16)
  hidden = [layer for layer in keras.layers if isinstance(layer, (tf2.keras.layers.Conv2D, tf2.keras.layers.Dense))]
  assert [layer.compute_dtype for layer in hidden] == ['bfloat16'] * 3 + ['float32']
  assert {variable.dtype for variable in keras.variables} == {tf2.float32}
  assert keras(np.zeros((2, 784), np.float32)).dtype == tf2.float32  # logits, hence the loss, in float32
  reference = mnist_keras.keras_model.build_keras_cnn()
  assert [v.shape for v in keras.variables] == [v.shape for v in reference.variables]


@requires_tf2
def test_mnist_cnn_cannot_be_wrapped_in_a_keras_lambda():
  """Why keras_model.py rebuilds the network: Keras refuses the untracked variables mnist_cnn would create."""
  images = tf2.keras.Input(shape=(784,))
  with pytest.raises(ValueError, match='not tracked'):
    wrapped = tf2.keras.Model(images, tf2.keras.layers.Lambda(lambda x: model.mnist_cnn(x, training=False))(images))
    wrapped(np.zeros((1, 784), np.float32))


@requires_tf2
def test_keras_datasets_are_the_tpu_input_fn_at_the_global_batch(shared_data_dir):
  dataset = mnist_keras.make_dataset(shared_data_dir, 25)
  assert dataset.element_spec[0][model.IMAGE_KEY].shape.as_list() == [25, 784]
  assert dataset.element_spec[1].shape.as_list() == [25]
  # 250 training examples: batches run on across the epochs, each full.
  assert [len(labels) for _, labels in dataset.take(12)] == [25] * 12


KERAS_EXECUTION, KERAS_SAVE_EVERY, KERAS_STEPS = 5, 7, 20


@pytest.fixture(scope='module')
def keras_run(shared_data_dir, tmp_path_factory):
  """mnist_keras.py's training, in process: executions of 5 steps, a checkpoint asked for every 7 steps."""
  model_dir = str(tmp_path_factory.mktemp('mnist_keras'))
  keras = new_keras_model()
  train_keras(keras, model_dir, shared_data_dir)
  return keras, model_dir


def new_keras_model():
  return mnist_keras.build_model(tf2.distribute.get_strategy(), 1e-3, 100, 0.5, KERAS_EXECUTION)


def train_keras(keras, model_dir, data_dir):
  manager = keras_checkpoints.build_checkpoint_manager(keras, model_dir)
  mnist_keras.train(keras, manager, mnist_keras.make_dataset(data_dir, TRAIN_BATCH), KERAS_STEPS,
                    KERAS_SAVE_EVERY, summary_every=KERAS_EXECUTION)


def checkpoint_steps(model_dir):
  return sorted(int(path.split('-')[-1].split('.')[0]) for path in glob.glob(os.path.join(model_dir, 'ckpt-*.index')))


@requires_tf2
def test_keras_runs_steps_per_execution_and_checkpoints_only_between_executions(keras_run):
  keras, model_dir = keras_run
  assert int(keras.steps_per_execution.numpy()) == KERAS_EXECUTION
  assert int(keras.optimizer.iterations.numpy()) == KERAS_STEPS
  # Asked for every 7 steps, saved at 10 and 20: the first execution boundaries 7 or more steps apart.
  assert checkpoint_steps(model_dir) == [10, 20]


@requires_tf2
def test_keras_summaries_are_written_on_the_host_after_each_execution(keras_run):
  _, model_dir = keras_run
  steps = {}
  for path in glob.glob(os.path.join(model_dir, 'train', 'events.out.tfevents.*')):
    for event in tf.train.summary_iterator(path):
      for value in event.summary.value:
        steps.setdefault(value.tag, []).append(event.step)
  assert sorted(steps['batch_loss']) == [5, 10, 15, 20]
  assert sorted(steps['batch_accuracy']) == [5, 10, 15, 20]


@requires_tf2
def test_keras_train_steps_is_a_total_like_max_steps(keras_run, shared_data_dir):
  trained, model_dir = keras_run
  resumed = new_keras_model()
  train_keras(resumed, model_dir, shared_data_dir)  # the same 20 steps: restores step 20 and trains no further
  assert int(resumed.optimizer.iterations.numpy()) == KERAS_STEPS
  for got, want in zip(resumed.get_weights(), trained.get_weights()):
    np.testing.assert_array_equal(got, want)
  assert checkpoint_steps(model_dir) == [10, 20]


@requires_tf2
def test_keras_evaluate_needs_steps_with_steps_per_execution(keras_run, shared_data_dir):
  """Why mnist_keras.py passes steps to evaluate, as mnist_tpu.py does for TPUEstimator.evaluate."""
  keras, _ = keras_run
  dataset, _ = mnist_keras.make_eval_dataset(shared_data_dir, 'test', EVAL_BATCH)
  with pytest.raises(ValueError, match='steps_per_execution'):
    keras.evaluate(dataset, verbose=0)
  assert keras.evaluate(dataset, steps=2, verbose=0, return_dict=True)['accuracy'] > 0.0


@pytest.mark.skipif(IS_TF2, reason='the message is for TensorFlow 1.x; TF %s runs mnist_keras.py' % tf.__version__)
def test_keras_program_on_tf1_stops_with_one_message(tmp_path):
  result = subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'mnist_keras.py')] + LOCAL_TPU_ARGS + [
      '--model_dir=%s' % (tmp_path / 'm')], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)
  assert result.returncode == 1
  errors = [line for line in result.stderr.splitlines() if line.startswith('error:')]
  assert len(errors) == 1 and 'TensorFlow 2' in errors[0] and tf.__version__ in errors[0]
  assert 'Traceback' not in result.stderr
  assert not os.path.exists(str(tmp_path / 'm'))


@requires_tf2
@pytest.mark.parametrize('schedule', [model.COSINE, model.EXPONENTIAL])
def test_keras_learning_rate_follows_the_estimator_routes_schedule(schedule):
  from estimator_tpu.keras import model as keras_model  # pylint: disable=g-import-not-at-top  (TF 2 only)
  steps = [0, 250, 700, 1000, 1300]
  keras_schedule = keras_model.learning_rate_schedule(2e-3, 1000, 0.5, schedule)
  np.testing.assert_allclose([float(keras_schedule(step)) for step in steps],
                             rates_at(steps, 2e-3, 1000, 0.5, schedule), rtol=1e-5, atol=1e-12)


@requires_tf2
def test_keras_evaluation_scores_every_example_exactly_once(keras_run, shared_data_dir):
  """110 test examples in batches of 25: the fifth batch holds 10 examples and 15 rows of weight 0."""
  keras, _ = keras_run
  dataset, steps = mnist_keras.make_eval_dataset(shared_data_dir, 'test', 25)
  assert steps == 5
  assert [float(weights.numpy().sum()) for _, _, weights in dataset] == [25.0, 25.0, 25.0, 25.0, 10.0]
  metrics = keras.evaluate(dataset, steps=steps, return_dict=True, verbose=0)

  images, labels = records.read_split(records.split_path(shared_data_dir, 'test'))
  logits = keras.predict({model.IMAGE_KEY: images.reshape(110, 784).astype(np.float32)}, verbose=0)
  losses = tf2.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True).numpy()
  assert metrics['accuracy'] == pytest.approx(np.mean(np.argmax(logits, axis=1) == labels), abs=1e-6)
  assert metrics['mean_loss'] == pytest.approx(np.mean(losses), rel=1e-4)
