"""The TPU readiness check as a library: the project's model passes; each broken variant fails with its fix.

Broken variants use a one-layer model (compiles in well under a second) so that every failure is the variant's.
"""
import io

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.porting import readiness
from estimator_tpu.porting.readiness import config_checks
from estimator_tpu.porting.readiness import input_checks
from estimator_tpu.porting.readiness import outfeed_checks
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import topology
from estimator_tpu.porting.readiness import xla
from support.programs import failed_checks as failures
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import accelerator_types
from estimator_tpu.tpu import deployment
from estimator_tpu.tpu import input_fn as tpu_input
from estimator_tpu.tpu import model_fn as model_fn_lib
from estimator_tpu.tpu import run_config
from support import tpu_topology
from support.loopback import closed_port

TF1 = tf.__version__.startswith('1.')
EXAMPLES = 64


def tiny_model_fn_builder(transform=None, cross_shard=True, count_steps=True):
  """A TPUEstimator model_fn with one dense layer; `transform(images, labels)` injects the variant under test."""

  def model_fn(features, labels, mode, params):
    images = tf.cast(features[model.IMAGE_KEY], tf.float32)
    if transform is not None:
      images = transform(images, labels)
    logits = tf.layers.dense(images, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=tf.cast(labels, tf.int32), logits=logits)
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    if params['use_tpu'] and cross_shard:
      optimizer = tf.tpu.CrossShardOptimizer(optimizer)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step() if count_steps else None)
    return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)

  return model_fn


def array_input_fn_builder(image_dtype=np.float32, label_dtype=np.int32, drop_remainder=True):
  """input_fn(params) over in-memory random digits of the given dtypes."""
  rng = np.random.RandomState(0)
  images = (rng.rand(EXAMPLES, 784) * 255).astype(image_dtype)
  labels = rng.randint(0, 10, EXAMPLES).astype(label_dtype)

  def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({model.IMAGE_KEY: images}, labels))
    return dataset.repeat().batch(params['batch_size'], drop_remainder=drop_remainder)

  return input_fn


def tiny_plan(**overrides):
  values = dict(num_shards=2, train_batch_size=16, eval_batch_size=8, predict_batch_size=8, iterations_per_loop=5,
                save_checkpoints_steps=10, eval_examples=EXAMPLES, eval_steps=EXAMPLES // 8)
  values.update(overrides)
  return tpu_topology.plan(**values)


def run_check(model_fn=None, input_fn=None, plan=None, **input_fns):
  checks = readiness.check_tpu_readiness(model_fn or tiny_model_fn_builder(), input_fn or array_input_fn_builder(),
                                         plan or tiny_plan(), probe_timeout_secs=2.0, **input_fns)
  return {check.name: check for check in checks}


def test_the_projects_model_and_input_pass(data_dir):
  plan = tpu_topology.plan(num_shards=2, train_batch_size=32, eval_batch_size=10, predict_batch_size=10,
                           iterations_per_loop=10, save_checkpoints_steps=100, eval_examples=110, eval_steps=11,
                           model_dir='/tmp/not-used', data_dir=data_dir, eval_padded=True, train_examples=250,
                           eval_split='test')
  model_fn = model_fn_lib.model_fn_builder(learning_rate=1e-3, decay_steps=100, decay_rate=0.5,
                                           summary_dir='/tmp/not-written')
  input_fn = tpu_input.train_input_fn_builder(data_dir)
  checks = run_check(model_fn, input_fn, plan,
                     eval_input_fn=tpu_input.eval_input_fn_builder(data_dir, 'test', 10, steps=11),
                     predict_input_fn=tpu_input.predict_input_fn_builder(data_dir, 'test', -1, 10))
  assert failures(checks) == []
  assert [name for name, check in checks.items() if check.status == check_results.SKIP] == ['cloud_storage',
                                                                                       'tpu_reachable']
  assert "features['image'] [16, 784], labels [16]" in checks['input_shapes'].message
  assert 'input_fn runs once on the one host' in checks['train_input'].message
  assert 'from all 250 training examples' in checks['train_input'].message
  # The compiled step held the project's CrossShardOptimizer: 8 variables, one cross-core sum each.
  assert 'global step 0 -> 1' in checks['xla_compile'].message
  assert '8 CrossReplicaSum ops' in checks['xla_compile'].message
  assert 'gradients of 8 variables are combined across the 2 cores' in checks['gradient_all_reduce'].message
  assert 'scaled by 1/2, so the update uses the mean gradient' in checks['gradient_all_reduce'].message
  assert 'learning_rate [1], loss [1], step [1]' in checks['host_call'].message
  assert 'labels [5], logits [5, 10], weights [5]' in checks['eval_step'].message
  assert 'class_ids [5], probabilities [5, 10]' in checks['predict_step'].message
  assert '11 steps of 10 = 110 real + 0 padding rows' in checks['eval_coverage'].message


def test_bfloat16_steps_compile_with_xla(data_dir):
  plan = tpu_topology.plan(num_shards=2, train_batch_size=32, eval_batch_size=10, predict_batch_size=10,
                           precision=model.BFLOAT16)
  model_fn = model_fn_lib.model_fn_builder(learning_rate=1e-3, decay_steps=100, decay_rate=0.5,
                                           precision=model.BFLOAT16)
  checks = run_check(model_fn, tpu_input.train_input_fn_builder(data_dir), plan,
                     eval_input_fn=tpu_input.eval_input_fn_builder(data_dir, 'test', 10, steps=11),
                     predict_input_fn=tpu_input.predict_input_fn_builder(data_dir, 'test', -1, 10))
  assert failures(checks) == []
  assert 'global step 0 -> 1' in checks['xla_compile'].message
  assert checks['eval_step'].status == checks['predict_step'].status == check_results.PASS
  assert checks['precision'].message.startswith('the network computes in bfloat16 (tf.tpu.bfloat16_scope())')


def test_the_tiny_baseline_passes():
  assert failures(run_check()) == []


def test_py_func_in_the_model_is_an_op_xla_rejects():
  def python_side(images, labels):
    result = tf.py_func(lambda x: x, [images], tf.float32, name='python_side')
    result.set_shape(images.shape)
    return result

  checks = run_check(tiny_model_fn_builder(python_side))
  assert failures(checks) == ['xla_compile']
  assert checks['global_step'].status == check_results.SKIP
  assert "XLA cannot compile 1 op of the TPU training step: PyFunc 'python_side'" in checks['xla_compile'].message
  assert 'do that work in input_fn' in checks['xla_compile'].fix


def test_unique_is_a_dynamic_shape():
  def with_unique(images, labels):
    distinct, _ = tf.unique(labels, name='distinct_labels')
    return images + tf.cast(tf.reduce_sum(distinct), tf.float32)

  checks = run_check(tiny_model_fn_builder(with_unique))
  message = checks['step_shapes'].message
  assert checks['step_shapes'].status == check_results.FAIL
  assert "'distinct_labels:0' (Unique) has shape [?]" in message
  assert 'tf.unique' in checks['step_shapes'].fix
  if TF1:  # TF 1.15's XLA has no Unique kernel at all; TF 2.15's CPU XLA compiles it, the TPU still would not.
    assert failures(checks) == ['step_shapes', 'xla_compile']
    assert "Unique 'distinct_labels'" in checks['xla_compile'].message
  else:
    assert failures(checks) == ['step_shapes']


def test_a_fused_batch_norm_in_training_passes_though_tensorflow_leaves_one_output_unshaped():
  """FusedBatchNormV3's reserve_space_3 has no static shape in any graph (its gradient reads it; the kernel sizes
  it), and the step compiles: a batch-normalised model is no dynamic shape (held-out-20's khazit_lip2word_vgg port,
  whose step_shapes FAIL named only that output)."""
  def normalised(images, labels):
    return tf.layers.batch_normalization(tf.reshape(images, [-1, 28, 28, 1]), training=True, fused=True,
                                         name='normalised')

  def flat(images, labels):
    return tf.reshape(normalised(images, labels), [-1, 784])

  with tf.Graph().as_default() as graph:
    normalised(tf.zeros([4, 784]), None)
    reserve = [op.outputs[5] for op in graph.get_operations() if op.type == 'FusedBatchNormV3']
  assert reserve and reserve[0].shape.dims is None
  assert failures(run_check(tiny_model_fn_builder(flat))) == []


def test_a_dynamic_rnn_over_a_static_sequence_is_no_dynamic_shape():
  """dynamic_rnn stacks its outputs from a TensorArray over tf.range(TensorArraySizeV3): the range has no static
  length in the graph, but the array was made with the time steps of a static input, which XLA knows when it
  compiles: step_shapes passes, as xla_compile does (held-out-24's grid-cell and held-out-23's chatbot ports had a
  step_shapes FAIL beside their own xla_compile PASS)."""
  def recurrent(images, labels):
    sequence = tf.reshape(images, [-1, 28, 28])
    outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(8), sequence, dtype=tf.float32)
    return tf.reshape(outputs, [-1, 28 * 8])

  with tf.Graph().as_default() as graph:
    recurrent(tf.zeros([4, 784]), None)
    ranges = [op.outputs[0] for op in graph.get_operations() if op.type == 'Range' and
              any(i.op.type == 'TensorArraySizeV3' for i in op.inputs)]
  if TF1:  # (TF 2's control flow v2 stacks a TensorList instead)
    assert ranges and not ranges[0].shape.is_fully_defined()
  assert failures(run_check(tiny_model_fn_builder(recurrent))) == []


