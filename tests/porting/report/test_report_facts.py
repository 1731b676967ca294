"""The TensorFlow facts the port report's `required` findings rest on, checked against the installed TensorFlow's own
TPUEstimator and XLA (both legs), so that a finding is required because TensorFlow refuses the code, not because
the report says so. docs/PORT_REPORT.md cites these tests for its judgments."""
import argparse
import inspect

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from tensorflow.python.tpu import training_loop
from tensorflow_estimator.python.estimator import estimator as estimator_lib
from tensorflow_estimator.python.estimator.tpu import tpu_estimator

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.readiness import xla


def tiny_model_fn(features, labels, mode, params):
  del labels, params
  loss = tf.reduce_mean(features)
  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=tf.no_op())


def tpu_estimator_with(params, model_dir=None):
  config = tf.estimator.tpu.RunConfig(model_dir=model_dir, tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=1))
  return tf.estimator.tpu.TPUEstimator(model_fn=tiny_model_fn, config=config, use_tpu=False, train_batch_size=8,
                                       params=params)


def batches(params):
  return tf.data.Dataset.from_tensors(tf.zeros([2])).repeat().batch(params['batch_size'], drop_remainder=True)


def test_params_with_a_reserved_key_or_not_a_dict_are_refused(tmp_path):
  """Rule 3: TPUEstimator adds batch_size and context to params itself: it refuses them in params
  (TPUEstimator.__init__) and stores them with params[key] = value (_add_item_to_params)."""
  with pytest.raises(ValueError, match='reserved keys'):
    tpu_estimator_with({'batch_size': 8})
  with pytest.raises(ValueError, match='reserved keys'):
    tpu_estimator_with({'context': None})
  with pytest.raises(TypeError, match='item assignment'):
    tpu_estimator_with(argparse.Namespace(learning_rate=0.1), str(tmp_path)).train(batches, max_steps=1)
  assert tpu_estimator_with({'global_batch_size': 8}).params == {'global_batch_size': 8}


def test_an_input_fn_whose_params_a_partial_bound_is_refused(tmp_path):
  """Rule 3: functools.partial(input_fn, ..., params) leaves TPUEstimator no params to pass."""
  import functools

  def input_fn(size, params=None):
    del params
    return tf.data.Dataset.from_tensors(tf.zeros([size, 2])).repeat()

  estimator = tpu_estimator_with(None, str(tmp_path))
  with pytest.raises(ValueError, match='does not include params'):
    estimator.train(functools.partial(input_fn, 8, {}), max_steps=1)


def test_nothing_inside_a_tpu_computation_can_be_fetched():
  """Rule 8: a hook that fetches a tensor model_fn made (LoggingTensorHook) fails on a TPU (tpu.py, AddOp)."""
  graph = tf.Graph()
  with graph.as_default():
    tf.tpu.rewrite(lambda: tf.identity(tf.constant(1.0), name='cross_entropy'))
  inside = [op for op in graph.get_operations() if op.name.endswith('cross_entropy')]
  assert inside and not any(graph.is_fetchable(op) for op in inside)


def test_training_accepts_an_estimator_spec_but_not_its_chief_hooks():
  """Rule 5: on a TPU, training takes an EstimatorSpec (evaluation and prediction do not); rule 8: not with
  training_chief_hooks (tpu_estimator.py, _ModelFnWrapper._verify_estimator_spec)."""
  with tf.Graph().as_default():
    loss = tf.constant(1.0)
    spec = tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=loss, train_op=tf.no_op())
    assert tpu_estimator._ModelFnWrapper._verify_estimator_spec(None, spec) is spec
    chief = spec._replace(training_chief_hooks=[tf.train.StopAtStepHook(last_step=1)])
    with pytest.raises(ValueError, match='training_chief_hooks'):
      tpu_estimator._ModelFnWrapper._verify_estimator_spec(None, chief)
  source = inspect.getsource(tpu_estimator._ModelFnWrapper)
  assert 'used by TPU evaluation must have type' in source and 'used by TPU prediction must have type' in source


def test_a_distribution_strategy_takes_training_off_the_tpu_loop():
  """Rule 1: TPUEstimator inherits Estimator._train_model, which trains through the strategy when there is one."""
  assert tpu_estimator.TPUEstimator._train_model is estimator_lib.Estimator._train_model
  assert 'self._train_distribution' in inspect.getsource(estimator_lib.Estimator._train_model)


@pytest.mark.parametrize('op_type,make', [
    ('BlockLSTM', lambda x, lengths: tf.raw_ops.BlockLSTM(
        seq_len_max=tf.cast(tf.reduce_max(lengths), tf.int64), x=x, cs_prev=tf.zeros([4, 8]), h_prev=tf.zeros([4, 8]),
        w=tf.zeros([11, 32]), wci=tf.zeros([8]), wcf=tf.zeros([8]), wco=tf.zeros([8]), b=tf.zeros([32]))),
    ('LSTMBlockCell', lambda x, lengths: tf.raw_ops.LSTMBlockCell(
        x=x[0], cs_prev=tf.zeros([4, 8]), h_prev=tf.zeros([4, 8]), w=tf.zeros([11, 32]), wci=tf.zeros([8]),
        wcf=tf.zeros([8]), wco=tf.zeros([8]), b=tf.zeros([32]))),
])
def test_fused_lstm_ops_have_no_xla_kernel(op_type, make):
  """Rule 18: LSTMBlockFusedCell (BlockLSTM) and LSTMBlockCell have no XLA kernel; BasicLSTMCell's ops do."""
  xla.register_xla_kernels()
  with tf.Graph().as_default() as graph:
    make(tf.zeros([5, 4, 3]), tf.constant([5, 3, 2, 1]))
    ops = [op for op in graph.get_operations() if op.type == op_type]
    assert ops and not xla.has_xla_kernel(ops[0])
    cell_ops = [op for op in graph.get_operations() if op.type in ('MatMul', 'Sigmoid', 'Tanh')]
    tf.nn.rnn_cell.BasicLSTMCell(8)(tf.zeros([4, 3]), tf.nn.rnn_cell.LSTMStateTuple(tf.zeros([4, 8]),
                                                                                    tf.zeros([4, 8])))
    cell_ops = [op for op in graph.get_operations() if op.type in ('MatMul', 'Sigmoid', 'Tanh')]
    assert cell_ops and all(xla.has_xla_kernel(op) for op in cell_ops)


def test_printing_from_the_graph_has_no_xla_kernel():
  """Rule 18 (no-xla-kernel): tf.Print (the Print op) and tf.print (PrintV2 over StringFormat) have no XLA kernel,
  so a model_fn that prints in a mode it runs on the TPU cannot compile; the names the report lists are these."""
  with tf.Graph().as_default() as graph:
    values = tf.zeros([3])
    tf.Print(values, [values], 'values')
    tf.print(values)
    made = dict((op.type, op) for op in graph.get_operations())
  assert set(['Print', 'PrintV2', 'StringFormat']) <= set(made)
  assert not any(xla.has_xla_kernel(made[kind]) for kind in ('Print', 'PrintV2', 'StringFormat'))
  assert apis.no_xla_kernel('tensorflow.Print') and apis.no_xla_kernel('tensorflow.print')


def compile_on_xla(computation, *inputs):
  with tf.Graph().as_default():
    placeholders = [tf.placeholder(tf.as_dtype(value.dtype), value.shape) for value in inputs]
    outputs = tf.xla.experimental.compile(computation, inputs=placeholders)
    with tf.Session() as session:
      session.run(tf.tables_initializer())
      return session.run(outputs, dict(zip(placeholders, inputs)))


