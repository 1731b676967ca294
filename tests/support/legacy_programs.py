"""Small legacy Estimator programs of ours that more than one test reads (the report's findings, the port's
edits).
"""

# A TF 1 queue reader's read_up_to batch: at most num_records records, the builder's argument.
READ_UP_TO = '''import tensorflow as tf


def read_dataset(pattern, batch_size=512):
  def _input_fn():
    files = tf.train.string_input_producer(tf.gfile.Glob(pattern), num_epochs=1)
    _, lines = tf.TextLineReader().read_up_to(files, num_records=batch_size)
    columns = tf.decode_csv(tf.expand_dims(lines, -1), record_defaults=[[0.0], [0.0]])
    return {'x': columns[0]}, columns[1]
  return _input_fn


estimator = tf.estimator.Estimator(lambda features, labels, mode: None)
estimator.train(read_dataset('gs://bucket/train*', batch_size=100), max_steps=10)
'''
