"""Training input from tf.data.experimental.make_csv_dataset given num_epochs: its last batch is short, and it has
no drop_remainder argument, so the port leaves a TODO there (adding drop_remainder=True crashed --write itself, found
when the code was read again after the held-out runs) and the program runs as before."""
import json
import os
import sys

import tensorflow.compat.v1 as tf


def input_fn(path, batch_size=8, num_epochs=1):
  return tf.data.experimental.make_csv_dataset(path, batch_size, label_name='y', num_epochs=num_epochs, shuffle=False)


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(tf.stack([features['a'], features['b']], 1), 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
  path = sys.argv[1] + '.csv'
  with open(path, 'w') as f:
    f.write('a,b,y\n' + ''.join('%d.5,%d.0,%d\n' % (i, i % 3, i % 2) for i in range(20)))
  est = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
  est.train(lambda: input_fn(path), max_steps=2)
  print('RESULT ' + json.dumps({'global_step': int(est.get_variable_value('global_step'))}))


if __name__ == '__main__':
  main()