def test_sequence_mask_needs_maxlen_on_xla():
  """Rule 4: without maxlen the mask's width is the largest length, which XLA must know when it compiles."""
  import numpy as np
  lengths = np.array([5, 3, 2], np.int32)
  assert compile_on_xla(lambda l: tf.reduce_sum(tf.cast(tf.sequence_mask(l, 5), tf.float32)), lengths)[0] == 10
  with pytest.raises(tf.errors.InvalidArgumentError, match='compile-time constant'):
    compile_on_xla(lambda l: tf.reduce_sum(tf.cast(tf.sequence_mask(l), tf.float32)), lengths)
  # A maxlen computed from the batch (the longest length) is no constant either: the same error.
  with pytest.raises(tf.errors.InvalidArgumentError, match='compile-time constant'):
    compile_on_xla(lambda l: tf.reduce_sum(tf.cast(tf.sequence_mask(l, tf.reduce_max(l)), tf.float32)), lengths)


def test_string_lookups_do_not_compile_on_xla():
  """Rule 15: vocabulary lookups (feature columns, tables) on strings inside the model do not compile."""
  import numpy as np

  def lookup(words):
    table = tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer(['a', 'b'], [0, 1], value_dtype=tf.int64), num_oov_buckets=1)
    return tf.reduce_sum(table.lookup(words))

  with pytest.raises(tf.errors.InvalidArgumentError):
    compile_on_xla(lookup, np.array([b'a', b'c'], dtype=object))


def test_a_string_columns_constructor_adds_no_op_and_its_applier_builds_the_lookup():
  """Rule 15 (string-columns-in-model-fn): categorical_column_with_vocabulary_list / _file / _hash_bucket made inside
  model_fn only describe the column; the table and its lookup (or the string hash) are built where input_layer applies
  it, the one place the change is (held-out-20's hpandana_housing_gaccum)."""
  with tf.Graph().as_default() as graph:
    column = tf.feature_column.categorical_column_with_vocabulary_list('kind', ['a', 'b'])
    hashed = tf.feature_column.categorical_column_with_hash_bucket('word', 10)
    assert graph.get_operations() == []
    tf.feature_column.input_layer({'kind': tf.constant([['a']]), 'word': tf.constant([['x']])},
                                  [tf.feature_column.indicator_column(column),
                                   tf.feature_column.indicator_column(hashed)])
    kinds = set(op.type for op in graph.get_operations())
  assert set(['LookupTableFindV2', 'StringToHashBucketFast']) <= kinds


def test_a_premade_classifiers_label_vocabulary_looks_the_labels_up_inside_its_model_fn(tmp_path):
  """Rule 15 (premade-string-columns, label_vocabulary=): the head of a premade classifier given a label vocabulary
  builds a string table and looks the labels up in its model_fn, the TPU computation, in training; without one it
  builds none (held-out-20's erebetez_xcoracle_dnn)."""
  def table_ops(**vocabulary):
    classifier = tf.estimator.LinearClassifier([tf.feature_column.numeric_column('x')], n_classes=2,
                                               model_dir=str(tmp_path), **vocabulary)
    with tf.Graph().as_default() as graph:
      tf.train.create_global_step()
      labels = tf.constant([['a'], ['b']]) if vocabulary else tf.constant([[0], [1]])
      classifier.model_fn({'x': tf.zeros([2, 1])}, labels, tf.estimator.ModeKeys.TRAIN, classifier.config)
      return set(op.type for op in graph.get_operations() if 'Lookup' in op.type or 'HashTable' in op.type)
  assert 'LookupTableFindV2' in table_ops(label_vocabulary=['a', 'b'])
  assert not table_ops()


def test_init_from_checkpoint_in_the_tpu_step_restores_inside_the_tpu_computation(tmp_path):
  """Rule 5: init_from_checkpoint called inside model_fn on a TPU builds its RestoreV2 inside the TPU computation
  (tf.tpu.rewrite marks it), and RestoreV2 has no XLA kernel: scaffold_fn, which runs on the host, is its place."""
  with tf.Graph().as_default():
    tf.get_variable('w', [2], initializer=tf.zeros_initializer())
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      tf.train.Saver().save(session, str(tmp_path / 'start'))
  xla.register_xla_kernels()
  with tf.Graph().as_default() as graph:
    def step():
      weights = tf.get_variable('w', [2], initializer=tf.ones_initializer())
      tf.train.init_from_checkpoint(str(tmp_path), {'w': 'w'})
      return tf.reduce_sum(weights)
    tf.tpu.rewrite(step)
    restores = [op for op in graph.get_operations() if op.type == 'RestoreV2']
    assert restores and all(op.get_attr('_tpu_replicate') for op in restores)
    assert not any(xla.has_xla_kernel(op) for op in restores)


@pytest.mark.skipif(not tf.__version__.startswith('1.'),
                    reason='tf.contrib.seq2seq is TensorFlow 1 only (TensorFlow 2 has it in TensorFlow Addons, not '
                           'installed here)')
def test_a_seq2seq_decode_needs_maximum_iterations_on_xla():
  """Rule 18: contrib.seq2seq's dynamic_decode under XLA refuses to run without maximum_iterations, and with one
  computed from the batch; with a constant, the same decode compiles."""
  import numpy as np
  from tensorflow.contrib import seq2seq  # pylint: disable=g-import-not-at-top

  def decode(inputs, maximum_iterations):
    cell = tf.nn.rnn_cell.GRUCell(4)
    helper = seq2seq.TrainingHelper(inputs, tf.fill([3], 5))
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(3, tf.float32))
    outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=maximum_iterations)
    return tf.reduce_sum(outputs.rnn_output)

  data = np.ones([3, 5, 2], np.float32)
  with tf.Graph().as_default():
    source = tf.placeholder(tf.float32, [3, 5, 2])
    outputs = tf.xla.experimental.compile(lambda x: decode(x, 5), inputs=[source])
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      assert np.isfinite(session.run(outputs, {source: data})[0])
  with pytest.raises(ValueError, match='maximum_iterations is required for XLA compilation'):
    compile_on_xla(lambda x: decode(x, None), data)
  # A bound computed from the batch (the longest length, as seq2seq models write it) is no compile-time constant.
  with pytest.raises(tf.errors.InvalidArgumentError, match='compile-time constant'):
    with tf.Graph().as_default():
      source, lengths = tf.placeholder(tf.float32, [3, 5, 2]), tf.placeholder(tf.int32, [3])
      outputs = tf.xla.experimental.compile(lambda x, l: decode(x, tf.reduce_max(l)), inputs=[source, lengths])
      with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        session.run(outputs, {source: data, lengths: [5, 4, 3]})


@pytest.mark.skipif(not tf.__version__.startswith('1.'),
                    reason='tf.contrib.seq2seq is TensorFlow 1 only (TensorFlow 2 has it in TensorFlow Addons, not '
                           'installed here)')
def test_a_scheduled_sampling_decode_does_not_compile_on_xla():
  """Rule 4 (dynamic-shape-op): ScheduledEmbeddingTrainingHelper picks the sampled rows with a one-argument where
  (and gather_nd/scatter_nd); XLA refuses it even with a constant maximum_iterations, where the same decode with a
  TrainingHelper compiles (test above)."""
  import numpy as np
  from tensorflow.contrib import seq2seq  # pylint: disable=g-import-not-at-top

  def decode(inputs):
    cell = tf.nn.rnn_cell.GRUCell(4)
    helper = seq2seq.ScheduledEmbeddingTrainingHelper(inputs, tf.fill([3], 5), tf.ones([6, 2]), 0.5)
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(3, tf.float32))
    outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=5)
    return tf.reduce_sum(outputs.rnn_output)

  with tf.Graph().as_default():
    source = tf.placeholder(tf.float32, [3, 5, 2])
    outputs = tf.xla.experimental.compile(decode, inputs=[source])
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      with pytest.raises(tf.errors.InvalidArgumentError, match='Where'):
        session.run(outputs, {source: np.ones([3, 5, 2], np.float32)})
  assert 'tensorflow.contrib.seq2seq.ScheduledEmbeddingTrainingHelper' in apis.SAMPLING_HELPERS


