"""--verify's readiness check (proof/worker.py, check (e)) covers the TPU path of evaluation and prediction, not
only training: a port whose eval_metrics hand metric_fn a Python int runs on the CPU (TPUEstimator(use_tpu=False)
calls metric_fn itself) but fails on a TPU, in TensorFlow's outfeed; the check says so, and passes the same port
with tensors only. The port is a module written into tmp_path (each test its own module name)."""
import textwrap

from estimator_tpu.porting.proof import worker

PORT = '''
import numpy as np
import tensorflow.compat.v1 as tf


def input_fn(params):
  x = np.random.RandomState(0).rand(256, 4).astype(np.float32)
  y = (x.sum(axis=1) > 2).astype(np.int32)
  return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat().batch(params['batch_size'], drop_remainder=True)


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features['x'], 2)
  if mode == tf.estimator.ModeKeys.PREDICT:
    return tf.estimator.tpu.TPUEstimatorSpec(mode, predictions={'class': tf.argmax(logits, 1)})
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  optimizer = tf.train.GradientDescentOptimizer(0.1)
  if params['use_tpu']:
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, tf.train.get_global_step())

  def metric_fn(labels, logits, *unused):
    return {'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))}

  return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                           eval_metrics=(metric_fn, [labels, logits]%s))
'''


def readiness_of(tmp_path, name, extra_tensors):
  path = tmp_path / ('%s.py' % name)
  path.write_text(textwrap.dedent(PORT % extra_tensors))
  request = {'model_fn': '%s:model_fn' % path, 'train_input_fn': '%s:input_fn' % path,
             'eval_input_fn': '%s:input_fn' % path, 'params': {}, 'batch_size': 2, 'eval_batch_size': 2,
             'data_dir': str(tmp_path), 'padded': False}
  return worker.readiness(request)


def test_eval_metrics_a_tpu_refuses_fail_the_proof(tmp_path):
  result = readiness_of(tmp_path, 'port_with_int_metric', ' + [3]')
  assert result['status'] == 1, result
  assert len(result['failures']) == 1, result
  failure = result['failures'][0]
  assert failure.startswith('FAIL evaluate (rule 14)'), failure
  assert "AttributeError: 'int' object has no attribute 'dtype'" in failure
  assert 'eval_metrics[1][2] is an int, not a tensor' in failure


def test_a_port_passes_training_evaluation_and_prediction(tmp_path):
  result = readiness_of(tmp_path, 'port_with_tensors_only', '')
  assert result['status'] == 0, result
  assert result['failures'] == []
