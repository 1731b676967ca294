"""The rows of docs/MIGRATION.md, one test (or two) each: Estimator (mnist.py) -> TPUEstimator (mnist_tpu.py)
-> TPUStrategy (mnist_keras.py).

Every test asserts on what the real code builds -- estimators, specs, graphs, datasets, strategies, checkpoints
-- so it fails if that step of the port were undone. The Keras tests need TensorFlow 2.x.
"""
import glob
import inspect
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from absl import flags

import mnist
import mnist_keras
import mnist_tpu
import synthetic
from conftest import REPO_ROOT
from conftest import TINY_VALIDATION
from estimator_tpu import estimator_input
from estimator_tpu import estimator_model_fn
from estimator_tpu import input_pipeline
from estimator_tpu import model
from estimator_tpu import model_fn as model_fn_lib
from estimator_tpu import records
from estimator_tpu import run_config
from estimator_tpu.errors import UserError
from flags import mnist as mnist_flags
from flags import mnist_keras as mnist_keras_flags
from flags import mnist_tpu as mnist_tpu_flags

IS_TF2 = int(tf.__version__.split('.')[0]) >= 2
requires_tf2 = pytest.mark.skipif(not IS_TF2, reason='mnist_keras.py is the TF 2.x route; TF %s' % tf.__version__)
tf2 = mnist_keras.tf  # the TF API exactly as mnist_keras.py sees it (tf.compat.v2 is another module object)
MODE = tf.estimator.ModeKeys
LOCAL_TPU_ARGS = ['--use_tpu=false', '--master=']
BATCH = 8
TRAIN_BATCH, EVAL_BATCH, TRAIN_STEPS = 16, 50, 6  # tiny data: 250 train, 110 test examples


def parse_flags(define, args):
  fv = flags.FlagValues()
  define(fv)
  fv(['program'] + args)
  return fv


def build_spec(model_fn, mode, params=None):
  """Calls a model_fn on a [BATCH, 784] batch in a fresh graph; params only for TPUEstimator's model_fn."""
  graph = tf.Graph()
  with graph.as_default():
    tf.train.create_global_step()
    features = {model_fn_lib.IMAGE_KEY: tf.zeros([BATCH, 784])}
    labels = None if mode == MODE.PREDICT else tf.zeros([BATCH], tf.int32)
    if params is None:
      spec = model_fn(features, labels, mode)
    else:
      spec = model_fn(features, labels, mode, params=params)
  return graph, spec


def plain_model_fn():
  return estimator_model_fn.model_fn_builder(learning_rate=1e-3, decay_steps=100, decay_rate=0.5)


def tpu_model_fn():
  return model_fn_lib.model_fn_builder(learning_rate=1e-3, decay_steps=100, decay_rate=0.5)


def output_shapes(dataset):
  features, labels = tf.data.get_output_shapes(dataset)
  return features[model_fn_lib.IMAGE_KEY].as_list(), labels.as_list()


@pytest.fixture(scope='module')
def tiny_data(tmp_path_factory):
  """conftest's data_dir, once per module: the in-process program runs below share it."""
  root = tmp_path_factory.mktemp('tiny')
  synthetic.write_idx_dir(str(root / 'idx'))
  records.convert_idx_dir(str(root / 'idx'), str(root / 'data'), validation_size=TINY_VALIDATION)
  return str(root / 'data')


# --- Estimator -> TPUEstimator: the estimator and its RunConfig ---------------------------------------------------

