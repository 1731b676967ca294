"""input_fn builders for the MNIST TFRecords (data/records.py): training, evaluation, prediction.

estimator/input_fn.py feeds the plain Estimator (mnist.py), tpu/input_fn.py TPUEstimator
(mnist_tpu.py). `diff` the two: each difference carries a numbered TPU rule: estimator_tpu/rules.py,
docs/MIGRATION.md.
"""
from estimator_tpu import model
from estimator_tpu.data import records
# TPU rule 3 (params): which shard an input_fn call reads (params['context']), and eval padding.
from estimator_tpu.tpu import deployment

SHUFFLE_BUFFER = 10000


# TPU rule 3 (params): the batch size comes in params: per core on a TPU, global on the CPU.
def train_input_fn_builder(data_dir):
  """input_fn for training: the train split, shuffled, repeated until the estimator stops."""
  path = records.split_path(data_dir, 'train')

  # TPU rule 3 (params): on a TPU, one call per host, each reading its own shard (before the
  # shuffle).
  def input_fn(params):
    batch_size = params['batch_size']
    index, count = deployment.input_deployment(params)
    dataset = records.read_dataset(path).shard(count, index)
    # No cache(): TensorFlow warns when a run ends within the first epoch, its cache half-filled.
    dataset = dataset.shuffle(SHUFFLE_BUFFER).repeat()
    # TPU rule 4 (static shapes): drop_remainder makes every batch full, one shape for XLA to
    # compile.
    dataset = dataset.batch(batch_size, drop_remainder=True)
    return model.parse_dataset(dataset, batch_size, path)

  return input_fn


# TPU rule 9 (steps): evaluate() on a TPU runs exactly `steps` full batches: those of the whole
# split, the last one padded, or its first --eval_steps ones.
def eval_steps(data_dir, split, batch_size, requested_steps=None):
  examples = records.count_examples(records.split_path(data_dir, split))
  return deployment.exact_eval_plan(split, examples, batch_size, requested_steps)[1]


def eval_input_fn_builder(data_dir, split, batch_size, steps):
  """input_fn for evaluation: the split, read once in order, every example counted once."""
  path = records.split_path(data_dir, split)
  # TPU rule 9 (steps): each call pads its shard with rows of weight 0 up to `steps` full batches.
  num_examples = min(records.count_examples(path), steps * batch_size)
  padding = model.padding_example(path)

  def input_fn(params):
    deployment.require_even_split(params, batch_size, 'eval')
    index, count = deployment.input_deployment(params)
    rows = deployment.invocation_padding(num_examples, batch_size, steps, index, count)
    real = records.read_dataset(path).take(num_examples).shard(count, index)
    dataset = real.map(lambda row: (row, 1.0)).concatenate(model.padding_dataset(padding, rows))
    dataset = dataset.batch(params['batch_size'], drop_remainder=True)
    return model.parse_dataset(dataset, params['batch_size'], path, weighted=True)

  return input_fn


def predict_input_fn_builder(data_dir, split, num_examples, batch_size):
  """input_fn for prediction: the first num_examples images of the split (-1: all), read once in
  order."""
  path = records.split_path(data_dir, split)

  # TPU rule 14 (pod slices): one input_fn call (SLICED input), whose global batch TensorFlow splits
  # over the cores. A short last batch is fine: TPUEstimator.predict pads it and drops the padding.
  def input_fn(params):
    deployment.require_one_call(params)
    deployment.require_even_split(params, batch_size, 'predict')
    dataset = records.read_dataset(path).take(num_examples).batch(params['batch_size'])
    return model.parse_dataset(dataset, -1, path).map(lambda features, _: features)

  return input_fn
