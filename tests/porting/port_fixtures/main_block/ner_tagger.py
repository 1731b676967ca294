"""Fixture for the port report: a sequence tagger whose driving code sits at module level, under
`if __name__ == '__main__':`, as in popular NER repositories of the Estimator era.

The patterns (each a change a TPU port needs): the params dict, the estimator and the input_fns are assigned in
the __main__ block, and a function defined there predicts with the module-level estimator; functools.partial binds
input_fn's params positionally, so TPUEstimator cannot pass its own; params holds 'batch_size', a key TPUEstimator
reserves; Dataset.from_generator yields tf.string words and tags, and padded_batch pads each batch to its longest
sentence; model_fn looks strings up in tables and masks with tf.sequence_mask(lengths) without maxlen.

Runs as it is under TensorFlow 1.15 and 2.15 (tf.compat.v1), on sentences written below, in a few seconds.
"""
import functools

import tensorflow.compat.v1 as tf

SENTENCES = [('the cat sat', 'O B O'), ('a dog ran home', 'O B O O'), ('cats and dogs', 'B O B')] * 4
WORDS = ['<pad>', 'the', 'cat', 'sat', 'a', 'dog', 'ran', 'home', 'cats', 'and', 'dogs']
TAGS = ['O', 'B']


def generator_fn(sentences):
  for words, tags in sentences:
    words, tags = words.split(), tags.split()
    yield ([w.encode() for w in words], len(words)), [t.encode() for t in tags]


def input_fn(sentences, params=None, shuffle_and_repeat=False):
  params = params if params is not None else {}
  shapes = (([None], ()), [None])
  types = ((tf.string, tf.int32), tf.string)
  dataset = tf.data.Dataset.from_generator(
      functools.partial(generator_fn, sentences), output_types=types, output_shapes=shapes)
  if shuffle_and_repeat:
    dataset = dataset.shuffle(8).repeat(params['epochs'])
  return dataset.padded_batch(params.get('batch_size', 4), shapes, (('<pad>', 0), 'O'))


def model_fn(features, labels, mode, params):
  words, nwords = features
  word_table = tf.lookup.StaticVocabularyTable(
      tf.lookup.KeyValueTensorInitializer(WORDS, list(range(len(WORDS))), value_dtype=tf.int64), 1)
  word_ids = word_table.lookup(words)
  embeddings = tf.get_variable('embeddings', [len(WORDS) + 1, params['dim']])
  mask = tf.cast(tf.sequence_mask(nwords), tf.float32)
  logits = tf.layers.dense(tf.nn.embedding_lookup(embeddings, word_ids), len(TAGS))
  predicted = tf.argmax(logits, -1)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.EstimatorSpec(mode, predictions={'tags': predicted})

  tag_table = tf.lookup.StaticHashTable(
      tf.lookup.KeyValueTensorInitializer(TAGS, [0, 1], value_dtype=tf.int64), -1)
  tag_ids = tag_table.lookup(labels)
  loss = tf.losses.sparse_softmax_cross_entropy(tag_ids, logits, weights=mask)
  if mode == tf.estimator.ModeKeys.EVAL:
    accuracy = tf.metrics.accuracy(tag_ids, predicted, mask)
    return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={'accuracy': accuracy})

  train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


if __name__ == '__main__':
  params = {'dim': 8, 'epochs': 2, 'batch_size': 4}
  train_inpf = functools.partial(input_fn, SENTENCES, params, shuffle_and_repeat=True)
  eval_inpf = functools.partial(input_fn, SENTENCES)

  config = tf.estimator.RunConfig(save_checkpoints_steps=5)
  estimator = tf.estimator.Estimator(model_fn, 'results/model', config, params)
  train_spec = tf.estimator.TrainSpec(input_fn=train_inpf, max_steps=5)
  eval_spec = tf.estimator.EvalSpec(input_fn=eval_inpf, throttle_secs=0)
  tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

  def write_predictions():
    for prediction in estimator.predict(eval_inpf):
      print(prediction['tags'])

  write_predictions()