def test_a_metric_in_the_training_step_compiles_as_its_local_variables_are_initialised():
  """tf.metrics in TRAIN mode make local variables that TPUEstimator's Scaffold initialises (local_init_op): the
  step compiles and runs (held-out-13's Keras LeNet port and held-out-20's lip-reading port failed xla_compile with
  "invalid XlaOp with handle -1", XLA's words for a variable nobody initialised)."""
  def with_accuracy(images, labels):
    accuracy, update = tf.metrics.accuracy(labels, tf.argmax(images, axis=1))
    tf.identity(update, name='train_accuracy')
    return images

  assert failures(run_check(tiny_model_fn_builder(with_accuracy))) == []


def test_variables_made_in_the_step_are_the_kind_tensorflow_s_tpu_rewrite_makes():
  """TensorFlow's TPU rewrite builds the computation with resource variables and without partitioners
  (tpu.py, split_compile_and_replicate); the step the checks compile makes the same variables."""
  def variables_made(build):
    with tf.Graph().as_default() as graph:
      build()
      return sorted((v.op.name, v.op.type, tuple(v.shape.as_list()))
                    for v in graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)
                    + graph.get_collection(tf.GraphKeys.LOCAL_VARIABLES) if 'global_step' not in v.op.name)

  def step():
    values = tf.ones([8, 6])
    total = tf.get_variable('split', [6, 4], partitioner=tf.fixed_size_partitioner(2))
    accuracy, update = tf.metrics.accuracy(tf.zeros([8], tf.int64), tf.argmax(values, axis=1))
    with tf.control_dependencies([update]):
      return tf.reduce_sum(tf.matmul(values, total)), []

  def tpu_rewrite():
    tf.tpu.rewrite(lambda: step()[0])

  def checked_step():
    xla.compile_as_tpu_iteration(step, [])

  made = variables_made(tpu_rewrite)
  assert ('split', 'VarHandleOp', (6, 4)) in made and ('accuracy/total', 'VarHandleOp', ()) in made
  assert variables_made(checked_step) == made


def test_shape_computed_from_data_fails_to_compile():
  def data_shaped(images, labels):
    # Always 8 (labels are digits), but XLA only sees a value computed from the data. (TensorFlow's graph
    # optimizer, which runs on the body of TPUEstimator's loop before XLA compiles it, would fold `labels * 0` and
    # drop a reshape straight back to a static shape: this one's dynamic shape reaches a sum.)
    rows = tf.reduce_max(labels) // 100 + 8
    return images + tf.reduce_mean(tf.reshape(images, tf.stack([rows, -1])))

  checks = run_check(tiny_model_fn_builder(data_shaped))
  assert failures(checks) == ['step_shapes', 'xla_compile']
  assert 'Reshape must be a compile-time constant' in checks['xla_compile'].message
  assert "'Reshape:0' (Reshape) has shape [?, ?]" in checks['step_shapes'].message


