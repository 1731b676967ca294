"""input_fn for the plain tf.estimator.Estimator (mnist.py): read it next to input_pipeline.py.

Same TFRecords, same reading, shuffling, caching and parsing (input_pipeline.parse_batch); two differences, each
a TPU rule.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import input_pipeline
from estimator_tpu import records

# parse_batch pins the batch dimension it is given; -1 leaves it dynamic, so the last batch may be short.
DYNAMIC_BATCH = -1


def input_fn_builder(data_dir, split, is_training, batch_size):
  """Returns input_fn() reading `<data_dir>/<split>.tfrecords` in batches of `batch_size`.

  Training shuffles and repeats forever (Estimator stops at max_steps); evaluation reads the split once in order,
  including a final partial batch, so `Estimator.evaluate(steps=None)` sees every example.
  """
  path = records.split_path(data_dir, split)

  # TPU rule (batch size): the batch size is an argument of the builder. TPUEstimator instead passes it in
  # params['batch_size'] -- per core on a TPU -- so input_pipeline.py's input_fn takes `params`.
  def input_fn():
    dataset = tf.data.TFRecordDataset(path, buffer_size=input_pipeline.READ_BUFFER_BYTES)
    if is_training:
      dataset = dataset.cache().shuffle(input_pipeline.SHUFFLE_BUFFER).repeat()
    # TPU rule (static shapes): no drop_remainder, so the batch dimension is unknown (None) and the last
    # evaluation batch is short. XLA compiles a TPU program for one fixed shape, so input_pipeline.py drops it.
    dataset = dataset.batch(batch_size)
    dataset = dataset.map(lambda serialized: input_pipeline.parse_batch(serialized, DYNAMIC_BATCH),
                          num_parallel_calls=input_pipeline.AUTOTUNE)
    return dataset.prefetch(input_pipeline.AUTOTUNE)

  return input_fn
