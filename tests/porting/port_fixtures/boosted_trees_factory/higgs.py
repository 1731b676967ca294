"""Fixture for the port report (boosted_trees_factory): a premade estimator made and trained by a factory function,
tf.contrib.estimator.boosted_trees_classifier_train_in_memory (boosted trees have no TPU version), then evaluated
without steps on an input batched without drop_remainder. TF 1.x only (tf.contrib): runs under TensorFlow 1.15,
on random numbers.
"""
import numpy as np
import tensorflow as tf


def make_inputs(features_np, labels_np):
  names = ['feature_%d' % i for i in range(features_np.shape[1])]
  columns = [tf.feature_column.bucketized_column(tf.feature_column.numeric_column(name), [0.25, 0.5, 0.75])
             for name in names]

  def train_input_fn():
    features = {name: tf.constant(features_np[:, i]) for i, name in enumerate(names)}
    return tf.data.Dataset.zip((tf.data.Dataset.from_tensors(features),
                                tf.data.Dataset.from_tensors(tf.constant(labels_np))))

  def eval_input_fn():
    features = {name: tf.constant(features_np[:, i]) for i, name in enumerate(names)}
    return tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices(features),
                                tf.data.Dataset.from_tensor_slices(tf.constant(labels_np)))).batch(10)

  return train_input_fn, eval_input_fn, columns


def main():
  rng = np.random.RandomState(0)
  features = rng.uniform(size=(40, 3)).astype(np.float32)
  labels = (features[:, :1] > 0.5).astype(np.int32)
  train_input_fn, eval_input_fn, columns = make_inputs(features, labels)
  classifier = tf.contrib.estimator.boosted_trees_classifier_train_in_memory(
      train_input_fn, columns, n_trees=2, max_depth=2, learning_rate=0.1)
  print(classifier.evaluate(eval_input_fn))


if __name__ == '__main__':
  main()