def test_summary_in_the_step_would_be_dropped_on_tpu():
  def with_summary(images, labels):
    tf.summary.scalar('mean_pixel', tf.reduce_mean(images))
    return images

  checks = run_check(tiny_model_fn_builder(with_summary))
  assert failures(checks) == ['step_summaries']
  assert "writes 1 summary in the TRAIN step ('mean_pixel')" in checks['step_summaries'].message
  assert 'host_call' in checks['step_summaries'].fix


def test_model_fn_that_fails_to_build_on_tpu():
  def model_fn(features, labels, mode, params):
    del features, labels, mode
    return params['hidden_units']  # a param only the CPU run was given

  checks = run_check(model_fn)
  assert failures(checks) == ['xla_compile']
  assert "model_fn failed to build the TPU training step: KeyError: 'hidden_units'" in checks['xla_compile'].message
  assert all(checks[name].status == check_results.SKIP for name in readiness.STEP_CHECKS[1:])


def test_model_fn_reading_params_by_attribute_is_told_to_read_the_dict_tpuestimator_gives():
  """An HParams or Namespace read by attribute (params.hidden_units) fails where TPUEstimator hands model_fn a dict:
  the fix names the key to read and the params check, not a generic rebuild."""
  def model_fn(features, labels, mode, params):
    del features, labels, mode
    return params.hidden_units

  checks = run_check(model_fn)
  assert failures(checks) == ['xla_compile']
  assert "AttributeError: 'dict' object has no attribute 'hidden_units'" in checks['xla_compile'].message
  assert "read params['hidden_units']" in checks['xla_compile'].fix and 'params check' in checks['xla_compile'].fix


def keras_sequential_model_fn(features, labels, mode, params):
  """tensorflow/models' official MNIST model shape: a Keras Sequential whose first layer has `input_shape`, which in
  graph mode makes a Placeholder and a symbolic copy of the network (with Dropout's learning-phase cond) that the
  call on the real features never uses."""
  network = tf.keras.Sequential([tf.keras.layers.Reshape((28, 28, 1), input_shape=(784,)),
                                 tf.keras.layers.Flatten(), tf.keras.layers.Dense(16), tf.keras.layers.Dropout(0.4),
                                 tf.keras.layers.Dense(10)])
  logits = network(tf.cast(features[model.IMAGE_KEY], tf.float32), training=mode == tf.estimator.ModeKeys.TRAIN)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=tf.cast(labels, tf.int32), logits=logits)
  optimizer = tf.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.1))
  return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss,
                                           train_op=optimizer.minimize(loss, tf.train.get_global_step()))


def test_a_keras_sequential_with_input_shape_is_judged_as_tensorflow_compiles_its_loop():
  """TPUEstimator runs model_fn inside training_loop's while loop. Under TF 1 control flow XLA keeps only what the
  loop's results reach, so the unused Placeholder of the Sequential's input_shape is never compiled: every check
  passes. Under TF 2 control flow (while_v2, TF 2.15's default) the loop body is a function XLA compiles whole, and
  TensorFlow's XLA refuses that Placeholder: the check says so."""
  checks = run_check(keras_sequential_model_fn)
  if not tf.control_flow_v2_enabled():
    assert failures(checks) == []
    assert checks['xla_compile'].status == check_results.PASS
  else:
    assert 'xla_compile' in failures(checks)
    assert "Placeholder 'reshape_input'" in checks['xla_compile'].message


def test_input_with_a_dynamic_batch_dimension():
  checks = run_check(input_fn=array_input_fn_builder(drop_remainder=False))
  assert failures(checks) == ['input_shapes']
  assert "features['image'] has shape [?, 784], labels has shape [?]" in checks['input_shapes'].message
  assert 'drop_remainder=True' in checks['input_shapes'].fix


def test_float64_images():
  checks = run_check(input_fn=array_input_fn_builder(image_dtype=np.float64))
  assert failures(checks) == ['input_dtypes']
  assert "features['image'] is float64" in checks['input_dtypes'].message
  assert 'cast float64 to float32 in input_fn' in checks['input_dtypes'].fix


def test_int64_features_and_labels_are_infeed_dtypes():
  """tensorflow/tpu's mnist_tpu.py feeds int64 labels: TPU infeed takes int64 (tpu_ops._SUPPORTED_INFEED_DTYPES)."""
  checks = run_check(input_fn=array_input_fn_builder(image_dtype=np.int64, label_dtype=np.int64))
  assert failures(checks) == []
  assert checks['input_dtypes'].message.startswith("features['image'] int64, labels int64: all in the TPU infeed")
  assert 'int64' in [dtype.name for dtype in input_checks.TPU_DTYPES]


def test_uint8_images_only_fail_where_tensorflow_refuses_them():
  checks = run_check(input_fn=array_input_fn_builder(image_dtype=np.uint8))
  if TF1:  # TF 1.15's infeed has no uint8; TF 2.15's has (tensorflow/python/tpu/ops/tpu_ops.py)
    assert failures(checks) == ['input_dtypes']
    assert "features['image'] is uint8" in checks['input_dtypes'].message
    assert 'cast uint8 to float32' in checks['input_dtypes'].fix
  else:
    assert failures(checks) == []


def test_float64_inside_the_model():
  checks = run_check(tiny_model_fn_builder(lambda images, labels: tf.cast(tf.cast(images, tf.float64) * 2.0,
                                                                          tf.float32)))
  assert failures(checks) == ['step_dtypes']
  assert 'compute in float64' in checks['step_dtypes'].message


