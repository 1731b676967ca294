"""Fixture for the port report (premade_strings): census-style data, the official wide-and-deep shape.

CSV lines decoded with tf.decode_csv whose record_defaults make string columns, fed as they are; feature columns
that look those strings up or hash them (vocabulary lists, a hash bucket, a crossed column), built by a helper and
handed to premade estimators, which run them inside the model; the estimator builder passed as a parameter to a run
loop; a hook maker given the names of tensors inside the premade model's head. Runs under TensorFlow 1.15 and 2.15
on lines written below.
"""
import tensorflow.compat.v1 as tf

import run_loop

COLUMNS = ['age', 'education', 'occupation', 'hours', 'income']
DEFAULTS = [[0], [''], [''], [0], ['']]
LINES = ['39,Bachelors,Tech,40,>50K', '50,HS-grad,Sales,13,<=50K', '38,Masters,Exec,40,>50K',
         '53,HS-grad,Craft,40,<=50K'] * 4


def build_columns():
  age = tf.feature_column.numeric_column('age')
  education = tf.feature_column.categorical_column_with_vocabulary_list(
      'education', ['Bachelors', 'HS-grad', 'Masters'])
  occupation = tf.feature_column.categorical_column_with_hash_bucket('occupation', hash_bucket_size=16)
  wide = [education, occupation, tf.feature_column.crossed_column(['education', 'occupation'], 32)]
  deep = [age, tf.feature_column.indicator_column(education), tf.feature_column.embedding_column(occupation, 4)]
  return wide, deep


def build_estimator(model_dir, model_type, model_column_fn):
  wide, deep = model_column_fn()
  if model_type == 'wide':
    return tf.estimator.LinearClassifier(model_dir=model_dir, feature_columns=wide)
  return tf.estimator.DNNLinearCombinedClassifier(
      model_dir=model_dir, linear_feature_columns=wide, dnn_feature_columns=deep, dnn_hidden_units=[8])


def input_fn(num_epochs, batch_size):
  def parse_csv(line):
    columns = tf.decode_csv(line, record_defaults=DEFAULTS)
    features = dict(zip(COLUMNS, columns))
    labels = features.pop('income')
    return features, tf.equal(labels, '>50K')

  dataset = tf.data.Dataset.from_tensor_slices(LINES).map(parse_csv)
  return dataset.repeat(num_epochs).batch(batch_size)


def main():
  def train_input_fn():
    return input_fn(2, 4)

  def eval_input_fn():
    return input_fn(1, 4)

  tensors_to_log = {'average_loss': 'head/truediv', 'loss': 'head/weighted_loss/Sum'}
  run_loop.run_loop(train_input_fn, eval_input_fn, build_columns, build_estimator, 'results/census', 'wide_deep',
                    tensors_to_log)


if __name__ == '__main__':
  main()
