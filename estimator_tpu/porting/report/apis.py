"""Which TensorFlow APIs the rules are about, by canonical dotted name (see program.normalize)."""

_ESTIMATOR_PACKAGES = ('tensorflow.estimator.', 'tensorflow.contrib.learn.', 'tensorflow.contrib.estimator.',
                       'tensorflow.python.estimator.', 'tensorflow.contrib.learn.python.learn.estimators.')
_PREMADE_SUFFIXES = ('Classifier', 'Regressor', 'Estimator')
FLAGS_NAMES = ('absl.flags.FLAGS', 'tensorflow.flags.FLAGS', 'tensorflow.app.flags.FLAGS', 'gflags.FLAGS')


def is_tf(name):
  return bool(name) and (name == 'tensorflow' or name.startswith('tensorflow.'))


def last(name):
  return name.rsplit('.', 1)[-1]


def is_tpu_estimator(name):
  return is_tf(name) and last(name) == 'TPUEstimator'


def is_plain_estimator(name):
  """tf.estimator.Estimator, premade estimators (DNNClassifier, ...) and tf.contrib.learn's estimators."""
  if not is_tf(name) or is_tpu_estimator(name) or '.tpu.' in name:
    return False
  return name.startswith(_ESTIMATOR_PACKAGES) and last(name).endswith(_PREMADE_SUFFIXES)


def is_any_estimator(name):
  return is_tpu_estimator(name) or is_plain_estimator(name)


def is_keras_to_estimator(name):
  return is_tf(name) and last(name) == 'model_to_estimator'


def is_estimator_spec(name):
  return is_tf(name) and last(name) == 'EstimatorSpec'


def is_tpu_estimator_spec(name):
  return is_tf(name) and last(name) == 'TPUEstimatorSpec'


def is_run_config(name):
  return is_tf(name) and last(name) == 'RunConfig'


def is_tpu_run_config(name):
  return is_run_config(name) and '.tpu.' in name


def is_tpu_config(name):
  return is_tf(name) and last(name) == 'TPUConfig'


def is_cross_shard_optimizer(name):
  return bool(name) and last(name) == 'CrossShardOptimizer'


def is_keras_optimizer(name):
  return is_tf(name) and ('.keras.optimizers.' in name or name.startswith('tensorflow.optimizers.'))


def is_tf1_optimizer(name):
  return is_tf(name) and (name.startswith('tensorflow.train.') or name.startswith('tensorflow.contrib.opt.')) \
      and last(name).endswith('Optimizer')


def is_summary(name):
  return is_tf(name) and (name.startswith('tensorflow.summary.') or name.startswith('tensorflow.contrib.summary.'))


def is_flags(name):
  return bool(name) and (name in FLAGS_NAMES or name.endswith('.flags.FLAGS'))


def is_train_and_evaluate(name):
  return is_tf(name) and name.endswith('estimator.train_and_evaluate')


def is_train_spec(name):
  return is_tf(name) and last(name) == 'TrainSpec'


def is_eval_spec(name):
  return is_tf(name) and last(name) == 'EvalSpec'


# Ops with no TPU kernel: they call back into Python on the host.
PYTHON_CALLBACK_OPS = frozenset([
    'tensorflow.py_func', 'tensorflow.numpy_function', 'tensorflow.py_function', 'tensorflow.contrib.eager.py_func',
])
# Ops whose output shape depends on the data, which XLA cannot compile for a TPU.
DYNAMIC_SHAPE_OPS = frozenset([
    'tensorflow.unique', 'tensorflow.unique_with_counts', 'tensorflow.boolean_mask', 'tensorflow.dynamic_partition',
    'tensorflow.setdiff1d', 'tensorflow.sets.difference', 'tensorflow.image.non_max_suppression',
])
WHERE_OPS = frozenset(['tensorflow.where', 'tensorflow.where_v2'])
# Strings have no TPU type: string ops, parsing and table lookups belong in input_fn, on the host.
_STRING_PREFIXES = ('tensorflow.strings.', 'tensorflow.lookup.', 'tensorflow.contrib.lookup.', 'tensorflow.io.decode_',
                    'tensorflow.image.decode_', 'tensorflow.io.parse_', 'tensorflow.string_')
