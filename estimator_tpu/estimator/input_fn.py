"""input_fn builder for the plain tf.estimator.Estimator (mnist.py): TFRecords -> batches of (features, labels).

Read it next to estimator_tpu/tpu/input_fn.py: the same TFRecords, reading, shuffling, caching and parsing
(data/records.py); each difference is a TPU rule.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.data import records

AUTOTUNE = tf.data.experimental.AUTOTUNE
SHUFFLE_BUFFER = 10000
# parse_batch pins the batch dimension it is given; -1 leaves it dynamic, so the last batch may be short.
DYNAMIC_BATCH = -1


# TPU rule (batch size): the batch size is an argument of the builder. TPUEstimator instead passes it in
# params['batch_size'] -- per core on a TPU -- so the TPU input_fn takes `params`.
def input_fn_builder(data_dir, split, is_training, batch_size):
  """Returns input_fn() reading `<data_dir>/<split>.tfrecords`.

  Training shuffles and repeats forever (Estimator stops at max_steps). Without training, the split is read
  once in order, including a final partial batch, so `Estimator.evaluate(steps=None)` sees every example.
  """
  path = records.split_path(data_dir, split)

  def input_fn():
    dataset = records.read_dataset(path)
    if is_training:
      # The serialized split is small (MNIST train: ~50 MB), so keep it in memory after the first epoch.
      dataset = dataset.cache().shuffle(SHUFFLE_BUFFER).repeat()
    # TPU rule (static shapes): no drop_remainder, so the batch dimension is unknown (None) and the last
    # evaluation batch is short. XLA compiles a TPU program for one fixed shape, so the TPU input_fn drops it.
    dataset = dataset.batch(batch_size)
    dataset = dataset.map(lambda serialized: model.parse_records(serialized, DYNAMIC_BATCH, path),
                          num_parallel_calls=AUTOTUNE)
    return dataset.prefetch(AUTOTUNE)

  return input_fn