def test_only_the_tpu_program_builds_a_tpu_estimator_with_a_tpu_config(monkeypatch, tmp_path):
  monkeypatch.setattr(mnist, 'FLAGS', parse_flags(mnist_flags.define_mnist_flags, ['--save_checkpoints_steps=30']))
  plain = mnist.build_estimator(str(tmp_path / 'plain'))
  assert type(plain) is tf.estimator.Estimator  # pylint: disable=unidiomatic-typecheck
  assert not isinstance(plain.config, tf.estimator.tpu.RunConfig)

  monkeypatch.setattr(mnist_tpu, 'FLAGS', parse_flags(mnist_tpu_flags.define_mnist_tpu_flags, LOCAL_TPU_ARGS + [
      '--iterations=7', '--num_shards=4', '--save_checkpoints_steps=28']))
  tpu = mnist_tpu.build_estimator(str(tmp_path / 'tpu'), 32)
  assert isinstance(tpu, tf.estimator.tpu.TPUEstimator)
  assert isinstance(tpu.config, tf.estimator.tpu.RunConfig)
  tpu_config = tpu.config.tpu_config
  assert (tpu_config.iterations_per_loop, tpu_config.num_shards) == (7, 4)
  assert tpu_config.per_host_input_for_training == tf.estimator.tpu.InputPipelineConfig.PER_HOST_V2


class FakeTpuResolver(object):
  """What RunConfig asks of a TPUClusterResolver: the TPU worker's address and its cluster."""

  def master(self):
    return 'grpc://10.0.0.2:8470'

  def cluster_spec(self):
    return tf.train.ClusterSpec({'worker': ['10.0.0.2:8470']})


def test_tpu_run_config_takes_the_tpu_address_from_the_resolver(tmp_path):
  config = run_config.build_run_config(
      str(tmp_path), iterations_per_loop=5, num_shards=8, save_checkpoints_steps=10, master='',
      cluster=FakeTpuResolver())
  assert config.master == 'grpc://10.0.0.2:8470'
  assert config.cluster_spec.as_dict() == {'worker': ['10.0.0.2:8470']}


# --- model_fn: spec, metrics, summaries ---------------------------------------------------------------------------

def test_only_the_estimator_builds_metric_ops_inside_model_fn():
  graph, spec = build_spec(plain_model_fn(), MODE.EVAL)
  assert isinstance(spec, tf.estimator.EstimatorSpec)
  assert sorted(spec.eval_metric_ops) == ['accuracy', 'mean_loss']
  assert graph.get_collection(tf.GraphKeys.LOCAL_VARIABLES)  # the metrics' accumulators, in the model graph

  graph, spec = build_spec(tpu_model_fn(), MODE.EVAL, params={'use_tpu': True, 'batch_size': BATCH})
  assert isinstance(spec, tf.estimator.tpu.TPUEstimatorSpec)
  assert spec.eval_metrics[0] is model_fn_lib.metric_fn
  # metric_fn has not run: TPUEstimator calls it later, on the host, with the tensors it ships off the TPU.
  assert not graph.get_collection(tf.GraphKeys.LOCAL_VARIABLES)


def test_estimator_model_fn_writes_its_summaries_from_inside_the_graph():
  graph, spec = build_spec(plain_model_fn(), MODE.TRAIN)
  assert isinstance(spec, tf.estimator.EstimatorSpec)
  summaries = graph.get_collection(tf.GraphKeys.SUMMARIES)
  assert [s.op.name for s in summaries] == [estimator_model_fn.LEARNING_RATE_SUMMARY]


def test_only_the_tpu_model_fn_all_reduces_gradients():
  graph, _ = build_spec(plain_model_fn(), MODE.TRAIN)
  assert 'CrossReplicaSum' not in {op.type for op in graph.get_operations()}
  graph, _ = build_spec(tpu_model_fn(), MODE.TRAIN, params={'use_tpu': True, 'batch_size': BATCH})
  assert 'CrossReplicaSum' in {op.type for op in graph.get_operations()}


# --- input_fn: batch size and static shapes -----------------------------------------------------------------------

