"""Fixture for the port report (never run): a classifier in the shape of BERT's run_classifier.py, which was
written for TPUEstimator in TF 1.x: builder closures (model_fn_builder, file_based_input_fn_builder) return the
inner functions, flags are read in main only, and the tf.contrib-era TPU API is used throughout."""
import os

import optimization
import tensorflow as tf

flags = tf.flags
FLAGS = flags.FLAGS

flags.DEFINE_string('data_dir', None, 'Folder with train.tf_record and eval.tf_record.')
flags.DEFINE_string('output_dir', None, 'Where checkpoints and predictions go.')
flags.DEFINE_string('init_checkpoint', None, 'Checkpoint to start from.')
flags.DEFINE_integer('max_seq_length', 128, 'Tokens per example.')
flags.DEFINE_bool('do_train', False, 'Train.')
flags.DEFINE_bool('do_eval', False, 'Evaluate on the dev set.')
flags.DEFINE_bool('do_predict', False, 'Predict the test set.')
flags.DEFINE_integer('train_batch_size', 32, 'Global training batch.')
flags.DEFINE_integer('eval_batch_size', 8, 'Global evaluation batch.')
flags.DEFINE_integer('predict_batch_size', 8, 'Global prediction batch.')
flags.DEFINE_float('learning_rate', 5e-5, 'Initial learning rate.')
flags.DEFINE_integer('num_train_steps', 1000, 'Training steps.')
flags.DEFINE_integer('num_warmup_steps', 100, 'Warm-up steps.')
flags.DEFINE_integer('num_eval_examples', 1000, 'Examples in eval.tf_record.')
flags.DEFINE_integer('iterations_per_loop', 1000, 'Steps per TPU loop.')
flags.DEFINE_bool('use_tpu', False, 'Run on a TPU.')
flags.DEFINE_string('tpu_name', None, 'The Cloud TPU.')
flags.DEFINE_string('tpu_zone', None, 'Its zone.')
flags.DEFINE_string('gcp_project', None, 'Its project.')
flags.DEFINE_string('master', None, 'A TPU master address instead of tpu_name.')
flags.DEFINE_integer('num_tpu_cores', 8, 'TPU cores.')
flags.DEFINE_string('export_dir', './exported', 'Where the SavedModel goes.')

NUM_LABELS = 2


def create_model(is_training, input_ids, input_mask, labels, num_labels):
  embedded = tf.layers.dense(tf.one_hot(input_ids, depth=30522), 256)
  pooled = tf.reduce_sum(embedded * tf.cast(input_mask, tf.float32)[:, :, None], axis=1)
  if is_training:
    pooled = tf.nn.dropout(pooled, keep_prob=0.9)
  logits = tf.layers.dense(pooled, num_labels)
  log_probs = tf.nn.log_softmax(logits, axis=-1)
  one_hot_labels = tf.one_hot(labels, depth=num_labels, dtype=tf.float32)
  per_example_loss = -tf.reduce_sum(one_hot_labels * log_probs, axis=-1)
  return tf.reduce_mean(per_example_loss), per_example_loss, logits, tf.nn.softmax(logits)


def model_fn_builder(num_labels, init_checkpoint, learning_rate, num_train_steps, num_warmup_steps, use_tpu):
  """Returns model_fn for TPUEstimator."""

  def model_fn(features, labels, mode, params):
    del labels, params  # the labels come in features; TPUEstimator's params are not needed here
    input_ids = features['input_ids']
    input_mask = features['input_mask']
    label_ids = features['label_ids']
    is_real_example = tf.cast(features['is_real_example'], tf.float32)
    is_training = mode == tf.estimator.ModeKeys.TRAIN
    total_loss, per_example_loss, logits, probabilities = create_model(
        is_training, input_ids, input_mask, label_ids, num_labels)

    scaffold_fn = None
    if init_checkpoint:
      assignment_map = {'dense/': 'dense/'}
      if use_tpu:

        def tpu_scaffold():
          tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
          return tf.train.Scaffold()

        scaffold_fn = tpu_scaffold
      else:
        tf.train.init_from_checkpoint(init_checkpoint, assignment_map)

    if mode == tf.estimator.ModeKeys.TRAIN:
      train_op = optimization.create_optimizer(total_loss, learning_rate, num_train_steps, num_warmup_steps, use_tpu)
      return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=total_loss, train_op=train_op, scaffold_fn=scaffold_fn)
    if mode == tf.estimator.ModeKeys.EVAL:

      def metric_fn(per_example_loss, label_ids, logits, is_real_example):
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            'eval_accuracy': tf.metrics.accuracy(label_ids, predictions, weights=is_real_example),
            'eval_loss': tf.metrics.mean(per_example_loss, weights=is_real_example),
        }

      eval_metrics = (metric_fn, [per_example_loss, label_ids, logits, is_real_example])
      return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=total_loss, eval_metrics=eval_metrics,
                                             scaffold_fn=scaffold_fn)
    return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, predictions={'probabilities': probabilities},
                                           scaffold_fn=scaffold_fn)

  return model_fn