_STRING_OPS = frozenset([
    'tensorflow.as_string', 'tensorflow.substr', 'tensorflow.regex_replace', 'tensorflow.decode_raw',
    'tensorflow.decode_csv', 'tensorflow.decode_base64', 'tensorflow.parse_example', 'tensorflow.parse_single_example',
    'tensorflow.reduce_join', 'tensorflow.feature_column.categorical_column_with_vocabulary_list',
    'tensorflow.feature_column.categorical_column_with_vocabulary_file',
    'tensorflow.feature_column.categorical_column_with_hash_bucket',
])


def is_string_op(name):
  return is_tf(name) and (name in _STRING_OPS or name.startswith(_STRING_PREFIXES))


FLOAT64_NAMES = frozenset(['tensorflow.float64', 'tensorflow.double'])
UINT8_NAMES = frozenset(['tensorflow.uint8', 'numpy.uint8'])
HOST_FLOAT64_NAMES = frozenset(['tensorflow.float64', 'tensorflow.double', 'numpy.float64', 'numpy.double'])
# Host-side conversions that take a tensor off uint8/float64 before it leaves input_fn.
CASTS = frozenset([
    'tensorflow.cast', 'tensorflow.to_float', 'tensorflow.to_int32', 'tensorflow.image.convert_image_dtype',
    'tensorflow.dtypes.cast', 'tensorflow.saturate_cast', 'tensorflow.bitcast',
])
UINT8_PRODUCERS = frozenset([
    'tensorflow.image.decode_jpeg', 'tensorflow.image.decode_png', 'tensorflow.image.decode_image',
    'tensorflow.image.decode_bmp', 'tensorflow.image.decode_gif', 'tensorflow.io.decode_jpeg',
    'tensorflow.io.decode_png', 'tensorflow.io.decode_image',
])
# Queue-based input (TF 1's tf.train.batch family): TPUEstimator's PER_HOST_V2 input and predict need a Dataset.
QUEUE_BATCHING = frozenset([
    'tensorflow.train.batch', 'tensorflow.train.shuffle_batch', 'tensorflow.train.batch_join',
    'tensorflow.train.shuffle_batch_join', 'tensorflow.train.maybe_batch',
])
# (batch size position, drop_remainder position) of the batching functions (positions None: keyword only).
BATCH_FUNCTIONS = {
    'tensorflow.contrib.data.batch_and_drop_remainder': (0, None),
    'tensorflow.contrib.data.padded_batch_and_drop_remainder': (0, None),
    'tensorflow.contrib.data.map_and_batch': (1, 3),
    'tensorflow.data.experimental.map_and_batch': (1, 3),
}
DROPS_REMAINDER = frozenset(['tensorflow.contrib.data.batch_and_drop_remainder',
                             'tensorflow.contrib.data.padded_batch_and_drop_remainder'])
DATA_SOURCES = frozenset([
    'tensorflow.data.TFRecordDataset', 'tensorflow.data.TextLineDataset', 'tensorflow.data.FixedLengthRecordDataset',
    'tensorflow.data.Dataset.list_files', 'tensorflow.io.gfile.glob', 'tensorflow.gfile.Glob',
    'tensorflow.io.matching_files', 'tensorflow.matching_files', 'tensorflow.contrib.data.TFRecordDataset',
])
IN_MEMORY_SOURCES = frozenset(['tensorflow.data.Dataset.from_tensor_slices', 'tensorflow.data.Dataset.from_tensors'])