def test_input_fn_ignoring_the_per_core_batch():
  def global_batch_input_fn(params):
    return array_input_fn_builder()(dict(params, batch_size=16))

  checks = run_check(input_fn=global_batch_input_fn)
  assert failures(checks) == ['input_batch']
  assert "features['image'] has batch dimension 16" in checks['input_batch'].message
  assert "params['batch_size'] is 8 per core" in checks['input_batch'].message


def test_missing_cross_shard_optimizer():
  checks = run_check(tiny_model_fn_builder(cross_shard=False))
  assert failures(checks) == ['gradient_all_reduce']  # TF 1.15's TPUEstimator would refuse it too
  assert 'tf.tpu.CrossShardOptimizer' in checks['gradient_all_reduce'].fix


def test_train_op_that_never_moves_the_global_step():
  checks = run_check(tiny_model_fn_builder(count_steps=False))
  assert failures(checks) == ['global_step']
  assert 'global_step=tf.train.get_global_step()' in checks['global_step'].fix


def test_failing_input_fn_skips_the_step_checks(tmp_path):
  input_fn = tpu_input.train_input_fn_builder(str(tmp_path))
  checks = run_check(input_fn=input_fn)
  assert failures(checks) == ['input_fn']
  assert 'reading one batch failed' in checks['input_fn'].message
  assert all(checks[name].status == check_results.SKIP for name in readiness.STEP_CHECKS)


def test_an_input_fn_that_looks_words_up_in_a_table_reads_as_the_estimator_reads_it():
  """Estimator's Scaffold initialises lookup tables before the first batch (tables_initializer in its local_init_op):
  the check's one-batch read must too, or every such input fails on the check's own session (held-out-18's
  bytecup --write judge notes)."""
  rng = np.random.RandomState(0)
  words = np.array([b'a', b'b', b'c'])[rng.randint(0, 3, EXAMPLES)]
  labels = rng.randint(0, 10, EXAMPLES).astype(np.int32)

  def input_fn(params):
    table = tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant([b'a', b'b', b'c']), tf.constant([0., 1., 2.])), -1.)
    dataset = tf.data.Dataset.from_tensor_slices((words, labels)).repeat()
    dataset = dataset.map(lambda word, label: ({model.IMAGE_KEY: tf.fill([784], table.lookup(word))}, label))
    return dataset.batch(params['batch_size'], drop_remainder=True)

  checks = run_check(input_fn=input_fn)
  assert failures(checks) == []  # it failed on 'reading one batch failed: Table not initialized.'
  assert checks['input_batch'].message.startswith("batches of params['batch_size'] = 8 (per core)")


def test_evaluation_tensors_of_a_dynamic_batch_are_named_where_tensorflow_fails_to_build_the_graph():
  """An eval input_fn that returns an iterator's tensors, batched without drop_remainder: TensorFlow's SLICED
  evaluation graph fails on the unknown batch dimension with a bare TypeError (held-out-18 nrstott --write judge
  notes); the evaluate line names the input's dynamic parts and the static-shape fix, as it does for a Dataset."""
  rng = np.random.RandomState(0)
  images = rng.rand(EXAMPLES, 784).astype(np.float32)
  labels = rng.randint(0, 10, EXAMPLES).astype(np.int32)

  def eval_input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({model.IMAGE_KEY: images}, labels)).batch(params['batch_size'])
    return tf.data.make_one_shot_iterator(dataset).get_next()

  checks = run_check(eval_input_fn=eval_input_fn)
  assert failures(checks) == ['evaluate']
  message = checks['evaluate'].message
  assert "TypeError" in message  # TensorFlow's own failure stays in the line
  assert "the input is not of static shape: features['image'], labels (see input_shapes)" in message
  assert 'drop_remainder=True' in checks['evaluate'].fix


def test_batch_not_divisible_by_num_shards():
  checks = run_check(plan=tiny_plan(num_shards=8, train_batch_size=100, eval_batch_size=64, predict_batch_size=60,
                                    eval_steps=1))
  # TensorFlow itself refuses to train; it does not check SLICED evaluation and prediction batches.
  assert failures(checks) == ['batch_split', 'train_input']
  assert 'train batch size 100 must be divisible by number of replicas 8' in checks['train_input'].message
  assert 'train batch 100, predict batch 60 not divisible by num_shards=8' in checks['batch_split'].message
  assert 'train batch 96, predict batch 64' in checks['batch_split'].fix


def test_local_model_dir_with_a_named_tpu():
  port = closed_port()
  checks = run_check(plan=tiny_plan(master='grpc://127.0.0.1:%d' % port, model_dir='/tmp/model',
                                    data_dir='gs://bucket/data'))
  assert failures(checks) == ['cloud_storage', 'tpu_reachable']
  assert "model_dir='/tmp/model' not on Cloud Storage" in checks['cloud_storage'].message
  assert 'gs://BUCKET' in checks['cloud_storage'].fix
  assert 'grpc://127.0.0.1:%d is not reachable' % port in checks['tpu_reachable'].message


@pytest.mark.parametrize('save, loop, every', [(1000, 300, 1200), (100, 30, 120), (5, 50, 50)])
def test_checkpoint_cadence_off_the_loop_boundaries_is_rounded_up_as_the_run_rounds_it(save, loop, every):
  check = config_checks.check_checkpoint_cadence(tiny_plan(save_checkpoints_steps=save, iterations_per_loop=loop))
  assert check.status == check_results.PASS
  assert 'rounds it up, as the run will: a checkpoint every %d steps' % every in check.message
  config = run_config.build_run_config('/tmp/unused', loop, None, save, master='')
  assert config.save_checkpoints_steps == every


def test_checkpoint_cadence_on_the_loop_boundaries():
  check = config_checks.check_checkpoint_cadence(tiny_plan(save_checkpoints_steps=1000, iterations_per_loop=50))
  assert check.status == check_results.PASS and '20 device loops' in check.message