@pytest.mark.skipif(not tf.__version__.startswith('1.'),
                    reason='tf.contrib.seq2seq is TensorFlow 1 only (TensorFlow 2 has it in TensorFlow Addons, not '
                           'installed here)')
def test_a_beam_search_decode_has_no_xla_kernel_where_a_greedy_decode_compiles():
  """Rule 18: contrib.seq2seq's BeamSearchDecoder finishes with GatherTree, which XLA has no kernel for; the
  greedy decoder of the same cell compiles (the report's NO_XLA_KERNEL lists the beam search only)."""
  import numpy as np
  from tensorflow.contrib import seq2seq  # pylint: disable=g-import-not-at-top

  def decode(states, beam):
    cell = tf.nn.rnn_cell.GRUCell(4)
    embedding = tf.ones([6, 3])
    start, end = tf.fill([2], 1), 2
    if beam:
      decoder = seq2seq.BeamSearchDecoder(cell, embedding, start, end, seq2seq.tile_batch(states, 3), 3,
                                          output_layer=tf.layers.Dense(6))
      outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=4)
      return tf.reduce_sum(outputs.predicted_ids)
    helper = seq2seq.GreedyEmbeddingHelper(embedding, start, end)
    decoder = seq2seq.BasicDecoder(cell, helper, states, output_layer=tf.layers.Dense(6))
    outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=4)
    return tf.reduce_sum(outputs.sample_id)

  states = np.zeros([2, 4], np.float32)
  for beam in (False, True):
    with tf.Graph().as_default():
      source = tf.placeholder(tf.float32, [2, 4])
      outputs = tf.xla.experimental.compile(lambda s: decode(s, beam), inputs=[source])
      with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        if not beam:
          assert np.isfinite(session.run(outputs, {source: states})[0])
          continue
        with pytest.raises(tf.errors.InvalidArgumentError, match='GatherTree'):
          session.run(outputs, {source: states})
  assert 'tensorflow.contrib.seq2seq.BeamSearchDecoder' in apis.NO_XLA_KERNEL


def test_the_numpy_makers_the_report_calls_float64_are_float64_unless_given_a_dtype():
  """Rule 15: apis.NUMPY_FLOAT64_MAKERS, checked with the installed NumPy: each makes float64 by default, a dtype
  at the position the table names makes it something else, and the infeed's dtypes do not include float64."""
  import numpy as np
  from tensorflow.python.tpu.ops import tpu_ops
  arguments = {'zeros': [2], 'ones': [2], 'empty': [2], 'identity': [2], 'eye': [2, 2, 0], 'linspace': [0, 1, 3, True,
               False], 'random.rand': [2], 'random.randn': [2], 'random.random': [2], 'random.random_sample': [2],
               'random.normal': [0, 1, 2], 'random.uniform': [0, 1, 2], 'random.standard_normal': [2],
               'random.sample': [2], 'random.ranf': [2]}
  assert sorted('numpy.' + name for name in arguments) == sorted(apis.NUMPY_FLOAT64_MAKERS)
  for name, args in arguments.items():
    maker = np
    for part in name.split('.'):
      maker = getattr(maker, part)
    assert maker(*args).dtype == np.float64, name
    position = apis.NUMPY_FLOAT64_MAKERS['numpy.' + name]
    if position is not None:
      assert maker(*(args[:position] + [np.int32])).dtype == np.int32, name
  assert np.array([1., 2]).dtype == np.float64 and np.array([1, 2]).dtype != np.float64
  assert tf.float64 not in tpu_ops._SUPPORTED_INFEED_DTYPES


def test_a_queue_batch_with_dynamic_pad_has_no_static_length():
  """Rule 4 (queue-dynamic-pad): tf.train.batch(dynamic_pad=True) pads each batch to its own longest element, so
  the padded dimension is None in the graph: the infeed needs every dimension static."""
  with tf.Graph().as_default():
    tokens = tf.placeholder_with_default(tf.constant([1, 2, 3], tf.int64), shape=[None])
    batch = tf.train.batch([tokens], batch_size=4, dynamic_pad=True)
    assert batch.shape.as_list() == [4, None]


def test_the_ports_names_for_positional_run_config_arguments_are_tensorflows():
  """The port names RunConfig('dir', ...)'s positional arguments when it makes it a tpu.RunConfig, whose own first
  parameter is tpu_config: the names are tf.estimator.RunConfig's, in its order."""
  plain = list(inspect.signature(tf.estimator.RunConfig.__init__).parameters)[1:]
  assert plain[:len(apis.RUN_CONFIG_POSITIONAL)] == list(apis.RUN_CONFIG_POSITIONAL)
  assert list(inspect.signature(tf.estimator.tpu.RunConfig.__init__).parameters)[1] == 'tpu_config'