def _decode_record(record, name_to_features):
  example = tf.parse_single_example(record, name_to_features)
  # tf.Example holds int64; the model takes int32.
  for name in list(example.keys()):
    if example[name].dtype == tf.int64:
      example[name] = tf.to_int32(example[name])
  return example


def file_based_input_fn_builder(input_file, seq_length, is_training, drop_remainder):
  name_to_features = {
      'input_ids': tf.FixedLenFeature([seq_length], tf.int64),
      'input_mask': tf.FixedLenFeature([seq_length], tf.int64),
      'label_ids': tf.FixedLenFeature([], tf.int64),
      'is_real_example': tf.FixedLenFeature([], tf.int64),
  }

  def input_fn(params):
    batch_size = params['batch_size']
    d = tf.data.TFRecordDataset(input_file)
    if is_training:
      d = d.repeat()
      d = d.shuffle(buffer_size=100)
    d = d.apply(tf.contrib.data.map_and_batch(lambda record: _decode_record(record, name_to_features),
                                              batch_size=batch_size, drop_remainder=drop_remainder))
    return d

  return input_fn


def input_fn_builder(all_input_ids, seq_length, drop_remainder):
  """An in-memory variant, for small demos; this script does not use it."""

  def input_fn(params):
    batch_size = params['batch_size']
    num_examples = len(all_input_ids)
    d = tf.data.Dataset.from_tensor_slices({
        'input_ids': tf.constant(all_input_ids, shape=[num_examples, seq_length], dtype=tf.int32),
    })
    return d.batch(batch_size=batch_size, drop_remainder=drop_remainder)

  return input_fn


def main(_):
  tf.logging.set_verbosity(tf.logging.INFO)
  tpu_cluster_resolver = None
  if FLAGS.use_tpu and FLAGS.tpu_name:
    tpu_cluster_resolver = tf.contrib.cluster_resolver.TPUClusterResolver(
        FLAGS.tpu_name, zone=FLAGS.tpu_zone, project=FLAGS.gcp_project)

  is_per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2
  run_config = tf.contrib.tpu.RunConfig(
      cluster=tpu_cluster_resolver,
      master=FLAGS.master,
      model_dir=FLAGS.output_dir,
      save_checkpoints_steps=FLAGS.iterations_per_loop,
      tpu_config=tf.contrib.tpu.TPUConfig(
          iterations_per_loop=FLAGS.iterations_per_loop,
          num_shards=FLAGS.num_tpu_cores,
          per_host_input_for_training=is_per_host))

  model_fn = model_fn_builder(
      num_labels=NUM_LABELS, init_checkpoint=FLAGS.init_checkpoint, learning_rate=FLAGS.learning_rate,
      num_train_steps=FLAGS.num_train_steps, num_warmup_steps=FLAGS.num_warmup_steps, use_tpu=FLAGS.use_tpu)

  estimator = tf.contrib.tpu.TPUEstimator(
      use_tpu=FLAGS.use_tpu,
      model_fn=model_fn,
      config=run_config,
      train_batch_size=FLAGS.train_batch_size,
      eval_batch_size=FLAGS.eval_batch_size,
      predict_batch_size=FLAGS.predict_batch_size)

  if FLAGS.do_train:
    train_input_fn = file_based_input_fn_builder(
        input_file=os.path.join(FLAGS.data_dir, 'train.tf_record'), seq_length=FLAGS.max_seq_length,
        is_training=True, drop_remainder=True)
    estimator.train(input_fn=train_input_fn, max_steps=FLAGS.num_train_steps)

  if FLAGS.do_eval:
    # On a TPU every batch must be full: the eval file was padded with is_real_example=0 rows to a multiple of the
    # batch, and the number of steps is known.
    eval_steps = None
    if FLAGS.use_tpu:
      eval_steps = int(FLAGS.num_eval_examples // FLAGS.eval_batch_size)
    eval_drop_remainder = True if FLAGS.use_tpu else False
    eval_input_fn = file_based_input_fn_builder(
        input_file=os.path.join(FLAGS.data_dir, 'eval.tf_record'), seq_length=FLAGS.max_seq_length,
        is_training=False, drop_remainder=eval_drop_remainder)
    result = estimator.evaluate(input_fn=eval_input_fn, steps=eval_steps)
    tf.logging.info('eval: %s', result)

  if FLAGS.do_predict:
    predict_drop_remainder = True if FLAGS.use_tpu else False
    predict_input_fn = file_based_input_fn_builder(
        input_file=os.path.join(FLAGS.data_dir, 'predict.tf_record'), seq_length=FLAGS.max_seq_length,
        is_training=False, drop_remainder=predict_drop_remainder)
    for prediction in estimator.predict(input_fn=predict_input_fn):
      tf.logging.info('%s', prediction['probabilities'])


if __name__ == '__main__':
  flags.mark_flag_as_required('data_dir')
  flags.mark_flag_as_required('output_dir')
  tf.app.run()