@pytest.mark.parametrize('examples, batch, steps, status, words', [
    (10000, 1000, 10, check_results.PASS, 'every example is scored exactly once'),
    (10000, 1024, 9, check_results.FAIL, '784 are never scored'),
    (10000, 1000, 11, check_results.FAIL, 'the input would end early'),
])
def test_eval_steps_cover_the_eval_split(examples, batch, steps, status, words):
  check = config_checks.check_eval_coverage(tiny_plan(num_shards=8, eval_examples=examples, eval_batch_size=batch,
                                                      eval_steps=steps))
  assert check.status == status and words in check.message


@pytest.mark.parametrize('padded, status', [(True, check_results.PASS), (False, check_results.FAIL)])
def test_padded_eval_input_covers_a_split_that_batches_do_not_divide(padded, status):
  plan = tiny_plan(num_shards=8, eval_examples=10000, eval_batch_size=1024, eval_steps=10)
  plan.eval_padded = padded
  check = config_checks.check_eval_coverage(plan)
  assert check.status == status
  assert ('240 padding rows of weight 0' in check.message) == padded


def test_eval_coverage_fix_without_a_fitting_batch_only_suggests_padding():
  check = config_checks.check_eval_coverage(tiny_plan(num_shards=32, eval_examples=10000, eval_batch_size=2496,
                                                      eval_steps=4))
  assert check.fix.startswith('pad the split with zero-weight examples')


def test_eval_coverage_fix_suggests_a_batch_that_fits():
  check = config_checks.check_eval_coverage(tiny_plan(num_shards=8, eval_examples=10000, eval_batch_size=1024,
                                                      eval_steps=9))
  assert '(e.g. 1000)' in check.fix


def test_printer_writes_one_line_per_check_and_returns_the_status():
  stream = io.StringIO()
  status = readiness.print_results([check_results.passed('topology', 'fine.'),
                                    check_results.failed('input_shapes', 'broken.', 'mend it.'),
                                    check_results.skipped('tpu_reachable', 'not asked.')], stream)
  assert status == 1
  assert stream.getvalue().splitlines() == [
      'PASS topology (rule 14): fine.', 'FAIL input_shapes (rule 4): broken. Fix: mend it.',
      'SKIP tpu_reachable (rule 2): not asked.', 'TPU readiness: 1 passed, 1 failed, 1 skipped.']
  assert readiness.print_results([check_results.passed('topology', 'fine.')], io.StringIO()) == 0


# --- The per-host plan: TensorFlow's own TPUEstimator on the planned slice -----------------------------------------

def modes_model_fn_builder(metric_tensors=None, host_call_tensors=None, prediction_tensors=None):
  """A one-layer model_fn for every mode; the *_tensors(logits, labels) hooks inject what leaves the TPU."""

  def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(tf.cast(features[model.IMAGE_KEY], tf.float32), 10)
    if mode == tf.estimator.ModeKeys.PREDICT:
      predictions = (prediction_tensors or (lambda lg: {'class_ids': tf.argmax(lg, 1)}))(logits)
      return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
      tensors = (metric_tensors or (lambda lg, lb: {'labels': lb, 'logits': lg}))(logits, labels)
      metric_fn = lambda **kw: {'accuracy': tf.metrics.accuracy(kw['labels'], tf.argmax(kw['logits'], 1))}
      return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, eval_metrics=(metric_fn, tensors))
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    if params['use_tpu']:
      optimizer = tf.tpu.CrossShardOptimizer(optimizer)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    host_call = None
    if host_call_tensors is not None:
      host_call = (lambda **kw: tf.no_op(), host_call_tensors(loss))
    return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, host_call=host_call)

  return model_fn


def predict_input_fn(params):
  images = (np.random.RandomState(1).rand(EXAMPLES, 784) * 255).astype(np.float32)
  return tf.data.Dataset.from_tensor_slices({model.IMAGE_KEY: images}).batch(params['batch_size'])


def pod_check(model_fn=None, input_fn=None, **plan_values):
  """The checks for a 2-host x 8-core slice (16 cores) with every mode's input."""
  values = dict(num_shards=16, train_batch_size=32, eval_batch_size=16, predict_batch_size=16, eval_steps=4)
  values.update(plan_values)
  return run_check(model_fn or modes_model_fn_builder(), input_fn or sharding_input_fn, tiny_plan(**values),
                   eval_input_fn=array_input_fn_builder(), predict_input_fn=predict_input_fn)


def sharding_input_fn(params):
  """array_input_fn_builder's data, this host's shard of it (as tpu/input_fn.py shards)."""
  index, count = deployment.input_deployment(params)
  return array_input_fn_builder()(params).shard(count, index)


def test_the_plan_per_host_on_a_pod_slice():
  checks = pod_check(train_examples=EXAMPLES)
  assert failures(checks) == []
  assert checks['topology'].message.startswith('2 hosts x 8 cores = 16 cores; TensorFlow %s counts 2 hosts of 8 '
                                               'cores' % tf.__version__)
  assert ("input_fn runs once on each of the 2 hosts (PER_HOST_V2) with params['batch_size'] = 2 per core; each host "
          'feeds its 8 cores 16 examples per step (global 32), host h reading shard h of 2: 32, 32 of 64'
          in checks['train_input'].message)
  evaluate = checks['evaluate'].message
  assert evaluate.startswith('evaluate runs on the TPU, 16 cores x 1 examples per step, SLICED input: input_fn runs '
                             'once, on /job:tpu_worker/')
  assert "task:0, params['batch_size'] = 16, and TensorFlow splits each batch over the cores" in evaluate
  refused = 'Per-host input would be refused on 2 hosts: TensorFlow %s says "TPUEstimator.evaluate is only'
  assert (refused % tf.__version__ in evaluate) == TF1  # TF 2.15 evaluates per host, with a warning
  assert 'Per-host input would be refused on 2 hosts' in checks['predict'].message  # both TFs
  assert 'logits [1, 10]' in checks['eval_step'].message and 'class_ids [1]' in checks['predict_step'].message