def test_a_tpu_run_refuses_a_step_count_that_is_a_float():
  """Rule 9 (steps-not-int): on a TPU, TPUEstimator checks train steps/max_steps and eval steps with
  check_positive_integer, which refuses a float such as the result of `/` (the CPU's Estimator casts it)."""
  from tensorflow_estimator.python.estimator.tpu import util as tpu_util
  with pytest.raises(TypeError, match='must be int'):
    tpu_util.check_positive_integer(1000 * 3 / 8, 'Train max_steps')
  tpu_util.check_positive_integer(1000 * 3 // 8, 'Train max_steps')
  with pytest.raises(TypeError, match='must be int'):  # NUMPY_FLOAT_RESULTS: a NumPy float is no int either
    tpu_util.check_positive_integer(np.floor(1000 * 3 // 8), 'Eval steps')
  source = inspect.getsource(tpu_estimator.TPUEstimator._convert_train_steps_to_hooks)
  assert "check_positive_integer(max_steps, 'Train max_steps')" in source


def _unused_placeholder_step(x):
  """A step that builds, and never uses, a Placeholder (as a Keras Sequential with input_shape does)."""
  unused = tf.placeholder(tf.float32, [None, 4], name='never_fed')
  tf.identity(unused * 2.0, name='never_run')
  return tf.reduce_sum(x), []


@pytest.mark.parametrize('control_flow_v2', [False, True])
def test_xla_compiles_only_what_tpu_estimators_loop_reaches_under_tf1_control_flow(control_flow_v2):
  """readiness/xla.compile_as_tpu_iteration builds the step inside TPUEstimator's loop (training_loop.repeat): under
  TF 1 control flow XLA compiles only the ops the loop's result reaches, so an unused Placeholder compiles; under
  TF 2 control flow the loop body is compiled whole, as a computation without the loop is, and XLA refuses it."""
  was = tf.control_flow_v2_enabled()
  (tf.enable_control_flow_v2 if control_flow_v2 else tf.disable_control_flow_v2)()
  try:
    with tf.Graph().as_default():
      x = tf.placeholder(tf.float32, [2])
      value, ops = xla.compile_as_tpu_iteration(_unused_placeholder_step, [x])
      with tf.Session() as session:
        if control_flow_v2:
          assert 'never_fed' in [op.name for op in ops]
          with pytest.raises(tf.errors.InvalidArgumentError, match='Placeholder'):
            session.run(value, {x: [1.0, 2.0]})
        else:
          assert 'never_fed' not in [op.name for op in ops]
          assert session.run(value, {x: [1.0, 2.0]}) == 3.0
  finally:
    (tf.enable_control_flow_v2 if was else tf.disable_control_flow_v2)()


def test_make_batched_features_dataset_keeps_a_short_last_batch_only_with_num_epochs_set(tmp_path):
  """apis.FEATURE_DATASETS: batch_size, drop_final_batch and num_epochs where the table says, and TensorFlow's
  batches static unless drop_final_batch is False and num_epochs is set (readers.py)."""
  path = str(tmp_path / 'data.tfrecord')
  with tf.io.TFRecordWriter(path) as writer:
    for i in range(5):
      writer.write(tf.train.Example(features=tf.train.Features(feature={
          'x': tf.train.Feature(float_list=tf.train.FloatList(value=[float(i)]))})).SerializeToString())
  make = tf.data.experimental.make_batched_features_dataset
  names = list(inspect.signature(make).parameters)
  for canonical, (size, drop, epochs) in apis.FEATURE_DATASETS.items():
    assert (names[size], names[drop], names[epochs]) == ('batch_size', 'drop_final_batch', 'num_epochs'), canonical
  spec = {'x': tf.io.FixedLenFeature([1], tf.float32)}
  shapes = [tf.data.get_output_shapes(make(path, 2, spec, num_epochs=epochs, drop_final_batch=drop))['x'][0]
            for epochs, drop in ((None, False), (1, False), (1, True))]
  assert [tf.compat.dimension_value(s) for s in shapes] == [2, None, 2]


def test_a_categorical_column_over_dense_ids_makes_a_where_xla_cannot_compile():
  """Rule 4 (premade-id-columns, id-columns-in-model-fn): an identity column turns dense ids into a SparseTensor
  with a one-argument tf.where inside the model and looks them up with sparse ops; XLA refuses them (TF 1.15: the
  Where; TF 2.15's CPU XLA compiles that Where, then refuses the sparse lookup's SparseReshape)."""
  def step(ids):
    column = tf.feature_column.embedding_column(tf.feature_column.categorical_column_with_identity('x', 10), 4)
    return tf.reduce_sum(tf.feature_column.input_layer({'x': ids}, [column]))

  with tf.Graph().as_default():
    ids = tf.placeholder(tf.int64, [4, 3])
    (total,) = tf.xla.experimental.compile(step, [ids])
    assert 'Where' in [op.type for op in tf.get_default_graph().get_operations()]
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      with pytest.raises(tf.errors.InvalidArgumentError, match='Where|SparseReshape'):
        session.run(total, {ids: [[1, 2, 3]] * 4})


@pytest.mark.parametrize('kind', ['integer vocabulary', 'numeric cross'])
def test_vocabulary_and_crossed_columns_over_numbers_put_no_string_on_the_tpu_but_xla_still_refuses_them(kind):
  """Rule 4, not 15 (columns._over_numbers): a vocabulary list of integers and a cross of a bucketized column with an
  integer feature make no string tensor inside the model, yet XLA still cannot compile their sparse ids (the
  one-argument where and the cross's hashing): the change of the id-columns row, not of the string row."""
  def step(x, y):
    features = {'x': x, 'y': y}
    if kind == 'integer vocabulary':
      column = tf.feature_column.indicator_column(
          tf.feature_column.categorical_column_with_vocabulary_list('y', [1, 2, 3], dtype=tf.int64))
    else:
      buckets = tf.feature_column.bucketized_column(tf.feature_column.numeric_column('x'), [0.5, 1.5])
      column = tf.feature_column.indicator_column(tf.feature_column.crossed_column([buckets, 'y'], 16))
    return tf.reduce_sum(tf.feature_column.input_layer(features, [column]))

  with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [4, 1])
    y = tf.placeholder(tf.int64, [4, 1])
    (total,) = tf.xla.experimental.compile(step, [x, y])
    graph = tf.get_default_graph()
    assert not [op for op in graph.get_operations() for out in op.outputs if out.dtype == tf.string]
    with tf.Session() as session:
      # (TF 1.15 refuses the vocabulary's table already where its initializer reads a constant of the computation.)
      with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.UnimplementedError, tf.errors.NotFoundError)):
        session.run([tf.global_variables_initializer(), tf.tables_initializer()])
        session.run(total, {x: [[0.0], [1.0], [2.0], [1.0]], y: [[1], [2], [3], [1]]})


def test_the_python_classes_of_tf_summary_add_no_op_to_the_graph(tmp_path):
  """apis.SUMMARY_WRITERS: a FileWriter made (and written to) while model_fn is built, and the Summary proto, add
  nothing to the graph, so nothing of them is in the TPU computation (not rule 7); tf.summary.scalar does."""
  with tf.Graph().as_default() as graph:
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(tf.summary.Summary(value=[tf.summary.Summary.Value(tag='x', simple_value=1.0)]), 0)
    writer.close()
    assert graph.get_operations() == []
    tf.summary.scalar('x', tf.constant(1.0))
    assert 'ScalarSummary' in [op.type for op in graph.get_operations()]
  for name in apis.SUMMARY_WRITERS:
    assert hasattr(tf.summary, name.rpartition('.')[2]), name


@pytest.mark.parametrize('soft', [True, False])
def test_tf2_summary_writes_inside_a_tpu_computation_go_to_the_host_only_under_soft_device_placement(soft):
  """Rule 7 (apis.SUMMARY_CONTEXTS; model_fn_checks._soft_placement): inside a TPU computation, the TF 2 summary API
  makes its writer on the host, outside the computation (no _tpu_replicate), and its write as a WriteSummary op
  pinned to the CPU, which the TPU replication's metadata lets automatic outside compilation move to the host only
  when soft device placement is on (tpu.py, allow_soft_placement); a v1 tf.summary.scalar is a ScalarSummary in the
  computation, on no device. The context calls of SUMMARY_CONTEXTS exist under those names."""
  from tensorflow.python.tpu import tpu
  import tensorflow.compat.v2 as tf2
  before = tf.config.get_soft_device_placement()
  tf.config.set_soft_device_placement(soft)
  try:
    with tf.Graph().as_default() as graph:
      step = tf.train.get_or_create_global_step()
      writer = tf2.summary.create_file_writer('unused_logdir_never_written')

      def computation(x):
        with writer.as_default(), tf2.summary.record_if(True):
          tf2.summary.scalar('loss', tf.reduce_sum(x), step=step)
        tf.summary.scalar('v1_loss', tf.reduce_sum(x))
        return tf.reduce_sum(x) * 2.0

      tpu.rewrite(computation, [tf.constant([1.0, 2.0])])
      ops = dict((op.type, op) for op in graph.get_operations())
  finally:
    tf.config.set_soft_device_placement(before)

  def in_computation(op):
    return '_tpu_replicate' in op.node_def.attr
  assert not in_computation(ops['CreateSummaryFileWriter']) and not in_computation(ops['SummaryWriter'])
  assert in_computation(ops['WriteSummary']) and 'CPU' in ops['WriteSummary'].device
  assert in_computation(ops['ScalarSummary']) and not ops['ScalarSummary'].device
  assert ops['TPUReplicateMetadata'].get_attr('allow_soft_placement') is soft
  if tf.__version__.startswith('2.'):  # TF 1.15's tf.compat.v2.summary is TensorBoard's, without some of them
    for name in apis.SUMMARY_CONTEXTS:
      if name.startswith('tensorflow.summary.'):  # (tf.contrib.summary: TF 1.15 only, the same summary_ops_v2)
        parts = name[len('tensorflow.summary.'):].split('.')
        holder = tf.summary if parts[0] == 'all_v2_summary_ops' else tf2.summary
        for part in parts:
          holder = getattr(holder, part)


