"""Fixture for the port report (run_loop_input): the official ResNet's shape. The dataset function is handed to a
shared run loop as a parameter (or a synthetic one, chosen with `and`/`or`); the loop's own input_fns call it with
an explicit batch size, and a helper batches with map_and_batch(..., drop_remainder=False). Functions named like
input_fns that no estimator gets directly (the dataset function, the synthetic builder's inner function, an unused
CSV reader) are helpers, not input_fns. Runs under TensorFlow 1.15 and 2.15, on random images.
"""
import numpy as np
import tensorflow.compat.v1 as tf

import run_loop


def parse_record(image, label):
  return tf.image.per_image_standardization(tf.reshape(image, [4, 4, 3])), label


def input_fn(is_training, batch_size, num_epochs=1):
  rng = np.random.RandomState(0)
  dataset = tf.data.Dataset.from_tensor_slices((rng.uniform(size=(32, 48)).astype(np.float32),
                                                rng.randint(0, 10, size=32).astype(np.int32)))
  return run_loop.process_record_dataset(dataset, is_training, batch_size, parse_record, num_epochs)


def csv_input_fn(csv_path, batch_size):
  dataset = tf.data.TextLineDataset(csv_path).skip(1)
  return dataset.shuffle(100).repeat().batch(batch_size)


def model_fn(features, labels, mode, params):
  return run_loop.resnet_model_fn(features, labels, mode, params['learning_rate'])


def main(use_synthetic_data=False):
  input_function = use_synthetic_data and run_loop.get_synth_input_fn() or input_fn
  run_loop.resnet_main(model_fn, input_function, batch_size=8, train_epochs=2)


if __name__ == '__main__':
  main()