def test_a_v4_slice_has_4_cores_per_host():
  checks = pod_check(num_shards=8, cores_per_host=4, train_batch_size=16, eval_batch_size=8, predict_batch_size=8,
                     eval_steps=8)
  assert failures(checks) == []
  assert checks['topology'].message.startswith('2 hosts x 4 cores = 8 cores')
  assert "each host feeds its 4 cores 8 examples per step" in checks['train_input'].message


def test_an_input_fn_that_ignores_its_host_fails_on_a_pod_slice():
  checks = pod_check(input_fn=array_input_fn_builder())
  assert failures(checks) == ['train_input']
  assert "never reads params['context'], so every host would read the same examples" in checks['train_input'].message
  assert 'dataset.shard(count, index)' in checks['train_input'].fix


def test_cores_that_do_not_fill_hosts_are_no_slice():
  with pytest.raises(UserError, match='12 cores do not fill hosts of 8 cores'):
    pod_check(num_shards=12, train_batch_size=24, eval_batch_size=12, predict_batch_size=12)


def test_evaluation_on_the_cpu_and_prediction_on_the_tpu():
  checks = pod_check(eval_on_tpu=False)
  assert failures(checks) == []
  assert checks['evaluate'].message.startswith('evaluate runs on the CPU (eval_on_tpu=False)')
  assert checks['eval_step'].status == check_results.SKIP
  assert checks['predict'].message.startswith('predict runs on the TPU, 16 cores x 1 examples per step, SLICED')


def test_metric_tensors_that_are_not_batch_major():
  model_fn = modes_model_fn_builder(metric_tensors=lambda logits, labels: {
      'labels': labels, 'logits': logits, 'mean_logit': tf.reshape(tf.reduce_mean(logits), [1])})
  checks = run_check(model_fn, plan=tiny_plan(), eval_input_fn=array_input_fn_builder())
  assert failures(checks) == ['eval_step']
  assert 'mean_logit does not start with the batch dimension (4 per core)' in checks['eval_step'].message


def test_scalar_host_call_tensors():
  model_fn = modes_model_fn_builder(host_call_tensors=lambda loss: {'loss': loss})
  checks = run_check(model_fn)
  assert failures(checks) == ['host_call']
  assert checks['train_input'].status == check_results.PASS  # TensorFlow called input_fn, then refused the outfeed
  assert 'host_call tensors loss are scalars' in checks['host_call'].message
  assert 'tf.reshape(x, [1])' in checks['host_call'].fix


def test_host_call_every_n_steps_is_reported():
  model_fn = modes_model_fn_builder(host_call_tensors=lambda loss: {'loss': tf.reshape(loss, [1])})
  checks = run_check(model_fn, plan=tiny_plan(host_call_every_n_steps=5))
  assert failures(checks) == []
  assert 'loss [1]' in checks['host_call'].message and 'every 5 steps' in checks['host_call'].message


def test_predictions_that_are_not_batch_major():
  model_fn = modes_model_fn_builder(prediction_tensors=lambda logits: {'top': tf.reduce_max(logits, axis=0)})
  checks = run_check(model_fn, plan=tiny_plan(), predict_input_fn=predict_input_fn)
  assert failures(checks) == ['predict_step']
  assert 'top does not start with the batch dimension (4 per core)' in checks['predict_step'].message


def test_scalar_predictions_are_refused_by_tensorflow_itself():
  model_fn = modes_model_fn_builder(prediction_tensors=lambda logits: {'top': tf.reduce_max(logits)})
  checks = run_check(model_fn, plan=tiny_plan(), predict_input_fn=predict_input_fn)
  assert failures(checks) == ['predict']
  assert 'TPUEstimator could not build the prediction graph' in checks['predict'].message
  assert 'the tensors that leave the TPU are top [], and top not batch-major (4 per core)' in checks['predict'].message


def per_host_plan(eval_batch_size, predict_batch_size):
  """A plan on 8 cores whose evaluation and prediction input is PER_HOST_V2 (TPUConfig's default), where TensorFlow
  itself checks that the cores divide each batch."""
  config = tf.estimator.tpu.RunConfig(
      model_dir=topology.scratch_model_dir(),
      tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=1, num_shards=8))
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=modes_model_fn_builder(), config=config, use_tpu=True, train_batch_size=16,
      eval_batch_size=eval_batch_size, predict_batch_size=predict_batch_size)
  return readiness.TpuPlan(estimator, accelerator_types.shape_from_cores(8))


def test_a_refused_eval_batch_still_has_its_step_judged_at_a_batch_the_cores_divide():
  # TensorFlow refuses 20 on 8 cores before building anything; what leaves the TPU is judged at 16 all the same.
  model_fn = modes_model_fn_builder(metric_tensors=lambda logits, labels: {
      'labels': labels, 'logits': logits, 'mean_logit': tf.reshape(tf.reduce_mean(logits), [1])})
  checks, _ = readiness.check_mode(model_fn, array_input_fn_builder(), per_host_plan(20, 16), readiness.EVAL)
  checks = {check.name: check for check in checks}
  assert 'eval batch size 20 must be divisible by number of replicas 8' in checks['evaluate'].message
  assert failures(checks) == ['batch_split', 'eval_step', 'evaluate']
  assert checks['eval_step'].message.startswith('at a batch of 16 (20 does not divide over 8 cores; see batch_split)')
  assert 'mean_logit does not start with the batch dimension (2 per core)' in checks['eval_step'].message


def test_a_refused_predict_batch_of_fewer_examples_than_cores_is_judged_at_one_per_core():
  checks, _ = readiness.check_mode(modes_model_fn_builder(), predict_input_fn, per_host_plan(16, 3), readiness.PREDICT)
  checks = {check.name: check for check in checks}
  assert failures(checks) == ['batch_split', 'predict']
  assert checks['predict_step'].status == check_results.PASS
  assert checks['predict_step'].message.startswith('at a batch of 8 (3 does not divide over 8 cores')
  assert '1 examples per core' in checks['predict_step'].message