def test_only_the_tpu_input_has_static_shapes_and_full_batches(data_dir):
  with tf.Graph().as_default():
    plain = estimator_input.input_fn_builder(data_dir, 'test', False, 25)()
    tpu = input_pipeline.input_fn_builder(data_dir, 'test', False)({'batch_size': 25})
    assert output_shapes(plain) == ([None, 784], [None])
    assert output_shapes(tpu) == ([25, 784], [25])
    plain_sizes, tpu_sizes = batch_sizes(plain), batch_sizes(tpu)
  assert plain_sizes == [25, 25, 25, 25, 10]  # 110 test examples: all of them, in a short last batch
  assert tpu_sizes == [25, 25, 25, 25]


def batch_sizes(dataset):
  _, labels = tf.data.make_one_shot_iterator(dataset).get_next()
  sizes = []
  with tf.Session() as sess:
    while True:
      try:
        sizes.append(len(sess.run(labels)))
      except tf.errors.OutOfRangeError:
        return sizes


def test_estimator_input_fn_takes_no_params():
  plain = estimator_input.input_fn_builder('/data', 'train', True, 32)
  tpu = input_pipeline.input_fn_builder('/data', 'train', True)
  assert list(inspect.signature(plain).parameters) == []
  assert list(inspect.signature(tpu).parameters) == ['params']


# --- The programs, run in process with their estimator calls recorded ---------------------------------------------

def run_recorded(program, define_flags, args, estimator_cls, input_module, tpu_step_rules=False):
  """Runs program.run() with parsed `args`; records train/evaluate arguments and what every input_fn returned.

  With tpu_step_rules, train/evaluate refuse missing step counts the way TPUEstimator does on a TPU (off TPU it
  would train forever on a repeating input, or read the eval input to its end).
  """
  calls = {'train': [], 'evaluate': [], 'inputs': []}
  builder = input_module.input_fn_builder

  def recording_builder(*builder_args, **builder_kwargs):
    input_fn = builder(*builder_args, **builder_kwargs)
    if 'params' in inspect.signature(input_fn).parameters:
      def recorded(params):
        return record_input(input_fn(params), params['batch_size'])
    else:
      def recorded():
        return record_input(input_fn(), None)
    return recorded

  def record_input(dataset, params_batch_size):
    calls['inputs'].append({'params_batch_size': params_batch_size, 'shapes': output_shapes(dataset)})
    return dataset

  def recording(name):
    original = getattr(estimator_cls, name)

    def method(self, *method_args, **kwargs):
      bound = inspect.signature(original).bind(self, *method_args, **kwargs)
      steps = {k: v for k, v in bound.arguments.items() if k in ('steps', 'max_steps') and v is not None}
      calls[name].append(steps)
      if tpu_step_rules and not steps:
        raise ValueError('TPUEstimator.%s on a TPU needs %s.' % (name, 'max_steps or steps' if name == 'train'
                                                                 else 'steps'))
      return original(self, *method_args, **kwargs)
    return method

  with pytest.MonkeyPatch.context() as patch:
    patch.setattr(program, 'FLAGS', parse_flags(define_flags, args))
    patch.setattr(input_module, 'input_fn_builder', recording_builder)
    patch.setattr(estimator_cls, 'train', recording('train'))
    patch.setattr(estimator_cls, 'evaluate', recording('evaluate'))
    program.run()
  return calls


def program_args(tiny_data, model_dir):
  return ['--data_dir=%s' % tiny_data, '--model_dir=%s' % model_dir, '--train_steps=%d' % TRAIN_STEPS,
          '--batch_size=%d' % TRAIN_BATCH, '--eval_batch_size=%d' % EVAL_BATCH, '--num_predictions=0']


@pytest.fixture(scope='module')
def estimator_run(tiny_data, tmp_path_factory):
  model_dir = str(tmp_path_factory.mktemp('mnist'))
  calls = run_recorded(mnist, mnist_flags.define_mnist_flags, program_args(tiny_data, model_dir),
                       tf.estimator.Estimator, estimator_input)
  with open(os.path.join(model_dir, mnist.RESULTS_FILE)) as f:
    return calls, json.load(f)


