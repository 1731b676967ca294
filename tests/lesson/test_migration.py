"""The rows of docs/MIGRATION.md, Estimator (mnist.py) -> TPUEstimator (mnist_tpu.py); the TPUStrategy column
is in test_migration_keras.py.

Every test asserts on what the real code builds -- estimators, specs, graphs, datasets, recorded calls -- so it
fails if that step of the port were undone.
"""
import inspect
import json
import os
import re

import pytest
import tensorflow.compat.v1 as tf

import mnist
import mnist_tpu
from estimator_tpu import runner
from support.paths import REPO_ROOT
from estimator_tpu import model
from estimator_tpu import rules
from estimator_tpu.estimator import input_fn as estimator_input
from estimator_tpu.estimator import model_fn as estimator_model_fn
from estimator_tpu.tpu import input_fn as tpu_input
from estimator_tpu.tpu import model_fn as model_fn_lib
from estimator_tpu.tpu import run_config
from flags import mnist as mnist_flags
from flags import mnist_tpu as mnist_tpu_flags
from support.programs import EVAL_BATCH
from support.programs import LOCAL_TPU_ARGS
from support.programs import TRAIN_BATCH
from support.programs import TRAIN_STEPS
from support.programs import parse_flags
from support.programs import training_job

MODE = tf.estimator.ModeKeys
BATCH = 8


def build_spec(model_fn, mode, params=None):
  """Calls a model_fn on a [BATCH, 784] batch in a fresh graph; params only for TPUEstimator's model_fn."""
  graph = tf.Graph()
  with graph.as_default():
    tf.train.create_global_step()
    features = {model.IMAGE_KEY: tf.zeros([BATCH, 784])}
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
  return features[model.IMAGE_KEY].as_list(), labels.as_list()


# --- Estimator -> TPUEstimator: the estimator and its RunConfig ---------------------------------------------------

def test_only_the_tpu_program_builds_a_tpu_estimator_with_a_tpu_config(tmp_path):
  plain = mnist.build_estimator(parse_flags(mnist_flags.define_flags, ['--save_checkpoints_steps=30']),
                                training_job(str(tmp_path / 'plain')))
  assert type(plain) is tf.estimator.Estimator  # pylint: disable=unidiomatic-typecheck
  assert not isinstance(plain.config, tf.estimator.tpu.RunConfig)

  fv = parse_flags(mnist_tpu_flags.define_flags, LOCAL_TPU_ARGS + [
      '--iterations=7', '--num_shards=4', '--save_checkpoints_steps=28', '--batch_size=32', '--eval_batch_size=8'])
  tpu = mnist_tpu.build_estimator(fv, training_job(str(tmp_path / 'tpu')))
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
  assert spec.eval_metrics[0] is model.metric_fn
  # metric_fn has not run: TPUEstimator calls it later, on the host, with the tensors it ships off the TPU.
  assert not graph.get_collection(tf.GraphKeys.LOCAL_VARIABLES)


def test_estimator_model_fn_writes_its_summaries_from_inside_the_graph():
  graph, spec = build_spec(plain_model_fn(), MODE.TRAIN)
  assert isinstance(spec, tf.estimator.EstimatorSpec)
  summaries = graph.get_collection(tf.GraphKeys.SUMMARIES)
  assert [s.op.name for s in summaries] == ['learning_rate']


def test_only_the_tpu_model_fn_all_reduces_gradients():
  graph, _ = build_spec(plain_model_fn(), MODE.TRAIN)
  assert 'CrossReplicaSum' not in {op.type for op in graph.get_operations()}
  graph, _ = build_spec(tpu_model_fn(), MODE.TRAIN, params={'use_tpu': True, 'batch_size': BATCH})
  assert 'CrossReplicaSum' in {op.type for op in graph.get_operations()}


# --- input_fn: batch size and static shapes -----------------------------------------------------------------------

def test_only_the_tpu_input_has_static_shapes_and_full_batches(data_dir):
  with tf.Graph().as_default():
    plain = estimator_input.eval_input_fn_builder(data_dir, 'test', 25)()
    steps = tpu_input.eval_steps(data_dir, 'test', 25)
    tpu = tpu_input.eval_input_fn_builder(data_dir, 'test', 25, steps)({'batch_size': 25})
    assert output_shapes(plain) == ([None, 784], [None])
    assert output_shapes(tpu) == ([25, 784], [25])
    plain_sizes, tpu_sizes = batch_sizes(plain), batch_sizes(tpu)
  assert plain_sizes == [25, 25, 25, 25, 10]  # 110 test examples: all of them, in a short last batch
  assert tpu_sizes == [25, 25, 25, 25, 25]  # all of them, the last batch padded to full size


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
  plain = estimator_input.train_input_fn_builder('/data', 32)
  tpu = tpu_input.train_input_fn_builder('/data')
  assert list(inspect.signature(plain).parameters) == []
  assert list(inspect.signature(tpu).parameters) == ['params']


