"""Fixture for the port report (predict_branch_export): a TPUEstimator program, as Google's TPU ResNet is, whose
PREDICT branch returns a plain EstimatorSpec with scaffold= for the SavedModel export. The program trains,
evaluates and exports, and never predicts: exporting runs model_fn on the CPU, where an EstimatorSpec and its
scaffold are what Estimator takes. Nothing is required. Runs under TensorFlow 1.15 and 2.15 (use_tpu=False).
"""
import numpy as np
import tensorflow.compat.v1 as tf


def metric_fn(labels, logits):
  return {'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))}


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['image'], 4)
  if mode == tf.estimator.ModeKeys.PREDICT:
    scaffold = tf.train.Scaffold(saver=tf.train.Saver(max_to_keep=1))
    predictions = {'classes': tf.argmax(logits, 1)}
    return tf.estimator.EstimatorSpec(mode, predictions=predictions, scaffold=scaffold, export_outputs={
        'classify': tf.estimator.export.PredictOutput(predictions)})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  if mode == tf.estimator.ModeKeys.EVAL:
    return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
  optimizer = tf.train.GradientDescentOptimizer(0.1)
  if params['use_tpu']:
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, tf.train.get_global_step())
  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn(params):
  rng = np.random.RandomState(0)
  dataset = tf.data.Dataset.from_tensor_slices(({'image': rng.uniform(size=(64, 8)).astype(np.float32)},
                                                rng.randint(0, 4, size=64).astype(np.int32)))
  return dataset.repeat().batch(params['batch_size'], drop_remainder=True)


def serving_input_fn():
  image = tf.placeholder(tf.float32, [None, 8])
  return tf.estimator.export.ServingInputReceiver({'image': image}, {'image': image})


def main(use_tpu=False):
  config = tf.estimator.tpu.RunConfig(
      master='', model_dir='model', tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=4))
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, use_tpu=use_tpu, train_batch_size=16, eval_batch_size=16,
      export_to_tpu=False)
  estimator.train(input_fn, max_steps=4)
  print(estimator.evaluate(input_fn, steps=2))
  estimator.export_saved_model('export', serving_input_fn)


if __name__ == '__main__':
  main()