def test_a_train_batch_smaller_than_the_cores_still_has_its_step_judged_at_one_per_core():
  # 4 examples on 8 cores: TensorFlow refuses it, and the step is built at 8 all the same, where the scalar host_call
  # fails as it would once the batch is mended.
  model_fn = modes_model_fn_builder(host_call_tensors=lambda loss: {'loss': loss})
  checks, _ = readiness.check_mode(model_fn, array_input_fn_builder(), tiny_plan(num_shards=8, train_batch_size=4),
                                   tf.estimator.ModeKeys.TRAIN)
  checks = {check.name: check for check in checks}
  assert failures(checks) == ['batch_split', 'host_call', 'train_input']
  assert checks['xla_compile'].status == check_results.PASS
  assert checks['xla_compile'].message.startswith('at a batch of 8 (4 is fewer than the 8 cores; see batch_split)')
  assert '1 examples per core' in checks['xla_compile'].message
  assert 'host_call tensors loss are scalars' in checks['host_call'].message


def saved_dense_checkpoint(folder):
  """A checkpoint of the one-layer model's dense/kernel and dense/bias, as a pretrained model would be."""
  path = str(folder / 'pretrained.ckpt')
  with tf.Graph().as_default():
    tf.layers.dense(tf.zeros([1, 784]), 10)
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      tf.train.Saver().save(session, path)
  return path


@pytest.mark.parametrize('in_scaffold', [False, True])
def test_a_checkpoint_restored_inside_model_fn_fails_the_step_and_one_restored_in_scaffold_fn_passes(
    tmp_path, in_scaffold):
  """tf.train.init_from_checkpoint called in model_fn builds its restore in the TPU computation (held-out-26's
  BERT-NER, before its use_tpu branch); in scaffold_fn TPUEstimator runs it on the host."""
  checkpoint = saved_dense_checkpoint(tmp_path)

  def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(tf.cast(features[model.IMAGE_KEY], tf.float32), 10)
    restore = lambda: tf.train.init_from_checkpoint(checkpoint, {'dense/': 'dense/'})
    scaffold_fn = None
    if in_scaffold:
      scaffold_fn = lambda: restore() or tf.train.Scaffold()
    else:
      restore()
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    optimizer = tf.tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.1))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn)

  checks, _ = readiness.check_mode(model_fn, array_input_fn_builder(), tiny_plan(), tf.estimator.ModeKeys.TRAIN)
  checks = {check.name: check for check in checks}
  assert failures(checks) == ([] if in_scaffold else ['xla_compile'])
  if not in_scaffold:
    assert 'restores variables from a checkpoint inside the TPU training step' in checks['xla_compile'].message
    assert 'scaffold_fn' in checks['xla_compile'].fix


def test_a_multi_host_tpu_vm_is_not_one_tensorflow_sees():
  checks = pod_check(tpu_name='local')
  assert 'topology' in failures(checks)
  assert "TPUClusterResolver('local') gives the in-process master ''" in checks['topology'].message


def test_a_tpu_vm_uses_local_paths_and_needs_an_attached_tpu():
  checks = run_check(plan=tiny_plan(tpu_name='local', model_dir='/tmp/model'))
  assert checks['cloud_storage'].status == check_results.SKIP
  assert failures(checks) == ['tpu_reachable']  # no TPU here; TF 1.15 has no TPU VMs at all
  expected = 'cannot use: TPU VMs run TensorFlow 2' if TF1 else 'no TPU is attached to this machine'
  assert expected in checks['tpu_reachable'].message


@pytest.mark.parametrize('invocations, steps, status, words', [
    (1, 2, check_results.PASS, '2 steps of 64 = 110 real + 18 padding rows'),
    (4, 2, check_results.PASS, 'real + weight-0 padding rows per call: 28 + 4, 28 + 4, 27 + 5, 27 + 5'),
    (4, 1, check_results.FAIL, '1 steps of 64 leave 46 examples unscored'),
])
def test_padded_eval_coverage_per_input_fn_call(invocations, steps, status, words):
  plan = tiny_plan(num_shards=32, eval_examples=110, eval_batch_size=64, eval_steps=steps, eval_padded=True)
  check = config_checks.check_eval_coverage(plan, invocations)
  assert check.status == status and words in check.message


def test_host_call_that_does_not_match_its_function_is_refused_by_tensorflow():
  def model_fn(features, labels, mode, params):
    spec = modes_model_fn_builder()(features, labels, mode, params)
    step = tf.reshape(tf.train.get_global_step(), [1])
    return spec._replace(host_call=(lambda step, loss: tf.no_op(), [step]))  # two arguments, one tensor

  checks = run_check(model_fn)
  assert failures(checks) == ['host_call']
  assert 'TPUEstimator could not build the training graph: TypeError:' in checks['host_call'].message
  assert "missing 1 required positional argument: 'loss'" in checks['host_call'].message


@pytest.mark.skipif(not TF1, reason='HParams (tf.contrib.training) exists in TensorFlow 1.x only')
def test_the_tpu_params_of_a_program_that_passes_an_hparams_are_an_hparams_with_tensorflow_s_keys():
  """TPUEstimator takes an HParams as params and adds batch_size and use_tpu with add_hparam/set_hparam
  (tpu_estimator's _add_item_to_params); the judge gives model_fn the same, not dict(hparams) (a TypeError that
  ended a real program's judgement, held-out-8's contrib.learn MNIST)."""
  import types
  from tensorflow.contrib.training import HParams  # pylint: disable=g-import-not-at-top -- TF 1 only
  from estimator_tpu.porting.readiness import plan as plan_lib
  hparams = HParams(learning_rate=0.1, batch_size=64)
  given = plan_lib.TpuPlan.tpu_params(types.SimpleNamespace(params=hparams, per_shard_batch_size=8))
  assert isinstance(given, HParams) and given is not hparams
  assert (given.batch_size, given.use_tpu, given.learning_rate, hparams.batch_size) == (8, True, 0.1, 64)
  assert plan_lib.TpuPlan.tpu_params(types.SimpleNamespace(params={'a': 1}, per_shard_batch_size=8)) == {
      'a': 1, 'use_tpu': True, 'batch_size': 8}


