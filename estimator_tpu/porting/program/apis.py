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


# Canned estimators named outside that scheme (each an Estimator subclass: a fact test asks TensorFlow), and contrib
# packages of canned estimators that are named in it (KernelLinearClassifier, TensorForestEstimator, ARRegressor).
CANNED_ESTIMATORS = frozenset([
    'tensorflow.contrib.learn.SVM', 'tensorflow.contrib.learn.python.learn.estimators.svm.SVM',
    'tensorflow.contrib.learn.KMeansClustering',
    'tensorflow.contrib.learn.python.learn.estimators.kmeans.KMeansClustering',
    'tensorflow.contrib.factorization.KMeansClustering',
    'tensorflow.contrib.factorization.python.ops.kmeans.KMeansClustering',
    'tensorflow.contrib.factorization.GMM', 'tensorflow.contrib.factorization.python.ops.gmm.GMM',
    'tensorflow.contrib.factorization.WALSMatrixFactorization',
    'tensorflow.contrib.factorization.python.ops.wals.WALSMatrixFactorization',
    'tensorflow.estimator.experimental.KMeans',
])
_CANNED_PACKAGES = ('tensorflow.contrib.kernel_methods.', 'tensorflow.contrib.tensor_forest.',
                    'tensorflow.contrib.timeseries.', 'tensorflow.contrib.boosted_trees.')


def is_plain_estimator(name):
  """tf.estimator.Estimator, premade estimators (DNNClassifier, ...), tf.contrib.learn's estimators and the other
  canned ones."""
  if not is_tf(name) or is_tpu_estimator(name) or '.tpu.' in name:
    return False
  return name in CANNED_ESTIMATORS or (
      name.startswith(_ESTIMATOR_PACKAGES + _CANNED_PACKAGES) and last(name).endswith(_PREMADE_SUFFIXES))


def is_core_estimator(name):
  """tf.estimator.Estimator itself (not a premade one, not tf.contrib.learn's): what the port makes a TPUEstimator."""
  return is_plain_estimator(name) and last(name) == 'Estimator' and \
      name.startswith(('tensorflow.estimator.', 'tensorflow.python.estimator.'))


def is_keras_to_estimator(name):
  return is_tf(name) and last(name) == 'model_to_estimator'


def is_estimator_spec(name):
  """EstimatorSpec, and tf.contrib.learn's ModelFnOps, which a contrib.learn model_fn returns in its place."""
  return is_tf(name) and last(name) in ('EstimatorSpec', 'ModelFnOps')


def is_tpu_estimator_spec(name):
  return is_tf(name) and last(name) == 'TPUEstimatorSpec'


def is_run_config(name):
  return is_tf(name) and last(name) == 'RunConfig'


# tf.estimator.RunConfig's parameters in order (TF 1.15; TF 2.15 adds checkpoint_save_graph_def): the port names
# each positional argument, since tf.estimator.tpu.RunConfig's own first parameters are tpu_config, evaluation_master,
# master and cluster.
RUN_CONFIG_POSITIONAL = ('model_dir', 'tf_random_seed', 'save_summary_steps', 'save_checkpoints_steps',
                         'save_checkpoints_secs', 'session_config', 'keep_checkpoint_max',
                         'keep_checkpoint_every_n_hours', 'log_step_count_steps', 'train_distribute', 'device_fn',
                         'protocol', 'eval_distribute', 'experimental_distribute',
                         'experimental_max_worker_delay_secs', 'session_creation_timeout_secs')

# RunConfig's keywords that hand the estimator a distribution strategy.
STRATEGY_KEYWORDS = ('train_distribute', 'eval_distribute', 'experimental_distribute')


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


def is_optimizer_maker(name):
  """The canned estimators' get_optimizer_instance('Adagrad', learning_rate): a tf.compat.v1.train optimizer made
  from a name (or handed through as it is given)."""
  return is_tf(name) and name.endswith('.canned.optimizers.get_optimizer_instance')


# Learning-rate schedules: a batch size that reaches one sets how fast or when the rate decays.
LEARNING_RATE_SCHEDULES = frozenset([
    'exponential_decay', 'piecewise_constant', 'piecewise_constant_decay', 'polynomial_decay', 'natural_exp_decay',
    'inverse_time_decay', 'cosine_decay', 'cosine_decay_restarts', 'linear_cosine_decay', 'noisy_linear_cosine_decay',
    'ExponentialDecay', 'PiecewiseConstantDecay', 'PolynomialDecay', 'InverseTimeDecay', 'CosineDecay',
    'CosineDecayRestarts'])


def sets_learning_rate(name):
  """A TensorFlow learning-rate schedule, or an optimizer (its learning_rate)."""
  return is_tf(name) and (last(name) in LEARNING_RATE_SCHEDULES or is_tf1_optimizer(name) or
                          is_keras_optimizer(name))


