"""--precision=bfloat16 (TPU rule 20): what the TPUEstimator route builds, and what this CPU's TensorFlow runs.

model.mnist_cnn computes under tf.tpu.bfloat16_scope(): the convolutions and matmuls in bfloat16, the variables
float32 (so checkpoints, the optimizer and warm starts are those of a float32 run), the logits and the loss float32.
"""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.tpu import model_fn as model_fn_lib
from support import tiny_run

TF1 = tf.__version__.startswith('1.')
MODE = tf.estimator.ModeKeys


def build_train_graph(precision, use_tpu=True):
  graph = tf.Graph()
  with graph.as_default():
    tf.train.create_global_step()
    fn = model_fn_lib.model_fn_builder(learning_rate=1e-3, decay_steps=100, decay_rate=0.5, precision=precision)
    spec = fn({model.IMAGE_KEY: tf.zeros([4, model.NUM_PIXELS])}, tf.zeros([4], tf.int32), MODE.TRAIN,
              params={'use_tpu': use_tpu, 'batch_size': 4})
  return graph, spec


def dtypes_of(graph, op_type):
  return {op.outputs[0].dtype for op in graph.get_operations() if op.type == op_type}


@pytest.mark.parametrize('use_tpu', [False, True])
def test_bfloat16_network_with_float32_variables_logits_and_loss(use_tpu):
  graph, spec = build_train_graph(model.BFLOAT16, use_tpu)
  assert dtypes_of(graph, 'Conv2D') == dtypes_of(graph, 'MatMul') == {tf.bfloat16}
  assert spec.loss.dtype == tf.float32
  with graph.as_default():
    variables = {v.op.name: v.dtype.base_dtype for v in tf.global_variables()}
  assert set(variables.values()) == {tf.float32, tf.int64}  # the weights, Adam's slots; the global step
  reference, _ = build_train_graph(model.FLOAT32, use_tpu)
  with reference.as_default():
    # The same variables by name and shape: a float32 checkpoint restores or warm-starts a bfloat16 run.
    assert sorted(variables) == sorted(v.op.name for v in tf.global_variables())
  assert dtypes_of(reference, 'Conv2D') == {tf.float32}


def test_bfloat16_predictions_are_float32():
  with tf.Graph().as_default():
    logits = model.mnist_cnn(tf.zeros([2, model.NUM_PIXELS]), training=False, precision=model.BFLOAT16)
    assert model.predictions(logits)['probabilities'].dtype == tf.float32


def bfloat16_convolution(device):
  """Runs one bfloat16 Conv2D, placed on `device` without soft placement; returns the device it ran on."""
  with tf.Graph().as_default():
    with tf.device(device):
      images = tf.Variable(np.ones([1, 8, 8, 1], np.float32))
      kernel = tf.Variable(np.ones([3, 3, 1, 2], np.float32))
      conv = tf.nn.conv2d(tf.cast(images, tf.bfloat16), tf.cast(kernel, tf.bfloat16), [1, 1, 1, 1], 'SAME')
    metadata = tf.RunMetadata()
    config = tf.ConfigProto(allow_soft_placement=False)
    with tf.Session(config=config) as session:
      session.run(tf.global_variables_initializer())
      session.run(conv, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=metadata)
  return [node.node_name for stats in metadata.step_stats.dev_stats for node in stats.node_stats
          if node.node_name == conv.op.name and stats.device]


@pytest.mark.skipif(not TF1, reason='TF %s has CPU bfloat16 convolutions; the message is TF 1.15\'s' % tf.__version__)
def test_tf1_has_no_cpu_bfloat16_convolution_and_says_so():
  with pytest.raises(tf.errors.InvalidArgumentError, match='Cannot assign a device for operation Conv2D: Could not '
                     'satisfy explicit device specification .*because no supported kernel for CPU devices'):
    bfloat16_convolution('/cpu:0')
  # Unpinned, TF 1.15's placer puts it on the XLA_CPU device it registers next to CPU:0, one op at a time.
  assert bfloat16_convolution(None)


@pytest.mark.skipif(TF1, reason='TF 1.15 has no CPU bfloat16 Conv2D kernel (see the TF 1.15 test)')
def test_tf2_convolves_in_bfloat16_on_the_cpu():
  assert bfloat16_convolution('/cpu:0')


def test_a_bfloat16_run_trains_and_evaluates_on_this_cpu(tmp_path, shared_data_dir):
  result = tiny_run.run(['--precision=bfloat16', '--data_dir=%s' % shared_data_dir, '--num_predictions=0',
                         '--model_dir=%s' % (tmp_path / 'model')])
  assert result['global_step'] == tiny_run.TINY_STEPS
  assert result['eval']['examples'] == 110
  assert np.isfinite(result['eval']['loss']) and result['eval']['accuracy'] > 0.5
