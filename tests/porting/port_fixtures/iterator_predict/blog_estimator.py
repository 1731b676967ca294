"""Fixture for the port report (iterator_predict): the blog-post custom estimator, driven by module-level code (no
main), with input_fns that return the tensors of an iterator instead of a Dataset: TPUEstimator takes those for
training and evaluation (PER_HOST_V1 input) but its predict refuses them. The CSV is written to a local folder with
os and open, which a TPU Node's gs:// paths would not reach. Runs under TensorFlow 1.15 and 2.15, in a few seconds.
"""
import os

import tensorflow.compat.v1 as tf

PATH = 'tf_custom_estimators'
PATH_DATASET = os.path.join(PATH, 'dataset')
FILE_TRAIN = os.path.join(PATH_DATASET, 'train.csv')
FEATURES = ['SepalLength', 'SepalWidth', 'PetalLength', 'PetalWidth']
ROWS = ['5.1,3.5,1.4,0.2,0', '6.4,3.2,4.5,1.5,1', '6.3,3.3,6.0,2.5,2', '4.9,3.0,1.4,0.2,0']

if not os.path.exists(PATH_DATASET):
  os.makedirs(PATH_DATASET)
with open(FILE_TRAIN, 'w') as f:
  f.write('header\n' + '\n'.join(ROWS * 4) + '\n')


def my_input_fn(file_path, repeat_count=1):
  def decode_csv(line):
    parsed = tf.decode_csv(line, [[0.], [0.], [0.], [0.], [0]])
    return dict(zip(FEATURES, parsed[:-1])), parsed[-1]

  dataset = tf.data.TextLineDataset(file_path).skip(1).map(decode_csv).repeat(repeat_count).batch(4)
  features, labels = tf.data.make_one_shot_iterator(dataset).get_next()
  return features, labels


def my_model_fn(features, labels, mode):
  columns = [tf.feature_column.numeric_column(name) for name in FEATURES]
  logits = tf.layers.dense(tf.feature_column.input_layer(features, columns), 3)
  predictions = {'class_ids': tf.argmax(logits, 1)}
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.AdagradOptimizer(0.05).minimize(loss, tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


classifier = tf.estimator.Estimator(model_fn=my_model_fn, model_dir=PATH)
classifier.train(input_fn=lambda: my_input_fn(FILE_TRAIN, 2))
for prediction in classifier.predict(input_fn=lambda: my_input_fn(FILE_TRAIN)):
  print(prediction['class_ids'])