def test_integer_tensors_divided_with_true_division_are_float64():
  """Rule 15 (int-true-division): `/` (Python 3), tf.divide and tf.truediv of int32 or int64 tensors, or of one and a
  Python int, give float64; `//` keeps the integers. (apis.INT_TENSOR_MAKERS give integers.)"""
  with tf.Graph().as_default():
    x = tf.zeros([6, 4])
    height = tf.shape(x)[0]
    assert height.dtype == tf.int32 and tf.size(x).dtype == tf.int32 and tf.range(3).dtype == tf.int32
    assert (height - 2).dtype == tf.int32 and (height // 2).dtype == tf.int32
    assert ((height - 2) / 2).dtype == tf.float64
    assert tf.divide(tf.reduce_sum(tf.cast(x, tf.int32)), tf.multiply(height, 3)).dtype == tf.float64
    assert tf.truediv(tf.cast(x, tf.int64), tf.cast(x, tf.int64)).dtype == tf.float64
    assert (tf.reduce_mean(x) / 2).dtype == tf.float32


@pytest.mark.skipif(not tf.__version__.startswith('1.'),
                    reason='tf.contrib.training exists in TensorFlow 1.x only (TF %s)' % tf.__version__)
def test_create_train_op_summarize_gradients_adds_a_summary_op_per_gradient():
  """Rule 7 (summaries-of-create-train-op): create_train_op(summarize_gradients=True) writes a histogram summary of
  each gradient where it is called (inside model_fn); without it, none."""
  from tensorflow.contrib import training  # pylint: disable=g-import-not-at-top
  for summarize, expected in ((True, 2), (False, 0)):
    with tf.Graph().as_default() as graph:
      weights = tf.get_variable('w', [3], initializer=tf.zeros_initializer())
      bias = tf.get_variable('b', [], initializer=tf.zeros_initializer())
      loss = tf.reduce_sum(weights * 2.0) + bias
      training.create_train_op(loss, tf.train.GradientDescentOptimizer(0.1), summarize_gradients=summarize)
      histograms = [op for op in graph.get_operations() if op.type == 'HistogramSummary']
      assert len(histograms) >= expected and (expected or not histograms), (summarize, histograms)


def test_premade_estimators_take_their_feature_columns_where_the_table_says():
  """apis.PREMADE_COLUMN_POSITIONS: the positional parameter of each premade estimator's feature columns."""
  checked = 0
  for family, positions in apis.PREMADE_COLUMN_POSITIONS.items():
    for suffix in ('Classifier', 'Regressor'):
      cls = getattr(tf.estimator, family + suffix, None)
      if cls is None:
        continue
      names = [n for n in inspect.signature(cls.__init__).parameters if n != 'self']
      for name, position in positions.items():
        assert names[position] == name, (cls, names)
        checked += 1
  assert checked >= 8


@pytest.mark.skipif(not tf.__version__.startswith('1.'),
                    reason='tf.contrib.learn exists in TensorFlow 1.x only (TF %s)' % tf.__version__)
def test_contrib_learn_csv_loaders_give_data_and_target_the_dtypes_they_are_given(tmp_path):
  """Rule 15 (apis.CSV_DATASET_LOADERS): load_csv_with(out)_header(filename, target_dtype, features_dtype) returns
  .data of features_dtype and .target of target_dtype."""
  import numpy as np
  from tensorflow.contrib.learn.python.learn.datasets import base  # pylint: disable=g-import-not-at-top
  (tmp_path / 'plain.csv').write_text(u'1.5,2.0,1\n0.5,1.0,0\n')
  (tmp_path / 'header.csv').write_text(u'2,2,a,b\n1.5,2.0,1\n0.5,1.0,0\n')
  for loader, name in ((base.load_csv_without_header, 'plain.csv'), (base.load_csv_with_header, 'header.csv')):
    loaded = loader(str(tmp_path / name), np.int32, np.float64)
    assert (loaded.data.dtype, loaded.target.dtype) == (np.float64, np.int32)
    assert apis.CSV_DATASET_DTYPES == {'data': (2, 'features_dtype'), 'target': (1, 'target_dtype')}
    assert 'tensorflow.contrib.learn.datasets.base.' + loader.__name__ in apis.CSV_DATASET_LOADERS


@pytest.mark.skipif(not tf.__version__.startswith('1.'),
                    reason='tf.contrib.learn exists in TensorFlow 1.x only (TF %s)' % tf.__version__)
def test_contrib_learn_s_toy_datasets_are_float64_but_iris_targets():
  """Rule 15 (apis.CONTRIB_TOY_LOADERS): contrib.learn's load_iris / load_boston (and load_dataset of their names)
  read their CSVs with features_dtype=np.float: .data float64; iris' .target int64, boston's float64."""
  import numpy as np
  from tensorflow.contrib.learn.python.learn import datasets  # pylint: disable=g-import-not-at-top
  iris, boston = datasets.load_dataset('iris'), datasets.base.load_boston()
  assert (iris.data.dtype, iris.target.dtype, boston.data.dtype, boston.target.dtype) == (
      np.float64, np.int64, np.float64, np.float64)
  assert {'tensorflow.contrib.learn.datasets.load_iris', 'tensorflow.contrib.learn.datasets.load_dataset',
          'tensorflow.contrib.learn.datasets.base.load_boston'} <= apis.CONTRIB_TOY_LOADERS


@pytest.mark.skipif(not tf.__version__.startswith('1.'),
                    reason='tf.contrib.learn exists in TensorFlow 1.x only (TF %s)' % tf.__version__)
def test_contrib_learns_data_feeder_feeds_placeholders_without_a_static_batch():
  """Rule 4 (input-from-arrays-batch): fit/evaluate(x=arrays) feed placeholders of shape [None] + the array's own
  (data_feeder.py), whatever batch_size says, and keep the arrays' dtype (float64 from np.float, NumPy's old alias
  of Python's float): features and labels with no static batch, which TPUEstimator refuses."""
  import numpy as np
  from tensorflow.contrib.learn.python.learn.learn_io import data_feeder  # pylint: disable=g-import-not-at-top
  x = np.zeros((30, 4), getattr(np, 'float', float))
  with tf.Graph().as_default():
    feeder = data_feeder.DataFeeder(x, np.zeros(30, np.int64), n_classes=3, batch_size=8)
    features, labels = feeder.input_builder()
    assert features.shape.as_list() == [None, 4] and labels.shape.as_list()[0] is None
    assert features.dtype == tf.float64


def test_scikit_learn_scalers_return_float64():
  """Rule 15 (apis.is_sklearn_scaler): transform / fit_transform of scikit-learn's scalers give float64 for integer
  and float64 input (only float32 input stays float32), a dtype the infeed refuses."""
  import numpy as np
  from sklearn import preprocessing  # pylint: disable=g-import-not-at-top
  for name in ('StandardScaler', 'MinMaxScaler', 'MaxAbsScaler', 'RobustScaler', 'Normalizer'):
    assert apis.is_sklearn_scaler('sklearn.preprocessing.' + name)
    for data in (np.arange(12).reshape(6, 2), np.arange(12.).reshape(6, 2)):
      scaler = getattr(preprocessing, name)()
      assert scaler.fit_transform(data).dtype == np.float64, name
      assert scaler.transform(data).dtype == np.float64, name
    assert getattr(preprocessing, name)().fit_transform(np.ones((6, 2), np.float32)).dtype == np.float32, name


def test_generator_py_func_and_decoded_images_have_no_static_shape_until_one_is_set():
  """Rule 4 (input-unknown-shapes): a generator's elements without output_shapes (or with a None in them), py_func
  outputs, decode_raw's bytes and decoded images have shapes the graph does not know, and batching with drop_remainder=True fixes only
  the batch dimension; TPUEstimator refuses features or labels whose shape is not fully defined. A tf.reshape,
  set_shape or resize to a size gives the static shape back."""
  def generator():
    yield [1.0, 2.0], 1

  with tf.Graph().as_default():
    untyped = tf.data.Dataset.from_generator(generator, (tf.float32, tf.int32)).batch(4, drop_remainder=True)
    assert not any(shape.is_fully_defined() for shape in tf.data.get_output_shapes(untyped))
    with_none = tf.data.Dataset.from_generator(generator, (tf.float32, tf.int32), ((2,), None)).batch(
        4, drop_remainder=True)
    assert [shape.is_fully_defined() for shape in tf.data.get_output_shapes(with_none)] == [True, False]
    shaped = tf.data.Dataset.from_generator(generator, (tf.float32, tf.int32), ((2,), ())).batch(
        4, drop_remainder=True)
    assert all(shape.is_fully_defined() for shape in tf.data.get_output_shapes(shaped))

    numbers = tf.data.Dataset.from_tensor_slices(tf.zeros([8, 2]))
    through_python = numbers.map(lambda x: tf.py_func(lambda v: v, [x], tf.float32))
    assert tf.data.get_output_shapes(through_python.batch(4, drop_remainder=True)).ndims is None
    reshaped = through_python.map(lambda x: tf.reshape(x, [2])).batch(4, drop_remainder=True)
    assert tf.data.get_output_shapes(reshaped).is_fully_defined()

    assert tf.decode_raw(tf.constant(b''), tf.uint8).shape.as_list() == [None]
    image = tf.image.decode_image(tf.constant(b''))
    assert image.shape.ndims is None
    png = tf.image.decode_png(tf.constant(b''), channels=3)
    assert png.shape.as_list() == [None, None, 3]
    assert tf.image.resize_images(png, [8, 8]).shape.as_list() == [8, 8, 3]

  source = inspect.getsource(tpu_estimator._ModelFnWrapper._validate_model_features_and_labels)
  assert 'is_fully_defined()' in source and 'must have static shape' in source


def test_a_slice_of_numbers_gives_a_decoded_image_its_static_shape_and_a_minus_one_does_not():
  """Rule 4 (input-unknown-shapes): tf.slice(image, begin, size) with every size a number has that static shape
  whatever the decoded image's (held-out-20's khazit_lip2word_vgg cuts a video into 29 such windows); a size of -1
  (the rest) leaves the dimension unknown."""
  with tf.Graph().as_default():
    image = tf.image.decode_jpeg(tf.constant(b''), channels=1)
    assert image.shape.as_list() == [None, None, 1]
    window = tf.slice(image, begin=[64, 0, 0], size=[64, 64, 1])
    assert window.shape.as_list() == [64, 64, 1]
    assert tf.concat([window, window], axis=2).shape.as_list() == [64, 64, 2]
    assert tf.slice(image, [0, 0, 0], [-1, 64, 1]).shape.as_list() == [None, 64, 1]


def test_a_var_len_feature_reaches_the_model_without_a_static_shape():
  """Rule 4 (input-unknown-shapes, a parse spec's VarLenFeature): parsed, it is a SparseTensor whose dense shape is
  known only per batch, and densified without a length it is [batch, None]; TPUEstimator's own validation of what
  input_fn hands the model refuses both on a TPU, where a FixedLenFeature passes."""
  example = tf.train.Example(features=tf.train.Features(feature={
      'ids': tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2, 3])),
      'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))})).SerializeToString()
  spec = {'ids': tf.io.VarLenFeature(tf.int64), 'label': tf.io.FixedLenFeature([], tf.int64)}

  class OnATpu(object):  # what _validate_model_features_and_labels asks TPUEstimator's context
    def is_running_on_cpu(self, is_export_mode=False):
      return False

  wrapper = argparse.Namespace(_ctx=OnATpu())
  validate = tpu_estimator._ModelFnWrapper._validate_model_features_and_labels
  with tf.Graph().as_default():
    parsed = tf.data.Dataset.from_tensors(example).repeat(8).map(
        lambda record: tf.io.parse_single_example(record, spec)).batch(4, drop_remainder=True)
    features = tf.data.make_one_shot_iterator(parsed).get_next()
    assert isinstance(features['ids'], tf.SparseTensor)
    label = features.pop('label')
    assert label.shape.is_fully_defined()
    with pytest.raises(ValueError, match='must have static shape'):
      validate(wrapper, features, label, False)
    with pytest.raises(ValueError, match='must have static shape'):
      validate(wrapper, {'ids': tf.sparse.to_dense(features['ids'])}, label, False)
    validate(wrapper, {'ids': tf.reshape(tf.sparse.to_dense(features['ids']), [4, 3])}, label, False)


@pytest.mark.parametrize('name,computation', [
    ('range', lambda mask: tf.reduce_sum(tf.cast(tf.range(tf.reduce_sum(mask)), tf.float32))),
    ('one_hot', lambda mask: tf.reduce_sum(tf.one_hot(mask[0], tf.reduce_max(mask) + 1))),
    ('zeros', lambda mask: tf.reduce_sum(tf.zeros([tf.reduce_sum(mask)]))),
    ('reshape', lambda mask: tf.reduce_sum(tf.reshape(tf.cast(mask, tf.float32), [tf.reduce_sum(mask[0]), -1]))),
    ('pad', lambda mask: tf.reduce_sum(tf.pad(tf.cast(mask, tf.float32), [[0, tf.reduce_sum(mask[0])], [0, 0]]))),
])
def test_a_shape_computed_from_the_data_is_no_compile_time_constant(name, computation):
  """Rule 4 (dynamic-shape-op, apis.SHAPE_ARGUMENTS): a size, depth, shape or padding computed by reducing the data
  (the number of words a mask holds, the longest id) does not compile on XLA, whose shapes are fixed at compile time;
  the same op given a number does."""
  import numpy as np
  mask = np.array([[1, 1, 0], [1, 0, 0]], np.int32)
  with pytest.raises(tf.errors.InvalidArgumentError, match='compile-time constant'):
    compile_on_xla(computation, mask)
  assert 'tensorflow.' + name in apis.SHAPE_ARGUMENTS
  assert compile_on_xla(lambda m: tf.reduce_sum(tf.zeros([3])) + tf.cast(tf.reduce_sum(m), tf.float32), mask)[0] == 3


def test_a_tpu_estimator_given_a_strategy_cannot_train_on_tf1(tmp_path):
  """--write (engine.blocked): TPUEstimator with a tpu RunConfig that keeps the CPU's train_distribute trains through
  Estimator._train_model_distributed, which calls _call_input_fn(input_fn, mode, input_context): on TF 1.15 a
  TypeError, since TPUEstimator's override there takes no input context (TF 2.15's does), so the port, which writes
  one program for both, keeps such an estimator plain."""
  tpu_call = inspect.signature(tpu_estimator.TPUEstimator._call_input_fn).parameters
  assert 'input_context' in inspect.signature(estimator_lib.Estimator._call_input_fn).parameters
  if not tf.__version__.startswith('1.'):
    assert 'input_context' in tpu_call
    return
  assert 'input_context' not in tpu_call
  config = tf.estimator.tpu.RunConfig(model_dir=str(tmp_path), train_distribute=tf.distribute.OneDeviceStrategy(
      '/cpu:0'), tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=1))
  estimator = tf.estimator.tpu.TPUEstimator(model_fn=tiny_model_fn, config=config, use_tpu=False,
                                            train_batch_size=8)
  with pytest.raises(TypeError, match='_call_input_fn'):
    estimator.train(batches, max_steps=1)