@pytest.fixture(scope='module')
def tpu_run(tiny_data, tmp_path_factory):
  model_dir = str(tmp_path_factory.mktemp('mnist_tpu'))
  args = LOCAL_TPU_ARGS + ['--iterations=3', '--save_checkpoints_steps=3'] + program_args(tiny_data, model_dir)
  try:
    return run_recorded(mnist_tpu, mnist_tpu_flags.define_mnist_tpu_flags, args, tf.estimator.tpu.TPUEstimator,
                        input_pipeline, tpu_step_rules=True)
  except ValueError as e:
    return {'error': str(e)}


def test_tpu_estimator_hands_input_fn_its_batch_size_in_params(tpu_run):
  assert 'error' not in tpu_run
  inputs = tpu_run['inputs']
  assert {i['params_batch_size'] for i in inputs} == {TRAIN_BATCH, EVAL_BATCH}  # global batch off TPU
  for i in inputs:
    assert i['shapes'] == ([i['params_batch_size'], 784], [i['params_batch_size']])


def test_tpu_program_gives_train_and_evaluate_their_step_counts(tpu_run):
  assert 'error' not in tpu_run, tpu_run.get('error')
  assert tpu_run['train'] and tpu_run['evaluate']
  assert all(call.get('max_steps', 0) > 0 or call.get('steps', 0) > 0 for call in tpu_run['train'])
  assert all(call.get('steps', 0) > 0 for call in tpu_run['evaluate'])


def test_estimator_program_evaluates_to_the_end_of_its_input(estimator_run):
  calls, results = estimator_run
  assert calls['evaluate'] == [{}]  # no steps: read to the end
  assert results['eval']['examples'] == 110  # 2 full batches of 50 and a short one of 10
  assert {tuple(i['shapes'][1]) for i in calls['inputs']} == {(None,)}
  assert results['global_step'] == TRAIN_STEPS


# --- Shared TPU rules: the Keras program accepts (and checks) mnist_tpu.py's flags --------------------------------

def test_keras_program_has_the_tpu_programs_flags_and_checks():
  keras = parse_flags(mnist_keras_flags.define_mnist_keras_flags, LOCAL_TPU_ARGS)
  tpu = parse_flags(mnist_tpu_flags.define_mnist_tpu_flags, LOCAL_TPU_ARGS)
  assert sorted(keras) == sorted(tpu)
  with pytest.raises(flags.IllegalFlagValueError, match='gs://'):
    parse_flags(mnist_keras_flags.define_mnist_keras_flags, ['--tpu_name=t', '--model_dir=/tmp/m'])


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
  monkeypatch.setattr(run_config, 'resolve_tpu_cluster', record('resolve', resolver))
  monkeypatch.setattr(tf2.config, 'experimental_connect_to_cluster', record('connect'))
  monkeypatch.setattr(tf2.tpu.experimental, 'initialize_tpu_system', record('initialize'))
  monkeypatch.setattr(tf2.distribute, 'TPUStrategy', record('strategy', 'the TPUStrategy'))
  assert mnist_keras.build_strategy('my-tpu', 'us-central1-b', 'proj') == 'the TPUStrategy'
  assert calls == [('resolve', 'my-tpu', 'us-central1-b', 'proj'), ('connect', resolver),
                   ('initialize', resolver), ('strategy', resolver)]


@requires_tf2
def test_keras_unreachable_tpu_is_a_user_error(monkeypatch):
  monkeypatch.setattr(run_config, 'resolve_tpu_cluster', lambda *args: object())

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
  with tf.Graph().as_default() as graph:
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
def test_mnist_cnn_cannot_be_wrapped_in_a_keras_lambda():
  """Why keras_model.py rebuilds the network: Keras refuses the untracked variables mnist_cnn would create."""
  images = tf2.keras.Input(shape=(784,))
  with pytest.raises(ValueError, match='not tracked'):
    wrapped = tf2.keras.Model(images, tf2.keras.layers.Lambda(lambda x: model.mnist_cnn(x, training=False))(images))
    wrapped(np.zeros((1, 784), np.float32))