# --- The programs, run in process with their estimator calls recorded ---------------------------------------------

def run_recorded(program, define_flags, args, estimator_cls, input_module, tpu_step_rules=False):
  """Runs the program's route with parsed `args`; records train/evaluate arguments and what every input_fn
  returned.

  With tpu_step_rules, train/evaluate refuse missing step counts the way TPUEstimator does on a TPU (off TPU it
  would train forever on a repeating input, or read the eval input to its end).
  """
  calls = {'train': [], 'evaluate': [], 'inputs': []}

  def recording_builder_for(builder):
    return lambda *builder_args, **builder_kwargs: recording_builder(builder, *builder_args, **builder_kwargs)

  def recording_builder(builder, *builder_args, **builder_kwargs):
    built = builder(*builder_args, **builder_kwargs)
    input_fn = built[0] if isinstance(built, tuple) else built  # eval: (input_fn, steps)
    if 'params' in inspect.signature(input_fn).parameters:
      def recorded(params):
        return record_input(input_fn(params), params['batch_size'])
    else:
      def recorded():
        return record_input(input_fn(), None)
    return (recorded,) + built[1:] if isinstance(built, tuple) else recorded

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
    for name in ('train_input_fn_builder', 'eval_input_fn_builder'):
      patch.setattr(input_module, name, recording_builder_for(getattr(input_module, name)))
    patch.setattr(estimator_cls, 'train', recording('train'))
    patch.setattr(estimator_cls, 'evaluate', recording('evaluate'))
    runner.run(parse_flags(define_flags, args), program.ROUTE)
  return calls


def program_args(shared_data_dir, model_dir):
  return ['--data_dir=%s' % shared_data_dir, '--model_dir=%s' % model_dir, '--train_steps=%d' % TRAIN_STEPS,
          '--batch_size=%d' % TRAIN_BATCH, '--eval_batch_size=%d' % EVAL_BATCH, '--num_predictions=0']


@pytest.fixture(scope='module')
def estimator_run(shared_data_dir, tmp_path_factory):
  model_dir = str(tmp_path_factory.mktemp('mnist'))
  calls = run_recorded(mnist, mnist_flags.define_flags, program_args(shared_data_dir, model_dir),
                       tf.estimator.Estimator, estimator_input)
  with open(os.path.join(model_dir, mnist.ROUTE.results_file)) as f:
    return calls, json.load(f)


@pytest.fixture(scope='module')
def tpu_run(shared_data_dir, tmp_path_factory):
  model_dir = str(tmp_path_factory.mktemp('mnist_tpu'))
  args = LOCAL_TPU_ARGS + ['--iterations=3', '--save_checkpoints_steps=3'] + program_args(shared_data_dir, model_dir)
  try:
    return run_recorded(mnist_tpu, mnist_tpu_flags.define_flags, args, tf.estimator.tpu.TPUEstimator,
                        tpu_input, tpu_step_rules=True)
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


# --- docs/MIGRATION.md names only tests that exist -----------------------------------------------------------------

DEFAULT_TEST_FILES = ('tests/lesson/test_migration.py', 'tests/lesson/test_migration_keras.py')


def read(path):
  with open(os.path.join(REPO_ROOT, path)) as f:
    return f.read()


def migration_test_cells():
  """The last cell of every row of the tables in docs/MIGRATION.md whose last column is 'Test'."""
  cells, in_test_table = [], False
  for line in read('docs/MIGRATION.md').splitlines():
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
  assert len(cells) == len(rules.RULES)  # one row per rule
  for test_column in cells:
    names = re.findall(r'`((?:tests/[\w/]+\.py::)?test_\w+)`', test_column)
    assert names, test_column
    for name in names:
      path, _, function = name.rpartition('::')
      paths = [path] if path else DEFAULT_TEST_FILES
      assert any(re.search(r'^def %s\(' % function, read(p), re.M) for p in paths), name
