"""Fixture for the port report (run_loop_input): the shared run loop; see cifar_main.py."""
import tensorflow.compat.v1 as tf


def process_record_dataset(dataset, is_training, batch_size, parse_record_fn, num_epochs=1):
  if is_training:
    dataset = dataset.shuffle(buffer_size=64)
  dataset = dataset.repeat(num_epochs)
  return dataset.apply(tf.data.experimental.map_and_batch(parse_record_fn, batch_size=batch_size,
                                                          drop_remainder=False))


def get_synth_input_fn():
  def input_fn(is_training, batch_size, *args, **kwargs):
    images = tf.random.uniform([batch_size, 4, 4, 3])
    labels = tf.zeros([batch_size], tf.int32)
    return tf.data.Dataset.from_tensors((images, labels)).repeat()
  return input_fn


def resnet_model_fn(features, labels, mode, learning_rate):
  logits = tf.layers.dense(tf.layers.flatten(features), 10)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.EstimatorSpec(mode, loss=loss)
  train_op = tf.train.MomentumOptimizer(learning_rate, 0.9).minimize(loss, tf.train.get_or_create_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def resnet_main(model_function, input_function, batch_size, train_epochs):
  classifier = tf.estimator.Estimator(model_fn=model_function, params={'learning_rate': 0.01})

  def input_fn_eval():
    return input_function(is_training=False, batch_size=batch_size)

  for _ in range(train_epochs):
    classifier.train(input_fn=lambda: input_function(is_training=True, batch_size=batch_size), max_steps=4)
    print(classifier.evaluate(input_fn=input_fn_eval, steps=2))
