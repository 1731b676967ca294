"""Fixture for the port report (columns_in_model_fn): a custom regression model_fn in the cookbook style.

main() builds the feature columns, among them a vocabulary list and a hash bucket over string features, and hands
them to model_fn in params['feature_columns'], with the optimizer class in params['optimizer']; model_fn applies
the columns with input_layer (string lookups inside the model) and makes its optimizer from params.get(...), which
no CrossShardOptimizer wraps. The input feeds Python strings as they are. Runs under TensorFlow 1.15 and 2.15.
"""
import tensorflow.compat.v1 as tf

CARS = {
    'make': ['audi', 'bmw', 'fiat', 'audi', 'fiat', 'bmw', 'audi', 'fiat'],
    'body_style': ['sedan', 'wagon', 'hatchback', 'wagon', 'sedan', 'sedan', 'hatchback', 'wagon'],
    'weight': [2.1, 2.5, 1.1, 2.3, 1.2, 2.6, 1.9, 1.0],
}
PRICES = [30.0, 40.0, 10.0, 32.0, 11.0, 41.0, 29.0, 9.0]


def model_fn(features, labels, mode, params):
  top = tf.feature_column.input_layer(features, params['feature_columns'])
  for units in params.get('hidden_units', [8]):
    top = tf.layers.dense(top, units, activation=tf.nn.relu)
  predictions = tf.squeeze(tf.layers.dense(top, 1), 1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'price': predictions})
  loss = tf.losses.mean_squared_error(labels, predictions)
  if mode == tf.estimator.ModeKeys.TRAIN:
    optimizer = params.get('optimizer', tf.train.AdagradOptimizer)
    optimizer = optimizer(params.get('learning_rate', 0.1))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
  rmse = tf.metrics.root_mean_squared_error(labels, predictions)
  return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={'rmse': rmse})


def input_fn(repeat):
  dataset = tf.data.Dataset.from_tensor_slices((CARS, PRICES))
  return dataset.repeat(repeat).batch(4)


def main():
  body_style = tf.feature_column.categorical_column_with_vocabulary_list(
      'body_style', ['sedan', 'wagon', 'hatchback'])
  make = tf.feature_column.categorical_column_with_hash_bucket('make', hash_bucket_size=8)
  feature_columns = [
      tf.feature_column.numeric_column('weight'),
      tf.feature_column.indicator_column(body_style),
      tf.feature_column.embedding_column(make, dimension=2),
  ]
  model = tf.estimator.Estimator(model_fn, params={
      'feature_columns': feature_columns, 'learning_rate': 0.05, 'optimizer': tf.train.AdamOptimizer})
  model.train(input_fn=lambda: input_fn(4), steps=6)
  print(model.evaluate(input_fn=lambda: input_fn(1)))


if __name__ == '__main__':
  main()
