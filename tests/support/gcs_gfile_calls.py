"""tf.io.gfile and TFRecords on a gs:// directory, run inside the sandbox by test_gcs_fixture.py.

  python gcs_gfile_calls.py gs://BUCKET/DIR

Prints one JSON line of what TensorFlow saw; the test compares it with what the server holds.
"""
import hashlib
import json
import sys

import numpy as np
import tensorflow as tf

MIB = 1 << 20


def main(directory):
  gfile = tf.io.gfile
  if tf.__version__.startswith('1.'):
    tf.compat.v1.enable_eager_execution()  # to iterate a Dataset in Python
  blob = np.random.RandomState(7).randint(0, 256, 3 * MIB + 123, dtype=np.uint8).tobytes()
  gfile.makedirs(directory + '/a/b')
  with gfile.GFile(directory + '/a/blob.bin', 'wb') as f:
    f.write(blob)
  with gfile.GFile(directory + '/a/hello.txt', 'w') as f:
    f.write('hello gs\n')
  with gfile.GFile(directory + '/a/blob.bin', 'rb') as f:
    f.seek(MIB + 5)
    middle = f.read(16)
  gfile.copy(directory + '/a/blob.bin', directory + '/a/copy.bin')
  gfile.rename(directory + '/a/hello.txt', directory + '/a/renamed.txt')
  listed = sorted(gfile.listdir(directory + '/a'))
  gfile.remove(directory + '/a/copy.bin')
  records = [b'record %d' % i for i in range(50)]
  with tf.io.TFRecordWriter(directory + '/records.tfrecord') as writer:
    for record in records:
      writer.write(record)
  read_back = [item.numpy() for item in tf.data.TFRecordDataset(directory + '/records.tfrecord')]
  print(json.dumps({
      'tf': tf.__version__, 'isdir': gfile.isdir(directory + '/a/b'), 'listdir': listed,
      'seek_read_ok': middle == blob[MIB + 5:MIB + 21], 'blob_md5': hashlib.md5(blob).hexdigest(),
      'size': gfile.stat(directory + '/a/blob.bin').length, 'glob': sorted(gfile.glob(directory + '/a/*.txt')),
      'records_ok': read_back == records}))


if __name__ == '__main__':
  main(sys.argv[1])