@pytest.mark.skipif(not TF1, reason='HParams (tf.contrib.training) exists in TensorFlow 1.x only')
def test_an_input_fn_that_reads_an_hparams_gets_one_on_every_route_of_the_check():
  """TPUEstimator hands input_fn the program's HParams with its keys added (_add_item_to_params); the judge records
  each call and calls input_fn again from that record: each call must get an HParams again, not a dict (a dict has no
  .batch_size; dict(hparams) itself is a TypeError, which ended a real program's judgement)."""
  from tensorflow.contrib.training import HParams  # pylint: disable=g-import-not-at-top -- TF 1 only
  images = np.random.RandomState(0).rand(EXAMPLES, 784).astype(np.float32)
  labels = np.arange(EXAMPLES, dtype=np.int32) % 10
  kinds = set()

  def input_fn(params):
    kinds.add(type(params).__mro__[1] if type(params).__name__.startswith('ReadRecording') else type(params))
    dataset = tf.data.Dataset.from_tensor_slices(({model.IMAGE_KEY: images}, labels))
    return dataset.repeat().batch(params.batch_size, drop_remainder=True)

  def model_fn(features, labels, mode, params):
    assert isinstance(params, HParams) and params.learning_rate == 0.1
    return tiny_model_fn_builder()(features, labels, mode, params.values())

  checks = run_check(model_fn, input_fn, plan=tiny_plan(params=HParams(learning_rate=0.1)))
  assert failures(checks) == []
  assert checks['input_batch'].status == check_results.PASS
  assert kinds == {HParams}


def test_an_error_raised_in_a_dataset_function_is_told_by_its_last_line():
  """TensorFlow's autograph raises an error inside a Dataset.map function as 'in converted code:' (TF 2: 'in user
  code:') followed by a trace, the error itself last (held-out-22's DeepFM port: "TypeError: in converted code:" said nothing): the FAIL
  line quotes that last line; any other error, its first."""
  def parse(number):
    return number + 'a'  # a string added to an int64

  with tf.Graph().as_default():
    with pytest.raises(TypeError) as raised:
      tf.data.Dataset.range(3).map(parse)
  assert str(raised.value).strip().startswith(('in converted code', 'in user code'))  # TF 1.15, TF 2
  line = check_results.error_line(raised.value)
  assert line.startswith('TypeError: ') and 'AddV2' in line, line
  assert check_results.error_line(ValueError('first\nsecond')) == 'first'
  assert check_results.error_line(ValueError('')) == '(no message)'


def test_a_host_call_tensorflow_never_built_blames_tensorflow_s_graph_not_the_judged_step():
  """held-out-26's --write notes: the host_call line said 'model_fn did not build the training step (see
  xla_compile)' beside an xla_compile PASS (the step the judge builds itself); it names TensorFlow's own graph."""
  failed_graph = outfeed_checks.check_host_call(None, 8, 1, 'TPUEstimator could not build the training graph: X.')
  assert failed_graph.status == check_results.SKIP
  assert 'built no training graph around model_fn (TPUEstimator could not build the training graph: X)' in \
      failed_graph.message and 'xla_compile' not in failed_graph.message
  assert '(see train_input)' in outfeed_checks.check_host_call(None, 8, 1).message


def test_a_host_s_batch_the_cores_do_not_divide_is_not_told_as_a_split():
  """A premade estimator's input judged with a host's batch of 20 on 8 cores (held-out-27's marbleinc): there is no
  per-core size to name (it had said "for 10 cores of 2 each"); the batch_split line says what to change."""
  def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(np.zeros([64, 4], np.float32)).repeat()
    return dataset.batch(params['batch_size'], drop_remainder=True)

  results, _ = input_checks.check_input(input_fn, {'batch_size': 20}, per_core=20 // 8, cores=8)
  [batch] = [line for line in results if line.name == 'input_batch']
  assert batch.status == check_results.PASS
  assert batch.message == "batches of params['batch_size'] = 20 (for 8 cores, which it does not divide over (see " \
      "batch_split))."
  results, _ = input_checks.check_input(input_fn, {'batch_size': 32}, per_core=4, cores=8)
  assert "= 32 (for 8 cores of 4 each" in [line for line in results if line.name == 'input_batch'][0].message


def test_the_batch_split_of_evaluation_alone_names_evaluation_s_share_per_core():
  """batch_split for one mode's call says that mode's examples per core (it had named the training batch's in the
  evaluate and predict lines of `readiness --run`)."""
  plan = tiny_plan(num_shards=8, train_batch_size=64, eval_batch_size=32)
  line = config_checks.check_batch_split(plan, modes=('eval',))
  assert line.message == 'eval 32 split evenly over 8 cores (per core: eval 4).'


def test_an_input_that_batches_at_its_own_size_without_drop_remainder_is_told_by_the_batch_it_reads():
  """Its batch dimension is None, so the static check had nothing to compare and passed 'batches of
  params['batch_size'] = 64' (held-out-26's and -27's --write notes: inputs batching at 16, 8, 4096); the batch read
  says 16 rows. One that reads params passes; a short prediction batch is TPUEstimator's to pad."""
  data = np.zeros([64, 4], np.float32)

  def own_size(params):
    del params
    return tf.data.Dataset.from_tensor_slices(data).batch(16)

  def from_params(params):
    return tf.data.Dataset.from_tensor_slices(data).batch(params['batch_size'])

  results, _ = input_checks.check_input(own_size, {'batch_size': 64})
  [batch] = [line for line in results if line.name == 'input_batch']
  assert batch.status == check_results.FAIL
  assert batch.message == "the first batch read has 16 rows, but params['batch_size'] is 64: the input batches at a " \
      "size of its own."
  results, _ = input_checks.check_input(from_params, {'batch_size': 32})
  assert [line.status for line in results if line.name == 'input_batch'] == [check_results.PASS]
  results, _ = input_checks.check_input(own_size, {'batch_size': 64}, batch_may_vary=True)
  assert [line.status for line in results if line.name == 'input_batch'] == [check_results.PASS]
