"""Every kind of finding the port report makes, as data: a stable code (what programs read: `--format=json`, the
rewrite's fixers), the TPU rule it is about, and what it means. A finding's message is for people and may be
reworded; its code is not.

Codes are kebab-case, grouped by where the finding is: the estimator and its configuration, how the program
drives it, model_fn, input_fn, whole files, and the tool itself.
"""
import collections

Code = collections.namedtuple('Code', ['code', 'rule', 'about'])

CODES = (
    # The estimator and its configuration.
    Code('estimator-subclass', 1, 'a class that builds on a plain Estimator'),
    Code('plain-estimator', 1, 'a tf.estimator.Estimator (or tf.contrib.learn one) that runs on the TPU'),
    Code('cpu-estimator-shares-model-fn', 1, 'a plain Estimator kept on the CPU with a model_fn the port changes'),
    Code('premade-estimator', 1, 'a premade estimator, which has no TPU version'),
    Code('estimator-wrapper', 1, 'add_metrics / forward_features: a plain Estimator around the estimator'),
    Code('estimator-factory', 1, 'a function that builds and trains a premade (boosted trees) estimator'),
    Code('keras-estimator', 1, 'model_to_estimator, which makes a plain Estimator'),
    Code('tpu-estimator-without-config', 1, 'a TPUEstimator without config='),
    Code('tpu-estimator-use-tpu-false', 1, 'the only TPUEstimator is built with use_tpu=False'),
    Code('tpu-estimator-without-train-batch-size', 1, 'a TPUEstimator that trains without train_batch_size'),
    Code('tpu-estimator-without-batch-size', 1, 'a TPUEstimator that evaluates or predicts on a TPU without the '
         'eval/predict batch size'),
    Code('tpu-estimator-batch-sizes-unseen', 1, 'a TPUEstimator without eval/predict batch sizes, whose use is not '
         'seen'),
    Code('params-reserved-key', 3, 'params holds batch_size or context, which TPUEstimator reserves'),
    Code('params-not-a-dict', 3, 'params is a Namespace, FLAGS or an object, not a dict'),
    Code('premade-string-columns', 15, 'the feature columns of a premade estimator look strings up'),
    Code('premade-id-columns', 4, 'the categorical columns of a premade estimator make SparseTensors of dense ids'),
    Code('model-fn-unresolved', 5, 'the model_fn could not be followed'),
    Code('run-config-not-tpu', 1, 'a RunConfig that is not tf.estimator.tpu.RunConfig'),
    Code('run-config-one-step-per-run', 8, 'a plain RunConfig: one step per session.run'),
    Code('run-config-without-tpu-address', 2, 'nothing says where the TPU is'),
    Code('tpu-run-config-without-tpu-config', 8, 'a tpu RunConfig without tpu_config'),
    Code('tpu-run-config-without-tpu-address', 2, 'a tpu RunConfig that names no TPU'),
    Code('run-config-master-and-cluster', 2, 'a RunConfig with both master= and cluster='),
    Code('distribution-strategy', 1, 'a distribution strategy in the RunConfig'),
    Code('tpu-config-without-iterations', 8, 'TPUConfig without iterations_per_loop'),
    Code('local-model-dir', 17, 'model_dir on this machine\'s disk'),
    # How the program drives the estimator.
    Code('metric-spec', 5, 'contrib.learn\'s MetricSpec: a metric computed outside model_fn, which a TPUEstimator '
         'takes only as eval_metrics'),
    Code('input-fn-from-queue-maker', 3, 'an input_fn made by numpy_input_fn/pandas_input_fn/generator_input_fn'),
    Code('input-fn-unresolved', 3, 'the input_fn could not be followed'),
    Code('input-from-arrays', 3, 'contrib.learn fit/evaluate/predict given arrays, not an input_fn'),
    Code('train-spec-without-max-steps', 9, 'a TrainSpec without max_steps'),
    Code('eval-spec-steps-none', 9, 'an EvalSpec with steps=None'),
    Code('train-and-evaluate-cluster', 14, 'train_and_evaluate with a TF_CONFIG cluster'),
    Code('train-and-evaluate-in-training', 8, 'train_and_evaluate in one process evaluates inside training'),
    Code('experiment-evaluates-in-training', 8, 'a contrib.learn Experiment evaluates inside training'),
    Code('experiment-without-train-steps', 9, 'an Experiment without train_steps'),
    Code('experiment-eval-steps-none', 9, 'an Experiment with eval_steps=None'),
    Code('train-without-steps', 9, 'train() with neither steps nor max_steps'),
    Code('train-steps-unseen', 9, 'train() steps only known at run time'),
    Code('evaluate-without-steps', 9, 'evaluate() without steps'),
    Code('evaluate-steps-unseen', 9, 'evaluate() steps only known at run time'),
    Code('steps-not-int', 9, 'a step count computed with true division (a float)'),
    Code('hooks-fetch-tensors', 8, 'hooks= of train/evaluate/predict or a spec hold a hook that fetches tensors'),
    Code('hooks-fetch-named-tensors', 8, 'hooks= fetch tensors that model_fn names for them'),
    Code('hooks-evaluate-in-training', 8, 'a hook or monitor handed to training that evaluates the estimator'),
    # model_fn.
    Code('model-fn-without-params', 3, 'a model_fn without a params argument'),
    Code('model-fn-labels-name', 3, 'a model_fn that takes the labels under another name (contrib.learn\'s targets)'),
    Code('float64-in-model-fn', 15, 'float64 inside model_fn'),
    Code('int-true-division', 15, 'integer tensors divided with true division (float64) inside model_fn'),
    Code('no-xla-kernel', 18, 'an op without an XLA kernel inside model_fn'),
    Code('flag-in-model-fn', 3, 'model_fn reads a flag'),
    Code('device-placement', 6, 'with tf.device(...) inside model_fn'),
    Code('own-batch-size-in-model-fn', 3, 'model_fn reads the program\'s own params[\'batch_size\']'),
    Code('global-batch-size-in-model-fn', 3, 'model_fn sizes or scales tensors by the program\'s global batch size'),
    Code('summary-in-model-fn', 7, 'a summary op inside model_fn'),
    Code('python-in-model-fn', 18, 'py_func and the like inside model_fn'),
    Code('variable-from-a-tensor', 18, 'a tf.Variable whose initial value is a tensor, inside model_fn'),
    Code('dynamic-shape-op', 4, 'an op whose output shape depends on the data'),
    Code('sequence-mask-without-maxlen', 4, 'tf.sequence_mask without maxlen inside model_fn'),
    Code('decode-without-maximum-iterations', 18, 'a seq2seq dynamic_decode without maximum_iterations inside '
         'model_fn'),
    Code('init-from-checkpoint-in-model-fn', 5, 'init_from_checkpoint inside model_fn, not in scaffold_fn'),
    Code('string-op-in-model-fn', 15, 'a string op inside model_fn'),
    Code('string-columns-in-model-fn', 15, 'feature columns that look strings up, applied inside model_fn'),
    Code('id-columns-in-model-fn', 4, 'categorical columns over ids, applied inside model_fn'),
    Code('estimator-spec', 5, 'an EstimatorSpec returned in evaluation or prediction on a TPU'),
    Code('head-estimator-spec', 5, 'a head\'s create_estimator_spec: an EstimatorSpec with metric ops'),
    Code('head-summaries', 7, 'a head\'s create_estimator_spec writes a loss summary in training'),
    Code('model-fn-returns-tuple', 5, 'a model_fn returning contrib.learn\'s (predictions, loss, train_op)'),
    Code('estimator-spec-in-training', 5, 'an EstimatorSpec returned in training only'),
    Code('eval-metric-ops', 5, 'eval_metric_ops= of an EstimatorSpec'),
    Code('predictions-not-dict', 5, 'predictions that are one tensor, which TPU prediction refuses'),
    Code('eval-metrics-not-tensors', 5,
         'Python values among eval_metrics\' tensors, which a TPU\'s outfeed cannot carry'),
    Code('input-sparse-tensor', 4, 'a SparseTensor the input makes of its values, which the infeed cannot take'),
    Code('string-predictions', 15, 'string tensors among the predictions TPU prediction sends off the TPU'),
    Code('training-chief-hooks', 8, 'training_chief_hooks= of an EstimatorSpec'),
    Code('scaffold', 5, 'scaffold= of an EstimatorSpec'),
    Code('spec-hooks-fetch-tensors', 8, 'training/evaluation/prediction hooks of a spec that fetch tensors'),
    Code('spec-hooks', 8, 'training/evaluation/prediction hooks of a spec'),
    Code('optimizer-not-cross-shard', 6, 'an optimizer no CrossShardOptimizer wraps'),
    Code('keras-optimizer', 6, 'a Keras optimizer, which CrossShardOptimizer does not take'),
    Code('cross-shard-always', 6, 'CrossShardOptimizer also off the TPU'),
    Code('optimizer-unseen', 6, 'whether the optimizer is wrapped cannot be told'),
    Code('train-op-unseen', 6, 'train_op is built outside the scanned files'),
    Code('summaries-of-optimize-loss', 7, 'optimize_loss writes summaries inside model_fn'),
    Code('summaries-of-create-train-op', 7, 'create_train_op(summarize_gradients=True) writes summaries inside '
         'model_fn'),
    # input_fn.
    Code('input-fn-partial-binds-params', 3, 'functools.partial binds input_fn\'s params'),
    Code('input-fn-without-params', 3, 'an input_fn without a params argument'),
    Code('input-fn-returns-tensors', 3, 'an input_fn that returns tensors, not a Dataset'),
    Code('in-memory-dtype', 15, 'in-memory data of a dtype the infeed refuses'),
    Code('in-memory-dtype-unseen', 15, 'in-memory data whose dtype only NumPy or pandas decide'),
    Code('queue-input', 4, 'queue-based input (tf.train.batch and the like)'),
    Code('local-input-path', 17, 'input read from a local path'),
    Code('batch-size-not-params', 3, 'a batch size that is not params[\'batch_size\']'),
    Code('batch-without-drop-remainder', 4, 'a batch without drop_remainder=True in input that trains or evaluates'),
    Code('batch-not-divisible', 16, 'a batch size written as a number that does not split over 8 cores'),
    Code('batch-drop-remainder-unseen', 4, 'whether drop_remainder is True cannot be told'),
    Code('padded-batch-dynamic-shapes', 4, 'padded_batch to the batch\'s longest element'),
    Code('bucketed-batches', 4, 'bucket_by_sequence_length: batches of a None batch dimension'),
    Code('bucketed-padding-dynamic', 4, 'bucket_by_sequence_length padding each bucket to its own longest element'),
    Code('input-from-arrays-batch', 4, 'contrib.learn\'s data feeder: placeholders with a None batch dimension'),
    Code('input-unknown-shapes', 4, 'input tensors of unknown shape (a generator, py_func, decoded images)'),
    Code('queue-dynamic-pad', 4, 'tf.train.batch(dynamic_pad=True): each batch padded to its own longest element'),
    Code('flag-in-input-fn', 3, 'input_fn reads a flag'),
    Code('strings-to-the-device', 15, 'input hands strings to the model'),
    Code('uncast-input-dtype', 15, 'uint8 or float64 input never cast'),
    # Whole files.
    Code('local-file-call', 17, 'a local file call on a data or model path'),
    Code('contrib-name', 19, 'a tf.contrib name, which TF 2 does not have'),
    Code('local-path-flag', 17, 'a path flag whose default is a local path'),
    # The tool.
    Code('not-analysed', 13, 'the report could not analyse some code'),
)
BY_CODE = collections.OrderedDict((code.code, code) for code in CODES)


def rule_of(code):
  """The TPU rule of a code; KeyError for a code the registry does not have."""
  return BY_CODE[code].rule
