"""A small TPUEstimator program for the `readiness --run` tests, written for them: run on the CPU with
use_tpu=False it trains, evaluates and predicts on synthetic data; each --variant breaks it one way that only a
TPU would notice (or that TensorFlow's TPUEstimator refuses), as legacy programs and careless ports do.

  python variants.py [--variant=NAME] [--model_dir=DIR] [--train_steps=N] [--use_tpu=true|false]
"""
import argparse
import os
import threading
import time

import numpy as np
import tensorflow.compat.v1 as tf

FEATURES = 4
VARIANTS = ('ok', 'input_no_params', 'params_batch_size', 'plain_run_config', 'metrics_dict', 'metrics_int',
            'metric_dropped', 'unbatched_eval', 'dynamic_batch', 'crash', 'eval_metric_ops_spec', 'premade',
            'own_use_tpu', 'iterator_input', 'iterator_input_v2', 'export_in_model_dir', 'predictions_one_by_one',
            'plain_iterator_input', 'reads_model_dir', 'predictions_counted', 'premade_iterator_input',
            'polls_checkpoints', 'background_sleeps', 'pops_params')


def data(count=64):
  rng = np.random.RandomState(0)
  x = rng.rand(count, FEATURES).astype(np.float32)
  return x, (x.sum(axis=1) > FEATURES / 2.0).astype(np.int32)


def make_input_fn(variant, training):
  x, y = data()

  def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
    if training:
      dataset = dataset.repeat()
    if variant == 'unbatched_eval' and not training:
      return dataset
    dataset = dataset.batch(params['batch_size'], drop_remainder=variant != 'dynamic_batch')
    if variant.startswith('iterator_input'):  # an iterator's tensors, which PER_HOST_V1 input takes
      return tf.data.make_one_shot_iterator(dataset).get_next()
    return dataset

  if variant == 'input_no_params':
    return lambda: input_fn({'batch_size': 16})
  return input_fn


def predict_input_fn(params):
  x, _ = data(10)
  return tf.data.Dataset.from_tensor_slices({'x': x}).batch(params['batch_size'])


def model_fn(features, labels, mode, params):
  variant = params['variant']
  if variant == 'pops_params':  # takes its settings out of params, as Estimator hands each call a copy of its own
    assert params.pop('units') == 2
  logits = tf.layers.dense(features['x'], 2)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.tpu.TPUEstimatorSpec(mode, predictions={'class': tf.argmax(logits, 1)})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.train.GradientDescentOptimizer(0.1)
  # own_use_tpu: the program's own --use_tpu decides, as BERT's model_fn_builder(use_tpu=FLAGS.use_tpu) does
  if params.get('own_use_tpu', params['use_tpu']):
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, tf.train.get_global_step())

  def metric_fn(labels, logits, *unused):
    return {'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))}

  if variant == 'metric_dropped' and not params['use_tpu']:  # the CPU branch keeps a metric the TPU one lost
    metrics = metric_fn(labels, logits)
    metrics['auc'] = tf.metrics.auc(labels, tf.nn.softmax(logits)[:, 1])
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)
  if variant == 'eval_metric_ops_spec':
    return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                             eval_metric_ops=metric_fn(labels, logits))
  tensors = [labels, logits]
  if variant == 'metrics_dict':
    tensors.append(features)  # a dict among the tensors
  if variant == 'metrics_int':
    tensors.append(3)
  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, tensors))


def premade(args):
  """A premade estimator with train_and_evaluate and input_fns without params."""
  x, y = data()
  estimator = tf.estimator.LinearClassifier([tf.feature_column.numeric_column('x', shape=[FEATURES])],
                                            config=tf.estimator.RunConfig(model_dir=args.model_dir))
  train = lambda: tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat().batch(16)
  evaluate = lambda: tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(16)
  tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(train, max_steps=args.train_steps),
                                  tf.estimator.EvalSpec(evaluate, steps=None, throttle_secs=0))


def premade_iterator_input(args):
  """A premade estimator trained from an input_fn that returns a one-shot iterator's tensors, batched at 16."""
  x, y = data()
  estimator = tf.estimator.LinearClassifier([tf.feature_column.numeric_column('x', shape=[FEATURES])],
                                            config=tf.estimator.RunConfig(model_dir=args.model_dir))

  def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat()
    return tf.data.make_one_shot_iterator(dataset.batch(16, drop_remainder=True)).get_next()

  estimator.train(input_fn, max_steps=args.train_steps)