# Integer tensors: what they make (tf.shape(x)[0], tf.size(x), ...) and what keeps them integers. Divided with true
# division (`/` in Python 3, tf.divide, tf.truediv) two integer tensors give float64 (math_ops._truediv_python3).
INT_SHAPES = frozenset(['shape', 'size', 'rank'])
INT_FROM_DATA = frozenset(['argmax', 'argmin', 'count_nonzero'])
INT_KEEPING = frozenset(['add', 'subtract', 'multiply', 'maximum', 'minimum', 'reduce_sum', 'reduce_max', 'reduce_min',
                         'reduce_prod', 'abs', 'floordiv', 'floor_div', 'mod', 'square', 'add_n', 'identity',
                         'stop_gradient'])
TRUE_DIVISIONS = frozenset(['divide', 'truediv'])


# Gather summary ops already made (each its own finding): not a summary of their own.
SUMMARY_MERGES = frozenset(['tensorflow.summary.merge_all', 'tensorflow.summary.merge'])


# TensorFlow 0.12's summary ops (tf.scalar_summary, ...), renamed tf.summary.* in 1.0: programs of that time use them.
OLD_SUMMARIES = frozenset(['tensorflow.scalar_summary', 'tensorflow.histogram_summary', 'tensorflow.image_summary',
                           'tensorflow.audio_summary'])


# Python-side classes of tf.summary that add no op to the graph (an event file writer, the protos).
SUMMARY_WRITERS = frozenset(['tensorflow.summary.FileWriter', 'tensorflow.summary.FileWriterCache',
                             'tensorflow.summary.Summary', 'tensorflow.summary.Event',
                             'tensorflow.summary.SummaryDescription', 'tensorflow.summary.TaggedRunMetadata',
                             'tensorflow.summary.get_summary_description'])


# The TF 2 summary API's (and tf.contrib.summary's, the same code in TF 1.15) writers and recording conditions: a
# writer is made on the host under init_scope, the conditions are Python contexts, the collection holds the writes
# made elsewhere: none is a summary write inside the TPU computation (test_report_facts.py).
SUMMARY_CONTEXTS = frozenset(
    ['tensorflow.summary.' + name for name in ('create_file_writer', 'create_noop_writer', 'record_if',
                                                'all_v2_summary_ops', 'should_record_summaries',
                                                'experimental.set_step', 'experimental.get_step')] +
    ['tensorflow.contrib.summary.' + name for name in (
        'create_file_writer', 'record_summaries_every_n_global_steps', 'always_record_summaries',
        'never_record_summaries', 'should_record_summaries', 'all_summary_ops', 'summary_writer_initializer_op',
        'initialize')])


def is_summary(name):
  return (is_tf(name) and (name.startswith('tensorflow.summary.') or name.startswith('tensorflow.contrib.summary.') or
                           name in OLD_SUMMARIES) and name not in SUMMARY_MERGES and name not in SUMMARY_WRITERS and
          name not in SUMMARY_CONTEXTS) or is_tensorboard_summary(name)


def is_tensorboard_summary(name):
  """TensorBoard's own summary ops for TF 1 graphs (`from tensorboard import summary; summary.pr_curve(...)`, a
  plugin's `summary.op`): each builds a tf.summary tensor op in the graph. Its `*_pb` functions make protos, no op."""
  if not name or not name.startswith('tensorboard.'):
    return False
  parts = name.split('.')
  if name.startswith('tensorboard.summary.'):
    return len(parts) in (3, 4) and parts[-1] in TENSORBOARD_SUMMARY_OPS and parts[2] in ('v1',) + (parts[-1],)
  return name.startswith('tensorboard.plugins.') and parts[-2] == 'summary' and parts[-1] in (
      'op', 'streaming_op', 'raw_data_op')


TENSORBOARD_SUMMARY_OPS = frozenset(['audio', 'custom_scalar', 'histogram', 'image', 'pr_curve', 'pr_curve_raw_data_op',
                                     'pr_curve_streaming_op', 'scalar', 'text'])


def is_flags(name):
  return bool(name) and (name in FLAGS_NAMES or name.endswith('.flags.FLAGS'))


# Functions that wrap an estimator in a new plain tf.estimator.Estimator around its model_fn (extenders.py).
ESTIMATOR_WRAPPERS = frozenset(['tensorflow.estimator.add_metrics', 'tensorflow.contrib.estimator.add_metrics',
                                'tensorflow.contrib.estimator.forward_features'])
# contrib.learn's scikit-learn face: fit/evaluate/predict(x, y) on the estimator it holds, no estimator of its own.
ESTIMATOR_ADAPTERS = frozenset(['tensorflow.contrib.learn.SKCompat'])


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
# tf.Variable (tf.compat.v1.Variable): inside TPUEstimator's on-device loop its initial value cannot be a tensor.
VARIABLE_CLASSES = frozenset(['tensorflow.Variable'])
# tf.get_variable: its initializer= may be an initializer object (called outside the loop) or a value; a tensor made
# inside the loop fails as tf.Variable's does (tests/porting/report/test_report_facts.py).
VARIABLE_GETTERS = frozenset(['tensorflow.get_variable'])


def is_initializer(name):
  """An initializer class or maker (tf.zeros_initializer, tf.keras.initializers.he_normal, xavier_initializer)."""
  return is_tf(name) and ('.initializers.' in name or last(name).endswith(('_initializer', 'Initializer')))