def _built_in_tpu_loop(step, made):
  """Builds `step` inside TPUEstimator's loop (training_loop.repeat under tpu.rewrite): it builds where `made`, else
  TensorFlow refuses a variable's initial value made in the loop (TF 1: 'from inside a control-flow construct';
  TF 2's control flow: 'could not be lifted out of a tf.function')."""
  with tf.Graph().as_default():
    if made:
      tf.tpu.rewrite(lambda: training_loop.repeat(2, step, [tf.constant(0.0)]))
    else:
      with pytest.raises(ValueError, match='control-flow construct|could not be lifted'):
        tf.tpu.rewrite(lambda: training_loop.repeat(2, step, [tf.constant(0.0)]))


@pytest.mark.parametrize('initial_value, made', [
    (lambda: tf.zeros([3]), False), (lambda: tf.random.truncated_normal([3]), False), (lambda: 0.0, True),
    (lambda: [1.0, 2.0], True), (lambda: np.zeros([3], np.float32), True), (lambda: lambda: tf.zeros([3]), True)])
def test_a_variable_made_inside_tpu_estimators_loop_cannot_take_a_tensor_as_its_initial_value(initial_value, made):
  """The report's variable-from-a-tensor: TPUEstimator builds model_fn inside training_loop.repeat under
  tpu.rewrite; a tf.Variable whose initial value is a tensor made there cannot be built (TF 1: 'from inside a
  control-flow construct'; TF 2's control flow: 'could not be lifted out of a tf.function'), while a number, an
  array or a callable (called outside the loop) can."""
  def step(total):
    variable = tf.Variable(initial_value())
    return total + tf.reduce_sum(tf.cast(variable, tf.float32))

  _built_in_tpu_loop(step, made)