def plain_iterator_input(args):
  """A plain Estimator (not yet ported) whose input_fn(params) returns an iterator's tensors, batched at 16."""
  def plain_model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features['x'], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

  x, y = data()

  def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat()
    return tf.data.make_one_shot_iterator(dataset.batch(params.get('batch_size', 16), drop_remainder=True)).get_next()

  estimator = tf.estimator.Estimator(plain_model_fn, config=tf.estimator.RunConfig(model_dir=args.model_dir))
  estimator.train(input_fn, max_steps=args.train_steps)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--variant', default='ok', choices=VARIANTS)
  parser.add_argument('--model_dir', default='model')
  parser.add_argument('--train_steps', type=int, default=50)
  parser.add_argument('--use_tpu', default='false', choices=('true', 'false'))
  args = parser.parse_args()
  use_tpu = args.use_tpu == 'true'
  variant = args.variant
  if variant == 'premade':
    return premade(args)
  if variant == 'plain_iterator_input':
    return plain_iterator_input(args)
  if variant == 'premade_iterator_input':
    return premade_iterator_input(args)
  params = {'variant': variant}
  if variant == 'params_batch_size':
    params['batch_size'] = 16
  if variant == 'own_use_tpu':
    params['own_use_tpu'] = use_tpu
  if variant == 'pops_params':
    params['units'] = 2
  pipeline = tf.estimator.tpu.InputPipelineConfig
  config = tf.estimator.tpu.RunConfig(model_dir=args.model_dir, tpu_config=tf.estimator.tpu.TPUConfig(
      iterations_per_loop=2, per_host_input_for_training=pipeline.PER_HOST_V1 if variant == 'iterator_input' else
      pipeline.PER_HOST_V2))
  if variant == 'plain_run_config':
    config = tf.estimator.RunConfig(model_dir=args.model_dir)
  estimator = tf.estimator.tpu.TPUEstimator(model_fn, config=config, params=params, use_tpu=use_tpu,
                                            train_batch_size=16, eval_batch_size=16, predict_batch_size=8)
  if variant == 'background_sleeps':  # a library thread that polls slowly, beside one evaluation delay of the program
    threading.Thread(target=lambda: [time.sleep(30) for _ in range(3)], daemon=True).start()
  estimator.train(make_input_fn(variant, training=True), max_steps=args.train_steps)
  if variant == 'background_sleeps':
    time.sleep(5)
  if variant == 'crash':
    with open(os.path.join(args.model_dir, 'vocabulary.txt')) as f:  # never written
      f.read()
  if variant == 'polls_checkpoints':  # as ALBERT's run_classifier waits for each checkpoint its training writes
    while not os.path.exists(os.path.join(args.model_dir, 'model.ckpt-1000.index')):
      time.sleep(60)
  if variant == 'reads_model_dir':  # as XLNet's run_classifier lists its checkpoints after training
    print(sorted(name for name in os.listdir(args.model_dir) if name.startswith('model.ckpt')))
  print(estimator.evaluate(make_input_fn(variant, training=False), steps=4))
  if variant == 'predictions_one_by_one':  # reads five of the ten predictions, one next() at a time
    predictions = estimator.predict(predict_input_fn)
    for _ in range(5):
      print(next(predictions)['class'])
  elif variant == 'predictions_counted':  # compares its predictions with its ten labels, as a log loss would
    classes = [p['class'] for p in estimator.predict(predict_input_fn)]
    if len(classes) != 10:
      raise ValueError('Found input variables with inconsistent numbers of samples: [10, %d]' % len(classes))
  else:
    print([p['class'] for p in estimator.predict(predict_input_fn)])
  if variant == 'export_in_model_dir':
    # As train_and_evaluate's exporters do: into model_dir/export/NAME, where the program then looks.
    def serving_input_fn():
      x = tf.placeholder(tf.float32, [None, FEATURES])
      return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})

    export_base = os.path.join(estimator.model_dir, 'export', 'best')
    estimator.export_saved_model(export_base, serving_input_fn)
    print('exported', len(os.listdir(export_base)))


if __name__ == '__main__':
  main()