# Ops whose output shape depends on the data, which XLA cannot compile for a TPU.
DYNAMIC_SHAPE_OPS = frozenset([
    'tensorflow.unique', 'tensorflow.unique_with_counts', 'tensorflow.boolean_mask', 'tensorflow.dynamic_partition',
    'tensorflow.setdiff1d', 'tensorflow.sets.difference', 'tensorflow.image.non_max_suppression',
    # a count per value up to the largest one seen (TF 1.15's Bincount has no XLA kernel at all)
    'tensorflow.bincount', 'tensorflow.math.bincount',
])
WHERE_OPS = frozenset(['tensorflow.where', 'tensorflow.where_v2'])
# A while loop whose body concatenates onto a loop variable grows it each iteration: XLA refuses a loop whose body
# gives back other shapes than it was given (test_report_facts.py).
WHILE_LOOPS = frozenset(['tensorflow.while_loop', 'tensorflow.compat.v1.while_loop'])
CONCATS = frozenset(['tensorflow.concat', 'tensorflow.compat.v1.concat'])
# contrib.seq2seq's scheduled-sampling helpers pick the sampled rows with a one-argument where and gather_nd /
# scatter_nd (helper.py): a shape that depends on the data, which XLA refuses (test_report_facts.py).
SAMPLING_HELPERS = frozenset(['tensorflow.contrib.seq2seq.ScheduledEmbeddingTrainingHelper',
                              'tensorflow.contrib.seq2seq.ScheduledOutputTrainingHelper'])
# Strings have no TPU type: string ops, parsing and table lookups belong in input_fn, on the host.
_STRING_PREFIXES = ('tensorflow.strings.', 'tensorflow.lookup.', 'tensorflow.contrib.lookup.', 'tensorflow.io.decode_',
                    'tensorflow.image.decode_', 'tensorflow.io.parse_', 'tensorflow.string_',
                    # the same ops imported from where TensorFlow defines them
                    'tensorflow.python.ops.lookup_ops.', 'tensorflow.python.ops.string_ops.')
_STRING_OPS = frozenset([
    'tensorflow.as_string', 'tensorflow.substr', 'tensorflow.regex_replace', 'tensorflow.decode_raw',
    'tensorflow.decode_csv', 'tensorflow.decode_base64', 'tensorflow.parse_example', 'tensorflow.parse_single_example',
    'tensorflow.reduce_join',
])
# (A feature column's constructor adds no op: its lookups are built where a column applier, input_layer and the
# like, applies it; model_fn_checks reports them there.)


# Initializers of the lookup tables: the table they feed is the string op to report, once.
_TABLE_INITIALIZERS = ('KeyValueTensorInitializer', 'TextFileInitializer', 'TextFileIndex')


def is_string_op(name):
  return is_tf(name) and (name in _STRING_OPS or name.startswith(_STRING_PREFIXES)) and \
      last(name) not in _TABLE_INITIALIZERS


