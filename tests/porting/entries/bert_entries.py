"""Data for the port proofs of the bert_like fixture: tiny TFRecords in the layout of BERT's run_classifier.py
(input_ids, input_mask, label_ids, is_real_example), train.tf_record and eval.tf_record."""
import os

import numpy as np
import tensorflow.compat.v1 as tf

SEQ_LENGTH = 8


def _feature(values):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in values]))


def write_data(data_dir, train_examples=40, eval_examples=13, seed=0):
  generator = np.random.RandomState(seed)
  for name, count in (('train.tf_record', train_examples), ('eval.tf_record', eval_examples)):
    with tf.io.TFRecordWriter(os.path.join(data_dir, name)) as writer:
      for index in range(count):
        label = index % 2
        ids = generator.randint(1, 200, size=SEQ_LENGTH) + 300 * label
        example = tf.train.Example(features=tf.train.Features(feature={
            'input_ids': _feature(ids), 'input_mask': _feature(np.ones(SEQ_LENGTH)),
            'label_ids': _feature([label]), 'is_real_example': _feature([1])}))
        writer.write(example.SerializeToString())