@pytest.mark.parametrize('initializer, made', [
    (lambda: tf.random_uniform([3], -1.0, 1.0), False), (lambda: tf.constant([1.0, 2.0, 3.0]), False),
    (lambda: tf.random_uniform_initializer(-1.0, 1.0), True), (lambda: tf.zeros_initializer(), True),
    (lambda: np.ones([3], np.float32), True)])
def test_get_variable_inside_tpu_estimators_loop_cannot_take_a_tensor_as_its_initializer(initializer, made):
  """The report's variable-from-a-tensor for tf.get_variable(initializer=...): a tensor made inside TPUEstimator's
  loop fails as tf.Variable's does (held-out-19's hellomotor_textcnn), where an initializer object or an array
  builds."""
  def step(total):
    given = initializer()
    shape = None if isinstance(given, (tf.Tensor, np.ndarray)) else [3]
    variable = tf.get_variable('v', shape=shape, initializer=given)
    return total + tf.reduce_sum(variable)

  _built_in_tpu_loop(step, made)


@pytest.mark.parametrize('loss', [tf.nn.nce_loss, tf.nn.sampled_softmax_loss])
def test_a_sampled_loss_has_no_xla_kernel_for_its_default_sampler(loss):
  """Rule 18 (apis.NO_XLA_KERNEL): nce_loss and sampled_softmax_loss draw their candidates with
  LogUniformCandidateSampler unless given sampled_values, and that op has no XLA kernel."""
  xla.register_xla_kernels()
  with tf.Graph().as_default() as graph:
    weights, biases = tf.zeros([50, 4]), tf.zeros([50])
    loss(weights, biases, tf.zeros([8, 1], tf.int64), tf.ones([8, 4]), num_sampled=5, num_classes=50)
    samplers = [op for op in graph.get_operations() if op.type == 'LogUniformCandidateSampler']
    assert samplers and not xla.has_xla_kernel(samplers[0])
    assert all(xla.has_xla_kernel(op) for op in graph.get_operations() if op.type in ('MatMul', 'Sum'))


def test_the_ctc_loss_of_sparse_labels_has_no_xla_kernel():
  """Rule 18 (apis.NO_XLA_KERNEL): tf.compat.v1.nn.ctc_loss (SparseTensor labels) is the CTCLoss op, which XLA has no
  kernel for in either TensorFlow (held-out-19's caixuanting_ctc_speech)."""
  xla.register_xla_kernels()
  with tf.Graph().as_default() as graph:
    labels = tf.SparseTensor([[0, 0], [1, 0]], tf.constant([1, 2], tf.int32), [2, 1])
    tf.nn.ctc_loss(labels, tf.zeros([5, 2, 4]), tf.constant([5, 5]))
    losses = [op for op in graph.get_operations() if op.type == 'CTCLoss']
    assert losses and not xla.has_xla_kernel(losses[0])
  assert 'tensorflow.nn.ctc_loss' in apis.NO_XLA_KERNEL


def test_tpu_estimator_passes_the_labels_by_the_keyword_labels(tmp_path):
  """Rule 3 (model-fn-labels-name): TPUEstimator calls model_fn with labels=..., so a model_fn that names its second
  parameter targets (as contrib.learn allowed) is refused: Estimator's constructor already names the parameter it
  does not expect (estimator.py, _verify_model_fn_args)."""
  def model_fn(features, targets, mode, params):
    loss = tf.reduce_mean(tf.layers.dense(features, 1)) + tf.reduce_mean(targets)
    return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=tf.train.get_global_step().assign_add(1))

  def input_fn(params):
    return tf.data.Dataset.from_tensors((tf.ones([2]), tf.ones([1]))).repeat().batch(
        params['batch_size'], drop_remainder=True)

  with pytest.raises(ValueError, match=r"not expected args: \['targets'\]|model_fn does not take labels"):
    estimator = tf.estimator.tpu.TPUEstimator(model_fn, model_dir=str(tmp_path), use_tpu=False,
                                              train_batch_size=2, config=tf.estimator.tpu.RunConfig())
    estimator.train(input_fn, max_steps=1)


def test_an_eval_spec_without_steps_evaluates_100_of_them():
  """Rule 9: EvalSpec's steps default to 100, a count a TPU evaluation takes (the report asks for steps only where
  they are None: written so, or an option defaulting to None), unlike evaluate(), whose steps default to None."""
  assert tf.estimator.EvalSpec(input_fn=lambda: None).steps == 100
  assert inspect.signature(tf.estimator.Estimator.evaluate).parameters['steps'].default is None


def test_tensorboard_s_own_summary_functions_make_the_summary_ops_a_tpu_computation_drops():
  """Rule 7 (apis.is_tensorboard_summary): `from tensorboard import summary; summary.pr_curve(...)` (TF 1's API, under
  summary.v1 in the TensorBoard of TF 2.15) builds a TensorSummaryV2 op, one of the ops TensorFlow's TPU rewrite
  refuses to run in a TPU computation (_UNSUPPORTED_OPS); its `*_pb` twin builds no op. Held-out-21's fasttext."""
  try:  # pylint: disable=g-import-not-at-top
    from tensorflow.python.tpu.tpu_replication import _UNSUPPORTED_OPS as unsupported
  except ImportError:
    from tensorflow.python.tpu.tpu import _UNSUPPORTED_OPS as unsupported
  from tensorboard.summary import v1 as summary  # pylint: disable=g-import-not-at-top
  assert apis.is_tensorboard_summary('tensorboard.summary.pr_curve')
  assert apis.is_tensorboard_summary('tensorboard.summary.v1.pr_curve')
  assert not apis.is_tensorboard_summary('tensorboard.summary.pr_curve_pb')
  with tf.Graph().as_default() as graph:
    summary.pr_curve('pr', predictions=tf.zeros([4]), labels=tf.zeros([4], tf.bool), num_thresholds=5)
    assert set(op.type for op in graph.get_operations()) & set(unsupported) == {'TensorSummaryV2'}
  made = summary.pr_curve_pb('pr', predictions=np.zeros([4], np.float32), labels=np.zeros([4], bool),
                             num_thresholds=5)
  assert type(made).__name__ == 'Summary'


def test_the_resizes_the_input_reading_takes_for_casts_return_float32_except_by_nearest_neighbour():
  """apis.FLOAT_RESIZES (inputs._resizes_to_float): each of these resizes turns decode_jpeg's uint8 into float32 by
  its default method, so the input's pixels no longer reach the infeed as uint8; by nearest neighbour they stay
  uint8. Held-out-22's report changes (marcowilli, dcgan_celeba, myflow_cifar)."""
  import tensorflow as tf_root  # pylint: disable=g-import-not-at-top -- tf.image.resize is TF 2's API
  functions = {'resize': tf_root.compat.v2.image.resize}
  with tf.Graph().as_default():
    pixels = tf.zeros([4, 4, 3], tf.uint8)
    for name in sorted(apis.FLOAT_RESIZES):
      short = name.rsplit('.', 1)[1]
      resize = functions.get(short, getattr(tf.image, short, None))
      images = pixels if short in ('resize_images', 'resize') else pixels[None]
      assert resize(images, [2, 2]).dtype == tf.float32, name
    assert tf.image.resize_images(pixels, [2, 2], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR).dtype == tf.uint8
    assert tf_root.compat.v2.image.resize(pixels, [2, 2], method='nearest').dtype == tf.uint8