@requires_tf2
def test_keras_datasets_are_the_tpu_input_fn_at_the_global_batch(tiny_data):
  dataset = mnist_keras.make_dataset(tiny_data, 'test', False, 25)
  assert dataset.element_spec[0][model_fn_lib.IMAGE_KEY].shape.as_list() == [25, 784]
  assert dataset.element_spec[1].shape.as_list() == [25]
  assert [len(labels) for _, labels in dataset] == [25, 25, 25, 25]  # 110 examples: full batches only


KERAS_EXECUTION, KERAS_SAVE_EVERY, KERAS_STEPS = 5, 7, 20


@pytest.fixture(scope='module')
def keras_run(tiny_data, tmp_path_factory):
  """mnist_keras.py's training, in process: executions of 5 steps, a checkpoint asked for every 7 steps."""
  model_dir = str(tmp_path_factory.mktemp('mnist_keras'))
  keras = new_keras_model()
  train_keras(keras, model_dir, tiny_data)
  return keras, model_dir


def new_keras_model():
  return mnist_keras.build_model(tf2.distribute.get_strategy(), 1e-3, 100, 0.5, KERAS_EXECUTION)


def train_keras(keras, model_dir, data_dir):
  manager = mnist_keras.build_checkpoint_manager(keras, model_dir)
  mnist_keras.train(keras, manager, mnist_keras.make_dataset(data_dir, 'train', True, TRAIN_BATCH), KERAS_STEPS,
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
def test_keras_train_steps_is_a_total_like_max_steps(keras_run, tiny_data):
  trained, model_dir = keras_run
  resumed = new_keras_model()
  train_keras(resumed, model_dir, tiny_data)  # the same 20 steps: restores step 20 and trains no further
  assert int(resumed.optimizer.iterations.numpy()) == KERAS_STEPS
  for got, want in zip(resumed.get_weights(), trained.get_weights()):
    np.testing.assert_array_equal(got, want)
  assert checkpoint_steps(model_dir) == [10, 20]


@requires_tf2
def test_keras_evaluate_needs_steps_with_steps_per_execution(keras_run, tiny_data):
  """Why mnist_keras.py passes steps to evaluate, as mnist_tpu.py does for TPUEstimator.evaluate."""
  keras, _ = keras_run
  dataset = mnist_keras.make_dataset(tiny_data, 'test', False, EVAL_BATCH)
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


# --- docs/MIGRATION.md names only tests that exist -----------------------------------------------------------------

def migration_test_cells():
  """The last cell of every row of the tables in docs/MIGRATION.md whose last column is 'Test'."""
  cells, in_test_table = [], False
  with open(os.path.join(REPO_ROOT, 'docs', 'MIGRATION.md')) as f:
    for line in f:
      if not line.startswith('|'):
        in_test_table = False
        continue
      last_cell = line.rstrip().rstrip('|').split('|')[-1].strip()
      if last_cell == 'Test':
        in_test_table = True
      elif in_test_table and not last_cell.startswith('---'):
        cells.append(last_cell)
  return cells


def test_every_migration_row_names_existing_tests():
  cells = migration_test_cells()
  assert len(cells) == 13 + 4  # the step-by-step table and the shared rules
  for test_column in cells:
    names = re.findall(r'`((?:tests/[\w/]+\.py::)?test_\w+)`', test_column)
    assert names or 'TBD-lead' in test_column, test_column
    for name in names:
      path, _, function = name.rpartition('::') if '::' in name else ('tests/test_migration.py', '', name)
      with open(os.path.join(REPO_ROOT, path)) as f:
        assert re.search(r'^def %s\(' % function, f.read(), re.M), name