# tf.contrib modules and where each went (longest prefix wins), for version-contrib.
CONTRIB_REPLACEMENTS = [
    ('tensorflow.contrib.tpu.CrossShardOptimizer', 'tf.tpu.CrossShardOptimizer (tf.compat.v1.tpu.CrossShardOptimizer '
     'in TF 2)'),
    ('tensorflow.contrib.tpu.TPUDistributionStrategy', 'tf.distribute.TPUStrategy'),
    ('tensorflow.contrib.tpu.TPUEstimator', 'tf.estimator.tpu.TPUEstimator (tf.compat.v1.estimator.tpu in TF 2)'),
    ('tensorflow.contrib.tpu.TPUEstimatorSpec', 'tf.estimator.tpu.TPUEstimatorSpec (tf.compat.v1.estimator.tpu in '
     'TF 2)'),
    ('tensorflow.contrib.tpu.RunConfig', 'tf.estimator.tpu.RunConfig (tf.compat.v1.estimator.tpu in TF 2)'),
    ('tensorflow.contrib.tpu.TPUConfig', 'tf.estimator.tpu.TPUConfig (tf.compat.v1.estimator.tpu in TF 2)'),
    ('tensorflow.contrib.tpu.InputPipelineConfig', 'tf.estimator.tpu.InputPipelineConfig'),
    ('tensorflow.contrib.tpu', 'tf.tpu (tf.compat.v1.tpu in TF 2); the estimator pieces are in tf.estimator.tpu'),
    ('tensorflow.contrib.cluster_resolver', 'tf.distribute.cluster_resolver'),
    ('tensorflow.contrib.data.batch_and_drop_remainder', 'Dataset.batch(batch_size, drop_remainder=True)'),
    ('tensorflow.contrib.data.padded_batch_and_drop_remainder',
     'Dataset.padded_batch(batch_size, shapes, drop_remainder=True)'),
    ('tensorflow.contrib.data.map_and_batch', 'tf.data.experimental.map_and_batch, or Dataset.map then '
     'Dataset.batch(..., drop_remainder=True)'),
    ('tensorflow.contrib.data.parallel_interleave', 'Dataset.interleave(..., num_parallel_calls=...)'),
    ('tensorflow.contrib.data', 'tf.data.experimental'),
    ('tensorflow.contrib.summary', 'tf.compat.v2.summary (tf.summary in TF 2), written from host_call'),
    ('tensorflow.contrib.learn', 'tf.estimator'),
    ('tensorflow.contrib.estimator', 'tf.estimator (and tf.estimator.experimental)'),
    ('tensorflow.contrib.distribute', 'tf.distribute'),
    ('tensorflow.contrib.metrics', 'tf.metrics (tf.compat.v1.metrics in TF 2)'),
    ('tensorflow.contrib.layers', 'tf.compat.v1.layers, tf.keras.layers or tf.compat.v1 initializers'),
    ('tensorflow.contrib.slim', 'the tf_slim package'),
    ('tensorflow.contrib.framework', 'tf.compat.v1.train / tf.compat.v1 (e.g. tf.train.init_from_checkpoint)'),
    ('tensorflow.contrib.training.HParams', 'a dict passed in params (no TF 2 replacement)'),
    ('tensorflow.contrib.rnn', 'tf.compat.v1.nn.rnn_cell or tf.keras.layers'),
    ('tensorflow.contrib.lookup', 'tf.lookup'),
    ('tensorflow.contrib.opt', 'TensorFlow Addons (tfa.optimizers), or a tf.compat.v1.train optimizer'),
    ('tensorflow.contrib.seq2seq', 'TensorFlow Addons (tfa.seq2seq)'),
    ('tensorflow.contrib', 'its TF 2 home (see tf_upgrade_v2\'s report); tf.contrib does not exist in TF 2'),
]


def contrib_replacement(name):
  for prefix, replacement in CONTRIB_REPLACEMENTS:
    if name == prefix or name.startswith(prefix + '.'):
      return replacement
  return None