@pytest.mark.skipif(not tf.__version__.startswith('1.'),
                    reason='tf.contrib.image exists in TensorFlow 1.x only (TF %s)' % tf.__version__)
def test_contrib_image_transform_has_no_xla_kernel():
  """Rule 18 (apis.NO_XLA_KERNEL): tf.contrib.image.transform makes ImageProjectiveTransform(V2), which has no XLA
  kernel in TF 1.15 (held-out-29's face-alignment model warps its images with it inside model_fn)."""
  from tensorflow.contrib import image  # pylint: disable=g-import-not-at-top
  xla.register_xla_kernels()
  with tf.Graph().as_default() as graph:
    image.transform(tf.zeros([1, 8, 8, 1]), tf.constant([[1., 0., 0., 0., 1., 0., 0., 0.]]), 'BILINEAR')
    warps = [op for op in graph.get_operations() if op.type.startswith('ImageProjectiveTransform')]
    assert warps and not any(xla.has_xla_kernel(op) for op in warps)
  assert 'tensorflow.contrib.image.transform' in apis.NO_XLA_KERNEL


@pytest.mark.parametrize('predict_batch, refused', [(1, True), (10, True), (16, False)])
def test_tpu_prediction_refuses_a_predict_batch_size_the_cores_do_not_divide(predict_batch, refused):
  """Why a prediction input's literal batch size (one question: `batch(1)`) is a rule-16 change when the cores do
  not divide it: the port hands it to TPUEstimator as predict_batch_size, and TensorFlow's own context for a v3-8
  refuses it when predict runs on the TPU with a port's TPUConfig (tpu_context.py, _validate_tpu_configuration;
  broadcast or sliced prediction input is not checked there); padding covers only a short last batch."""
  from estimator_tpu.porting.readiness import topology
  from estimator_tpu.tpu import accelerator_types
  from tensorflow_estimator.python.estimator import model_fn as model_fn_lib
  config = tf.estimator.tpu.RunConfig(master='', tpu_config=tf.estimator.tpu.TPUConfig(num_shards=8))  # a port's
  sim = topology.simulate(config, accelerator_types.parse_tpu_type('v3-8'), lambda features, labels, mode: None, 64,
                          predict_batch_size=predict_batch)
  with sim.estimator._ctx.with_mode(model_fn_lib.ModeKeys.PREDICT) as context:  # pylint: disable=protected-access
    if refused:
      with pytest.raises(ValueError, match='predict batch size %d must be divisible by number of replicas 8'
                         % predict_batch):
        context.is_running_on_cpu()
    else:
      assert context.is_running_on_cpu() is False


def test_the_canned_estimators_named_outside_the_premade_scheme_are_estimators():
  """apis.CANNED_ESTIMATORS: every name is an Estimator (core or contrib.learn's) in this TensorFlow, where it has
  the module (contrib is TF 1 only; tf.estimator.experimental.KMeans is in both)."""
  import importlib
  bases = [estimator_lib.Estimator]
  if hasattr(tf, 'contrib'):
    from tensorflow.contrib.learn.python.learn.estimators import estimator as contrib_estimator
    bases.append(contrib_estimator.BaseEstimator)
  checked = []
  for name in sorted(apis.CANNED_ESTIMATORS):
    if '.contrib.' in name and not hasattr(tf, 'contrib'):
      continue
    path, attribute = name.rsplit('.', 1)
    module = importlib.import_module(path) if '.python.' in path else None
    found = getattr(module, attribute) if module else eval(name.replace('tensorflow.', 'tf.', 1))
    assert issubclass(found, tuple(bases)), name
    checked.append(name)
  assert 'tensorflow.estimator.experimental.KMeans' in checked and len(checked) >= (11 if hasattr(tf, 'contrib') else 1)


@pytest.mark.parametrize('decoder', [
    lambda logits, lengths: tf.nn.ctc_beam_search_decoder(logits, lengths, beam_width=3),
    lambda logits, lengths: tf.nn.ctc_greedy_decoder(logits, lengths),
])
def test_ctc_decoders_have_no_xla_kernel(decoder):
  """Rule 18 (apis.NO_XLA_KERNEL): CTCBeamSearchDecoder and CTCGreedyDecoder have no XLA kernel in either TensorFlow
  (held-out-28's solivr_crnn_ocr decodes in model_fn for its metrics)."""
  xla.register_xla_kernels()
  with tf.Graph().as_default() as graph:
    decoder(tf.zeros([5, 2, 4]), tf.constant([5, 5]))
    decoders = [op for op in graph.get_operations() if op.type.startswith('CTC')]
    assert decoders and not any(xla.has_xla_kernel(op) for op in decoders)
  assert {'tensorflow.nn.ctc_beam_search_decoder', 'tensorflow.nn.ctc_greedy_decoder'} <= apis.NO_XLA_KERNEL


def test_a_bincount_s_length_is_the_data_s_largest_value():
  """Rule 4 (apis.DYNAMIC_SHAPE_OPS): tf.math.bincount's output is as long as the largest value plus one, a shape
  XLA cannot fix at compile time (TF 1.15's Bincount has no XLA kernel at all; TF 2.15's DenseBincount compiles only
  a constant length)."""
  import numpy as np
  values = np.array([1, 2, 2, 5], np.int32)
  with pytest.raises((tf.errors.InvalidArgumentError, tf.errors.NotFoundError, tf.errors.InternalError)):
    compile_on_xla(lambda v: tf.cast(tf.reduce_sum(tf.math.bincount(v)), tf.float32), values)
  assert 'tensorflow.math.bincount' in apis.DYNAMIC_SHAPE_OPS and 'tensorflow.bincount' in apis.DYNAMIC_SHAPE_OPS


def test_the_numpy_functions_the_report_calls_float_step_counts_return_numpy_floats_for_ints():
  """estimator_checks.NUMPY_FLOAT_RESULTS: given ints, each returns a NumPy float, which TPUEstimator's
  check_positive_integer refuses in both TensorFlows (TF 2.15's takes NumPy ints too, TF 1.15's does not)."""
  from estimator_tpu.porting.report import estimator_checks
  from tensorflow_estimator.python.estimator.tpu import util as tpu_util
  for name in estimator_checks.NUMPY_FLOAT_RESULTS:
    function = getattr(np, name.split('.', 1)[1])
    value = function(7, 2) if name.endswith('divide') else function(7)
    assert isinstance(value, np.floating), (name, type(value))
    with pytest.raises(TypeError, match='must be int'):
      tpu_util.check_positive_integer(value, 'Eval steps')


def test_a_while_loop_that_grows_a_loop_variable_does_not_compile_on_xla():
  """Rule 4 (apis.WHILE_LOOPS, CONCATS): a body that concatenates onto a loop variable gives back another shape
  than it was given, which XLA refuses; the same loop with a looser shape_invariant but a body that keeps the shape
  compiles (held-out-28's word2vec CBOW)."""
  import numpy as np

  def looped(grow):
    def computation(x):
      def body(acc, i):
        return (tf.concat([acc, tf.ones([1, 4])], 0) if grow else acc * 2.0), i + 1
      acc, _ = tf.while_loop(lambda acc, i: i < 3, body, [x[:1], tf.constant(1)],
                             shape_invariants=[tf.TensorShape([None, 4]), tf.TensorShape([])])
      return tf.reduce_sum(acc)
    return computation

  with pytest.raises(tf.errors.InvalidArgumentError, match='shapes of loop body do not match'):
    compile_on_xla(looped(True), np.ones([3, 4], np.float32))
  assert compile_on_xla(looped(False), np.ones([3, 4], np.float32))[0] == 16.0
  assert 'tensorflow.while_loop' in apis.WHILE_LOOPS and 'tensorflow.concat' in apis.CONCATS
