"""Fixture for the port report (never run): a custom Estimator in the style of TensorFlow's "custom estimators"
tutorial -- feature columns, a model_fn that returns EstimatorSpec with eval_metric_ops and writes a
tf.summary.scalar, input_fns fed from pandas through lambdas with a batch size from the command line.
"""
import argparse

import pandas as pd
import tensorflow as tf

COLUMNS = ['SepalLength', 'SepalWidth', 'PetalLength', 'PetalWidth', 'Species']
SPECIES = ['Setosa', 'Versicolor', 'Virginica']


def load_data(train_path='iris_training.csv', test_path='iris_test.csv'):
  train = pd.read_csv(train_path, names=COLUMNS, header=0)
  test = pd.read_csv(test_path, names=COLUMNS, header=0)
  return (train, train.pop('Species')), (test, test.pop('Species'))


def train_input_fn(features, labels, batch_size):
  dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
  return dataset.shuffle(1000).repeat().batch(batch_size)


def eval_input_fn(features, labels, batch_size):
  inputs = dict(features) if labels is None else (dict(features), labels)
  dataset = tf.data.Dataset.from_tensor_slices(inputs)
  return dataset.batch(batch_size)


def my_model_fn(features, labels, mode, params):
  net = tf.feature_column.input_layer(features, params['feature_columns'])
  for units in params['hidden_units']:
    net = tf.layers.dense(net, units=units, activation=tf.nn.relu)
  logits = tf.layers.dense(net, params['n_classes'], activation=None)

  predicted_classes = tf.argmax(logits, 1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    predictions = {
        'class_ids': predicted_classes[:, tf.newaxis],
        'probabilities': tf.nn.softmax(logits),
    }
    return tf.estimator.EstimatorSpec(mode, predictions=predictions)

  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  accuracy = tf.metrics.accuracy(labels=labels, predictions=predicted_classes, name='acc_op')
  metrics = {'accuracy': accuracy}
  tf.summary.scalar('accuracy', accuracy[1])

  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

  optimizer = tf.train.AdagradOptimizer(learning_rate=0.1)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(argv):
  parser = argparse.ArgumentParser()
  parser.add_argument('--batch_size', default=100, type=int)
  parser.add_argument('--train_steps', default=1000, type=int)
  args = parser.parse_args(argv[1:])
  (train_x, train_y), (test_x, test_y) = load_data()

  feature_columns = [tf.feature_column.numeric_column(key=key) for key in train_x.keys()]
  classifier = tf.estimator.Estimator(
      model_fn=my_model_fn,
      params={'feature_columns': feature_columns, 'hidden_units': [10, 10], 'n_classes': 3})

  classifier.train(input_fn=lambda: train_input_fn(train_x, train_y, args.batch_size), steps=args.train_steps)
  eval_result = classifier.evaluate(input_fn=lambda: eval_input_fn(test_x, test_y, args.batch_size))
  print('Test set accuracy: {accuracy:0.3f}'.format(**eval_result))

  predict_x = {'SepalLength': [5.1, 5.9], 'SepalWidth': [3.3, 3.0], 'PetalLength': [1.7, 4.2],
               'PetalWidth': [0.5, 1.5]}
  predictions = classifier.predict(input_fn=lambda: eval_input_fn(predict_x, None, args.batch_size))
  for prediction in predictions:
    print(SPECIES[prediction['class_ids'][0]])


if __name__ == '__main__':
  tf.logging.set_verbosity(tf.logging.INFO)
  tf.app.run(main)