FLOAT64_NAMES = frozenset(['tensorflow.float64', 'tensorflow.double'])
UINT8_NAMES = frozenset(['tensorflow.uint8', 'numpy.uint8'])
HOST_FLOAT64_NAMES = frozenset(['tensorflow.float64', 'tensorflow.double', 'numpy.float64', 'numpy.double'])
# Host-side conversions that take a tensor off uint8/float64 before it leaves input_fn.
CASTS = frozenset([
    'tensorflow.cast', 'tensorflow.to_float', 'tensorflow.to_int32', 'tensorflow.image.convert_image_dtype',
    'tensorflow.dtypes.cast', 'tensorflow.saturate_cast', 'tensorflow.bitcast',
])
# Image resizes that return float32 whatever the images' dtype, except by nearest neighbour (test_report_facts.py).
FLOAT_RESIZES = frozenset([
    'tensorflow.image.resize_images', 'tensorflow.image.resize', 'tensorflow.image.resize_bilinear',
    'tensorflow.image.resize_bicubic', 'tensorflow.image.resize_area',
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
# contrib.learn's readers that batch through a queue: (batch size position, num_epochs position). With num_epochs
# set they batch with allow_smaller_final_batch=True (graph_io.py _read_keyed_batch_examples_helper).
CONTRIB_READERS = {
    'tensorflow.contrib.learn.read_batch_examples': (1, 4),
    'tensorflow.contrib.learn.read_keyed_batch_examples': (1, 4),
    'tensorflow.contrib.learn.read_batch_features': (1, 5),
    'tensorflow.contrib.learn.read_keyed_batch_features': (1, 5),
    'tensorflow.contrib.learn.read_batch_record_features': (1, 4),
    'tensorflow.contrib.learn.io.read_batch_examples': (1, 4),
    'tensorflow.contrib.learn.io.read_keyed_batch_examples': (1, 4),
    'tensorflow.contrib.learn.io.read_batch_features': (1, 5),
    'tensorflow.contrib.learn.io.read_keyed_batch_features': (1, 5),
    'tensorflow.contrib.learn.io.read_batch_record_features': (1, 4),
}
# (batch size position, drop_remainder position) of the batching functions (positions None: keyword only).
BATCH_FUNCTIONS = {
    'tensorflow.contrib.data.batch_and_drop_remainder': (0, None),
    'tensorflow.contrib.data.padded_batch_and_drop_remainder': (0, None),
    'tensorflow.contrib.data.map_and_batch': (1, 3),
    'tensorflow.data.experimental.map_and_batch': (1, 3),
}
# Batch each length bucket apart (group_by_window): the batch dimension is None whatever the bucket sizes, and each
# bucket's batch is padded to its own longest element unless padded_shapes gives numbers.
BUCKETING = frozenset(['tensorflow.data.experimental.bucket_by_sequence_length',
                       'tensorflow.contrib.data.bucket_by_sequence_length'])
# Datasets read from files and batched in one call, static batches unless drop_final_batch is False and num_epochs
# is set: (batch size, drop_final_batch, num_epochs positions), the same in TF 1.15 and 2.x (a fact test checks).
FEATURE_DATASETS = {'tensorflow.data.experimental.make_batched_features_dataset': (1, 14, 6),
                    'tensorflow.contrib.data.make_batched_features_dataset': (1, 14, 6)}
DROPS_REMAINDER = frozenset(['tensorflow.contrib.data.batch_and_drop_remainder',
                             'tensorflow.contrib.data.padded_batch_and_drop_remainder'])
DATA_SOURCES = frozenset([
    'tensorflow.data.TFRecordDataset', 'tensorflow.data.TextLineDataset', 'tensorflow.data.FixedLengthRecordDataset',
    'tensorflow.data.Dataset.list_files', 'tensorflow.io.gfile.glob', 'tensorflow.gfile.Glob',
    'tensorflow.io.matching_files', 'tensorflow.matching_files', 'tensorflow.contrib.data.TFRecordDataset',
])
# (tf.contrib.data.Dataset: TF 1.2-1.3's name for tf.data.Dataset, gone by TF 1.15 (rule 19); its data keeps its
# dtypes when the user renames it.)
IN_MEMORY_SOURCES = frozenset(['tensorflow.data.Dataset.from_tensor_slices', 'tensorflow.data.Dataset.from_tensors',
                               'tensorflow.contrib.data.Dataset.from_tensor_slices',
                               'tensorflow.contrib.data.Dataset.from_tensors'])
# scikit-learn's toy datasets: .data and .images are float64 (load_digits, load_iris, ...).
def is_sklearn_loader(name):
  return bool(name) and name.startswith('sklearn.datasets.load_')


# contrib.learn's own toy datasets (datasets/base.py reads their CSVs with features_dtype=np.float): .data is
# float64, and so is load_boston's .target (iris' is int64); load_dataset('iris') / ('boston') call them.
CONTRIB_TOY_LOADERS = frozenset(
    prefix + name for prefix in ('tensorflow.contrib.learn.datasets.', 'tensorflow.contrib.learn.datasets.base.',
                                 'tensorflow.contrib.learn.python.learn.datasets.',
                                 'tensorflow.contrib.learn.python.learn.datasets.base.')
    for name in ('load_iris', 'load_boston', 'load_dataset'))


# contrib.learn's CSV loaders (datasets/base.py): a Dataset(data, target) whose .data has the features_dtype and
# .target the target_dtype the call names, (filename, target_dtype, features_dtype): attribute -> (position, keyword).
CSV_DATASET_LOADERS = frozenset(['tensorflow.contrib.learn.datasets.base.load_csv_with_header',
                                 'tensorflow.contrib.learn.datasets.base.load_csv_without_header',
                                 'tensorflow.contrib.learn.datasets.load_csv_with_header',
                                 'tensorflow.contrib.learn.datasets.load_csv_without_header',
                                 'tensorflow.contrib.learn.python.learn.datasets.base.load_csv_with_header',
                                 'tensorflow.contrib.learn.python.learn.datasets.base.load_csv_without_header'])
CSV_DATASET_DTYPES = {'data': (2, 'features_dtype'), 'target': (1, 'target_dtype')}


# scikit-learn's scalers (StandardScaler, MinMaxScaler, ...): transform and fit_transform return float64 arrays
# (FLOAT_DTYPES, float64 first, for integer input too) unless the input is float32.
def is_sklearn_scaler(name):
  return bool(name) and name.startswith('sklearn.preprocessing.') and name.rpartition('.')[2] in (
      'StandardScaler', 'MinMaxScaler', 'MaxAbsScaler', 'RobustScaler', 'Normalizer')


# Functions that split arrays into parts of the same dtypes.
SPLITTERS = frozenset(['sklearn.model_selection.train_test_split', 'sklearn.cross_validation.train_test_split'])
# Tensors made from in-memory data, keeping its dtype unless dtype= is given.
TENSOR_MAKERS = frozenset(['tensorflow.constant', 'tensorflow.convert_to_tensor'])
# TensorFlow functions that return a model_fn calling the one they are given (replicate_model_fn: once per GPU tower).
MODEL_FN_WRAPPERS = frozenset(['tensorflow.contrib.estimator.replicate_model_fn'])

# TensorFlow's makers of an input_fn() without params that feeds queues: (x, y or target_key, batch_size,
# num_epochs, ...) in that order, and dequeue_up_to when num_epochs is set (numpy_io.py, pandas_io.py, contrib.learn's
# generator_io.py).
QUEUE_INPUT_FN_MAKERS = ('numpy_input_fn', 'pandas_input_fn', 'generator_input_fn')

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
    ('tensorflow.contrib.distribute', 'tf.distribute; a TPUEstimator port needs no strategy at all (TPUEstimator '
     'replicates over the TPU cores itself)'),
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


# Functions that build (and train) an estimator and return it.
ESTIMATOR_FACTORIES = frozenset([
    'tensorflow.contrib.estimator.boosted_trees_classifier_train_in_memory',
    'tensorflow.contrib.estimator.boosted_trees_regressor_train_in_memory',
])


def is_estimator_factory(name):
  return name in ESTIMATOR_FACTORIES


def is_experiment(name):
  # tf.contrib.learn.Experiment, or imported from its module (contrib.learn.python.learn.experiment.Experiment)
  return is_tf(name) and name.endswith(('learn.Experiment', 'learn.experiment.Experiment'))


def is_metric_spec(name):
  return is_tf(name) and name.endswith(('learn.MetricSpec', 'learn.metric_spec.MetricSpec'))


def is_hparams(name):
  return bool(name) and last(name) == 'HParams'


def is_optimize_loss(name):
  return is_tf(name) and last(name) == 'optimize_loss'


def is_create_train_op(name):
  return is_tf(name) and last(name) == 'create_train_op'


# Session hooks that fetch tensors of the graph they run in (run_values, summaries, NaN checks): on a TPU the tensors
# model_fn makes live inside the TPU computation, where nothing can be fetched (tpu.py marks them unfetchable).
TENSOR_HOOKS = frozenset(['LoggingTensorHook', 'NanTensorHook', 'SummarySaverHook', 'FinalOpsHook'])
# Hooks that work on the host only (steps, checkpoints, time, eval results on disk).
HOST_HOOKS = frozenset(['StopAtStepHook', 'CheckpointSaverHook', 'StepCounterHook', 'ProfilerHook', 'FeedFnHook',
                        'GlobalStepWaiterHook', 'ExamplesPerSecondHook'])
HOST_HOOK_PREFIXES = ('stop_if_', 'make_early_stopping_hook', 'InMemoryEvaluatorHook', 'CheckpointSaverListener')
# Monitors that evaluate the estimator from inside training (contrib.learn's, every n steps).
EVALUATING_HOOKS = frozenset(['ValidationMonitor'])


def hook_kind(name):
  """'fetches', 'host', 'evaluates' or None for a TensorFlow hook class or maker, by its last name."""
  if not is_tf(name):
    return None
  short = last(name)
  if short in TENSOR_HOOKS:
    return 'fetches'
  if short in EVALUATING_HOOKS:
    return 'evaluates'
  if short in HOST_HOOKS or short.startswith(HOST_HOOK_PREFIXES):
    return 'host'
  return None


# RNN cells and layers whose ops have no XLA kernel (BlockLSTM, LSTMBlockCell, GRUBlockCell, CudnnRNN): XLA, and so
# the TPU, cannot compile them (tests/porting/report/test_report_facts.py compiles them with XLA on the CPU).
NO_XLA_KERNEL = frozenset([
    'tensorflow.contrib.rnn.LSTMBlockFusedCell', 'tensorflow.contrib.rnn.LSTMBlockCell',
    'tensorflow.contrib.rnn.LSTMBlockWrapper', 'tensorflow.contrib.rnn.GRUBlockCell',
    'tensorflow.contrib.rnn.GRUBlockCellV2', 'tensorflow.contrib.cudnn_rnn.CudnnLSTM',
    'tensorflow.contrib.cudnn_rnn.CudnnGRU', 'tensorflow.contrib.cudnn_rnn.CudnnRNNTanh',
    'tensorflow.contrib.cudnn_rnn.CudnnRNNRelu', 'tensorflow.keras.layers.CuDNNLSTM',
    'tensorflow.keras.layers.CuDNNGRU', 'tensorflow.raw_ops.BlockLSTM', 'tensorflow.raw_ops.LSTMBlockCell',
    'tensorflow.raw_ops.GRUBlockCell', 'tensorflow.raw_ops.CudnnRNN',
    # contrib.seq2seq's beam search: its finalize runs GatherTree, which has no XLA kernel (the greedy decoders compile)
    'tensorflow.contrib.seq2seq.BeamSearchDecoder', 'tensorflow.contrib.seq2seq.gather_tree',
    # sampled losses: their default sampler, LogUniformCandidateSampler, has no XLA kernel
    'tensorflow.nn.nce_loss', 'tensorflow.nn.sampled_softmax_loss',
    # TF 1's CTC loss of SparseTensor labels: the CTCLoss op
    'tensorflow.nn.ctc_loss',
    # CTC decoding: the CTCBeamSearchDecoder and CTCGreedyDecoder ops
    'tensorflow.nn.ctc_beam_search_decoder', 'tensorflow.nn.ctc_greedy_decoder',
    # contrib.image's projective warp: the ImageProjectiveTransform(V2) op
    'tensorflow.contrib.image.transform',
    # printing from the graph: the Print and PrintV2 (with StringFormat) ops
    'tensorflow.Print', 'tensorflow.print', 'tensorflow.compat.v1.Print', 'tensorflow.compat.v1.print',
])
# What compiles instead, where it is not an RNN cell of its own kind.
_GREEDY_DECODING = ('decode greedily on the TPU (GreedyEmbeddingHelper with a BasicDecoder and a constant '
                    'maximum_iterations), or predict with the beam search on the CPU')
_FULL_SOFTMAX = ('a full softmax over the classes on the TPU (tf.nn.sparse_softmax_cross_entropy_with_logits), or '
                 'candidates sampled on the host (in input_fn) and handed in as sampled_values')
_WARP = ('the warp written with ops XLA compiles (a bilinear tf.gather_nd of the transformed pixel coordinates), or '
         'the images warped in input_fn on the host')
_CTC = ('a CTC loss written with ops XLA compiles (dense, padded labels), or the CTC model trained on CPUs or GPUs; '
        'TensorFlow\'s CTCLoss op has no XLA kernel')
_CTC_DECODE = ('decoding on the host: the TPU computes the logits, and the decoder runs on them in eval_metrics\' '
               'metric_fn (on the host) or after predict returns them')
_PRINT = ('print on the host (in input_fn, or in the host_call or eval metric_fn that receives the tensors), or only '
          'where the model runs on the CPU')
NO_XLA_KERNEL_FIX = {'tensorflow.nn.ctc_loss': _CTC, 'tensorflow.nn.ctc_beam_search_decoder': _CTC_DECODE,
                     'tensorflow.nn.ctc_greedy_decoder': _CTC_DECODE,
                     'tensorflow.Print': _PRINT, 'tensorflow.print': _PRINT, 'tensorflow.compat.v1.Print': _PRINT,
                     'tensorflow.compat.v1.print': _PRINT,
                     'tensorflow.contrib.seq2seq.BeamSearchDecoder': _GREEDY_DECODING,
                     'tensorflow.contrib.seq2seq.gather_tree': _GREEDY_DECODING,
                     'tensorflow.nn.nce_loss': _FULL_SOFTMAX, 'tensorflow.nn.sampled_softmax_loss': _FULL_SOFTMAX,
                     'tensorflow.contrib.image.transform': _WARP}


def no_xla_kernel(name, call=None):
  """Whether a call builds an op XLA has no kernel for; TF 2's tf.nn.ctc_loss, given label_length or logit_length,
  is the dense-label CTC, not the CTCLoss op."""
  if name == 'tensorflow.nn.ctc_loss' and call is not None and \
      any(keyword.arg in ('label_length', 'logit_length') for keyword in call.keywords):
    return False
  return name in NO_XLA_KERNEL


# Feature columns: which look strings up or hash them (tables and string ops XLA cannot compile), which wrap
# another column, and the functions that apply columns to features inside a model.
STRING_COLUMNS = frozenset([
    'categorical_column_with_vocabulary_list', 'categorical_column_with_vocabulary_file',
    'categorical_column_with_hash_bucket', 'crossed_column', 'sparse_column_with_keys',
    'sparse_column_with_hash_bucket', 'crossed_column',
])
WRAPPING_COLUMNS = frozenset(['indicator_column', 'embedding_column', 'weighted_categorical_column',
                              'shared_embedding_columns', 'shared_embedding_column', 'sequence_categorical_column',
                              # contrib.layers' own wrappers
                              'one_hot_column', 'weighted_sparse_column'])
COLUMN_APPLIERS = frozenset(['input_layer', 'linear_model', 'DenseFeatures', 'LinearModel',
                             'input_from_feature_columns', 'weighted_sum_from_feature_columns'])


# TF Hub's text column: its module splits the raw text and looks the words up in a string table, inside the model.
HUB_TEXT_COLUMNS = frozenset(['tensorflow_hub.text_embedding_column', 'tensorflow_hub.text_embedding_column_v2'])


def is_string_column(name):
  return name in HUB_TEXT_COLUMNS or (
      is_tf(name) and ('feature_column' in name or '.layers.' in name) and last(name) in STRING_COLUMNS)


# Categorical columns over integer ids: inside the model they turn a dense input into a SparseTensor with a
# one-argument tf.where (feature_column's _to_sparse_input_and_drop_ignore_values), a shape XLA cannot compile.
ID_COLUMNS = frozenset(['categorical_column_with_identity', 'sequence_categorical_column_with_identity',
                        'sparse_column_with_integerized_feature'])


def is_id_column(name):
  return is_tf(name) and ('feature_column' in name or '.layers.' in name) and last(name) in ID_COLUMNS


def is_wrapping_column(name):
  return is_tf(name) and last(name) in WRAPPING_COLUMNS


def is_column_applier(name):
  return is_tf(name) and last(name) in COLUMN_APPLIERS


# Premade estimator arguments that hold feature columns.
COLUMN_ARGUMENTS = ('feature_columns', 'linear_feature_columns', 'dnn_feature_columns')
# Where premade estimators take those arguments by position (by class name without Classifier/Regressor/
# Estimator; TF 1.15 and 2.15 alike, a fact test checks).
PREMADE_COLUMN_POSITIONS = {'Linear': {'feature_columns': 0}, 'DNN': {'feature_columns': 1},
                            'DNNLinearCombined': {'linear_feature_columns': 1, 'dnn_feature_columns': 3},
                            'BoostedTrees': {'feature_columns': 0}}


def premade_family(name):
  """'DNN' for tf.estimator.DNNClassifier (and its Regressor and Estimator), else None."""
  short = last(name) or ''
  for suffix in ('Classifier', 'Regressor', 'Estimator'):
    if short.endswith(suffix) and short[:-len(suffix)] in PREMADE_COLUMN_POSITIONS:
      return short[:-len(suffix)]
  return None
# Ops whose output shape depends on a value (a Range up to the data's maximum) unless given a fixed size.
SEQUENCE_MASK = frozenset(['tensorflow.sequence_mask'])
# Reductions whose value is a size read from the data of a batch (the longest length): a maxlen or
# maximum_iterations computed with them is no compile-time constant under XLA (test_report_facts.py).
BATCH_REDUCTIONS = frozenset(['tensorflow.reduce_max', 'tensorflow.math.reduce_max', 'tensorflow.reduce_sum',
                              'tensorflow.math.reduce_sum', 'tensorflow.reduce_min', 'tensorflow.math.reduce_min'])
# Ops whose arguments are a shape, size, depth or padding, which XLA needs at compile time: (position, keyword) of
# each such argument.
SHAPE_ARGUMENTS = {'tensorflow.range': ((0, 'start'), (1, 'limit')), 'tensorflow.one_hot': ((1, 'depth'),),
                   'tensorflow.zeros': ((0, 'shape'),), 'tensorflow.ones': ((0, 'shape'),),
                   'tensorflow.fill': ((0, 'dims'),), 'tensorflow.reshape': ((1, 'shape'),),
                   'tensorflow.pad': ((1, 'paddings'),)}

# Decoders that loop until every sequence ends: under XLA they need a maximum_iterations fixed when compiling
# (contrib seq2seq decoder.py raises "maximum_iterations is required for XLA compilation.").
DYNAMIC_DECODE = frozenset(['tensorflow.contrib.seq2seq.dynamic_decode', 'tensorflow_addons.seq2seq.dynamic_decode'])
# Restores a checkpoint into variables' initialisers: inside model_fn on a TPU, its RestoreV2 is inside the TPU
# computation (no XLA kernel); TPUEstimatorSpec's scaffold_fn runs it on the host.
INIT_FROM_CHECKPOINT = frozenset(['tensorflow.train.init_from_checkpoint',
                                  'tensorflow.contrib.framework.init_from_checkpoint'])
# Input sources whose elements are described by a structure of dtypes.
GENERATOR_SOURCES = frozenset(['tensorflow.data.Dataset.from_generator'])
# Image decoders: the height and width of what they return are the file's, unknown to the graph (decode_image's
# rank too, since it may return a GIF's frames).
IMAGE_DECODERS = frozenset(name for name in UINT8_PRODUCERS if 'decode_' in name)
# Byte decoders: the length of what they return is the record's, unknown to the graph.
RAW_DECODERS = frozenset(['tensorflow.decode_raw', 'tensorflow.io.decode_raw'])
# Calls that make a SparseTensor of the input's values (CTC's sparse labels): its dense shape is each batch's.
SPARSE_MAKERS = frozenset(['tensorflow.deserialize_many_sparse', 'tensorflow.io.deserialize_many_sparse',
                           'tensorflow.contrib.layers.dense_to_sparse'])
DENSIFIERS = frozenset(['tensorflow.sparse_tensor_to_dense', 'tensorflow.sparse.to_dense', 'tensorflow.sparse_to_dense',
                        'tensorflow.sparse_to_indicator', 'tensorflow.sparse.to_indicator'])
# Calls of an input that give its tensors a static shape again: a reshape, set_shape or ensure_shape, a resize or
# crop to a fixed size (the name's last part, or a method's name).
SHAPE_SETTERS = frozenset(['reshape', 'set_shape', 'ensure_shape', 'resize_images', 'resize', 'resize_bilinear',
                           'resize_nearest_neighbor', 'resize_bicubic', 'resize_area', 'resize_with_pad',
                           'resize_image_with_pad', 'resize_image_with_crop_or_pad', 'resize_with_crop_or_pad',
                           'random_crop', 'crop_to_bounding_box', 'pad_to_bounding_box', 'padded_batch',
                           'crop_and_resize'])
CSV_DECODERS = frozenset(['tensorflow.decode_csv', 'tensorflow.io.decode_csv'])
# Parse-spec features -> the position of their dtype argument: a tf.string feature hands strings on unless the input
# decodes or looks it up.
PARSE_FEATURES = {'tensorflow.FixedLenFeature': 1, 'tensorflow.io.FixedLenFeature': 1,
                  'tensorflow.FixedLenSequenceFeature': 1, 'tensorflow.io.FixedLenSequenceFeature': 1,
                  'tensorflow.VarLenFeature': 0, 'tensorflow.io.VarLenFeature': 0}
# Parse-spec features that parse into a SparseTensor, whose dense shape is each batch's: TPUEstimator's
# _validate_model_features_and_labels refuses it ("must have static shape").
SPARSE_PARSE_FEATURES = frozenset(['tensorflow.VarLenFeature', 'tensorflow.io.VarLenFeature'])
# Parsers of tf.Examples -> the position of their features (the parse spec) argument.
EXAMPLE_PARSERS = {'tensorflow.parse_example': 1, 'tensorflow.io.parse_example': 1,
                   'tensorflow.parse_single_example': 1, 'tensorflow.io.parse_single_example': 1,
                   'tensorflow.compat.v1.parse_example': 1, 'tensorflow.compat.v1.parse_single_example': 1}
# Datasets read from CSV files and batched in one call: (batch size position, num_epochs position); with num_epochs
# set they keep the last short batch (readers.py: drop_remainder only when num_epochs is None), and column_defaults
# (position 3) of '' make string columns.
CSV_DATASETS = {'tensorflow.data.experimental.make_csv_dataset': (1, 9),
                'tensorflow.contrib.data.make_csv_dataset': (1, 9)}
# Every reader that batches and keeps a short last batch when given num_epochs: (batch size, num_epochs positions).
EPOCH_READERS = dict(CONTRIB_READERS, **CSV_DATASETS)
# Host-side ops that turn strings into numbers (lookups, hashing, parsing, decoding).
STRING_CONVERSIONS = ('lookup', 'index_table_from', 'to_hash_bucket', 'string_to_hash_bucket', 'to_number',
                      'string_to_number', 'decode_raw', 'decode_jpeg', 'decode_and_crop_jpeg', 'decode_png',
                      'decode_bmp', 'decode_gif', 'decode_image', 'decode_wav', 'StaticHashTable', 'HashTable',
                      'StaticVocabularyTable', 'one_hot')
# Reading data into host memory: pandas and NumPy readers, and the tutorials' MNIST reader.
PANDAS_READERS = frozenset(['pandas.read_csv', 'pandas.read_table', 'pandas.read_json', 'pandas.read_parquet',
                            'pandas.read_excel', 'pandas.read_pickle'])
NUMPY_FLOAT_READERS = frozenset(['numpy.loadtxt', 'numpy.genfromtxt'])
# NumPy makers whose arrays are float64 unless a dtype is given -> the position of their dtype argument (None: they
# take none). Checked with NumPy 1.18.5.
NUMPY_FLOAT64_MAKERS = {'numpy.zeros': 1, 'numpy.ones': 1, 'numpy.empty': 1, 'numpy.identity': 1, 'numpy.eye': 3,
                        'numpy.linspace': 5, 'numpy.random.rand': None, 'numpy.random.randn': None,
                        'numpy.random.random': None, 'numpy.random.random_sample': None, 'numpy.random.normal': None,
                        'numpy.random.uniform': None, 'numpy.random.standard_normal': None,
                        'numpy.random.sample': None, 'numpy.random.ranf': None}
MNIST_READERS = frozenset(['tensorflow.examples.tutorials.mnist.input_data.read_data_sets',
                           'tensorflow.contrib.learn.datasets.mnist.read_data_sets',
                           'tensorflow.contrib.learn.python.learn.datasets.mnist.read_data_sets'])


def is_mnist_reader(name):
  """TensorFlow's MNIST tutorial reader, or a program's own copy of its module (`import input_data`, as many
  programs of the TensorFlow 1.0 days shipped it): labels uint8, or float64 one-hot, as TensorFlow's."""
  parts = (name or '').split('.')
  return name in MNIST_READERS or (len(parts) >= 2 and parts[-1] == 'read_data_sets' and
                                   parts[-2] in ('input_data', 'mnist'))
# Keras' image datasets: load_data() gives uint8 images and uint8 labels (keras/datasets/*.py).
KERAS_IMAGE_DATASETS = ('mnist', 'fashion_mnist', 'cifar10', 'cifar100')


def is_keras_image_dataset(name):
  parts = (name or '').split('.')
  return len(parts) >= 4 and parts[-1] == 'load_data' and parts[-2] in KERAS_IMAGE_DATASETS and \
      parts[-3] == 'datasets' and 'keras' in parts


# Local filesystem calls: on a TPU Node, data_dir and model_dir are gs:// paths, which these cannot open.
LOCAL_FS_CALLS = frozenset(['os.path.exists', 'os.path.isdir', 'os.path.isfile', 'os.makedirs', 'os.mkdir',
                            'os.listdir', 'os.remove', 'os.walk', 'glob.glob', 'shutil.rmtree', 'shutil.copy',
                            'shutil.copyfile', 'shutil.move', 'open', 'io.open', 'pathlib.Path'])
