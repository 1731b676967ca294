"""Fixture for the port report (never run): an MNIST model from the tf.contrib era of TPUEstimator (TF 1.8-1.14),
with the mistakes such ports often kept: the optimizer always wrapped, a Python op and a data-dependent shape in
model_fn, uint8 images fed as they are decoded, flags read inside model_fn, local default paths, and predict on the
TPU without a predict_batch_size."""
import tensorflow as tf
from tensorflow.contrib import tpu as contrib_tpu
from tensorflow.contrib.cluster_resolver import TPUClusterResolver

flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_string('data_dir', '/tmp/mnist/data', 'TFRecords of MNIST.')
flags.DEFINE_string('model_dir', None, 'Checkpoints.')
flags.DEFINE_string('tpu', None, 'The Cloud TPU.')
flags.DEFINE_integer('batch_size', 1024, 'Global batch.')
flags.DEFINE_integer('train_steps', 1000, 'Training steps.')
flags.DEFINE_integer('eval_steps', 10, 'Evaluation steps.')
flags.DEFINE_integer('iterations', 50, 'Steps per TPU loop.')
flags.DEFINE_integer('num_shards', 8, 'TPU cores.')
flags.DEFINE_float('learning_rate', 0.05, 'SGD learning rate.')


def metric_fn(labels, logits):
  predictions = tf.argmax(logits, 1)
  return {'accuracy': tf.metrics.accuracy(labels=labels, predictions=predictions)}


def host_call_fn(global_step, loss):
  with tf.contrib.summary.create_file_writer(FLAGS.model_dir).as_default():
    with tf.contrib.summary.always_record_summaries():
      tf.contrib.summary.scalar('loss', loss[0], step=global_step[0])
      return tf.contrib.summary.all_summary_ops()


def label_names(class_ids):
  return tf.py_func(lambda ids: ids.astype(str), [class_ids], tf.string)


def model_fn(features, labels, mode, params):
  del params
  images = tf.reshape(features, [-1, 28, 28, 1])
  net = tf.layers.conv2d(images, 32, 5, activation=tf.nn.relu)
  net = tf.layers.max_pooling2d(net, 2, 2)
  logits = tf.layers.dense(tf.layers.flatten(net), 10)

  if mode == tf.estimator.ModeKeys.PREDICT:
    class_ids = tf.argmax(logits, 1)
    return contrib_tpu.TPUEstimatorSpec(mode, predictions={'class_ids': class_ids, 'names': label_names(class_ids)})

  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  wrong = tf.where(tf.not_equal(tf.argmax(logits, 1, output_type=tf.int32), labels))
  if mode == tf.estimator.ModeKeys.EVAL:
    return contrib_tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))

  learning_rate = tf.train.exponential_decay(FLAGS.learning_rate, tf.train.get_global_step(), 10000, 0.96)
  optimizer = contrib_tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(learning_rate))
  train_op = optimizer.minimize(loss + 0.0 * tf.cast(tf.size(wrong), tf.float32), tf.train.get_global_step())
  global_step = tf.reshape(tf.train.get_global_step(), [1])
  return contrib_tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                      host_call=(host_call_fn, [global_step, tf.reshape(loss, [1])]))


def parser(serialized_example):
  features = tf.parse_single_example(serialized_example, {
      'image_raw': tf.FixedLenFeature([], tf.string),
      'label': tf.FixedLenFeature([], tf.int64),
  })
  image = tf.decode_raw(features['image_raw'], tf.uint8)
  image.set_shape([784])
  return image, features['label']


def make_input_fn(pattern, training):

  def input_fn(params):
    batch_size = params['batch_size']
    dataset = tf.data.TFRecordDataset(tf.gfile.Glob(pattern))
    if training:
      dataset = dataset.repeat()
    dataset = dataset.map(parser)
    dataset = dataset.apply(tf.contrib.data.batch_and_drop_remainder(batch_size))
    return dataset.prefetch(4)

  return input_fn


def main(argv):
  del argv
  resolver = TPUClusterResolver(tpu=[FLAGS.tpu])
  config = contrib_tpu.RunConfig(
      cluster=resolver, model_dir=FLAGS.model_dir,
      tpu_config=contrib_tpu.TPUConfig(FLAGS.iterations, FLAGS.num_shards))
  estimator = contrib_tpu.TPUEstimator(model_fn=model_fn, config=config, train_batch_size=FLAGS.batch_size,
                                       eval_batch_size=FLAGS.batch_size)
  estimator.train(input_fn=make_input_fn(FLAGS.data_dir + '/train*', True), max_steps=FLAGS.train_steps)
  estimator.evaluate(input_fn=make_input_fn(FLAGS.data_dir + '/test*', False), steps=FLAGS.eval_steps)
  for prediction in estimator.predict(input_fn=make_input_fn(FLAGS.data_dir + '/test*', False)):
    print(prediction['names'])


if __name__ == '__main__':
  tf.app.run()
