"""input_fn builders for the MNIST TFRecords (data/records.py): training, evaluation, prediction.

estimator/input_fn.py feeds the plain Estimator (mnist.py), tpu/input_fn.py TPUEstimator
(mnist_tpu.py). `diff` the two: each difference carries a numbered TPU rule: estimator_tpu/rules.py,
docs/MIGRATION.md.
"""
from estimator_tpu import model
from estimator_tpu.data import records

SHUFFLE_BUFFER = 10000
# TPU rule 4 (static shapes): -1 leaves the batch dimension dynamic, so a last batch may be short.
DYNAMIC_BATCH = -1


# TPU rule 3 (params): each builder takes the batch size; TPUEstimator passes it in params instead.
def train_input_fn_builder(data_dir, batch_size):
  """input_fn for training: the train split, shuffled, repeated until the estimator stops."""
  path = records.split_path(data_dir, 'train')

  def input_fn():
    dataset = records.read_dataset(path)
    # No cache(): TensorFlow warns when a run ends within the first epoch, its cache half-filled.
    dataset = dataset.shuffle(SHUFFLE_BUFFER).repeat()
    # TPU rule 4 (static shapes): without drop_remainder the batch dimension is None.
    dataset = dataset.batch(batch_size)
    return model.parse_dataset(dataset, DYNAMIC_BATCH, path)

  return input_fn


def eval_input_fn_builder(data_dir, split, batch_size):
  """input_fn for evaluation: the split, read once in order, every example counted once."""
  path = records.split_path(data_dir, split)

  def input_fn():
    # TPU rule 9 (steps): read to the end, short last batch included; evaluate(steps=None) stops
    # there.
    dataset = records.read_dataset(path).batch(batch_size)
    return model.parse_dataset(dataset, DYNAMIC_BATCH, path)

  return input_fn


def predict_input_fn_builder(data_dir, split, num_examples, batch_size):
  """input_fn for prediction: the first num_examples images of the split (-1: all), read once in
  order."""
  path = records.split_path(data_dir, split)

  def input_fn():
    dataset = records.read_dataset(path).take(num_examples).batch(batch_size)
    return model.parse_dataset(dataset, DYNAMIC_BATCH, path).map(lambda features, _: features)

  return input_fn
