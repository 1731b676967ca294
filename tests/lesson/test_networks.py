"""--model on data of any shape (model.network, keras/model.py): each network defined once serves the three routes
(TPU rule 10), follows the TPU rules under TPUEstimator, and the programs train, export and pass the readiness
check on tiny data that is not MNIST-shaped."""
import json
import os

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

import mnist
import mnist_keras
import mnist_tpu
from estimator_tpu import model
from estimator_tpu import runner
from estimator_tpu import serving
from estimator_tpu.data import records
from estimator_tpu.data import spec as data_spec
from estimator_tpu.data import synthetic
from estimator_tpu.estimator import model_fn as estimator_model_fn
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import model_fn as tpu_model_fn
from flags import mnist as mnist_flags
from flags import mnist_keras as mnist_keras_flags
from support.programs import parse
from support.programs import parse_flags

TF2 = not tf.__version__.startswith('1.')
requires_tf2 = pytest.mark.skipif(not TF2, reason='the Keras route is TF 2.x only; TF %s'
                                  % tf.__version__)
MODE = tf.estimator.ModeKeys
COLOUR = data_spec.DataSpec('colour', 32, 32, 3, tuple('abcdef'), {})
SMALL = data_spec.DataSpec('small', 8, 8, 1, tuple('0123456789'), {})
TINY_ARGS = ['--validation_size=20', '--train_steps=40', '--batch_size=16', '--eval_batch_size=20',
             '--save_checkpoints_steps=40', '--num_predictions=4']


@pytest.fixture(scope='module')
def colour_data_dir(tmp_path_factory):
  """A CIFAR-10-layout dataset, 32x32x3 in 10 classes: 200 training images (20 for validation), 40 test."""
  root = tmp_path_factory.mktemp('colour')
  synthetic.write_cifar10_dir(str(root / 'cifar'), per_batch=40, test_count=40)
  from estimator_tpu.data import prepare  # pylint: disable=g-import-not-at-top
  prepare.prepare_data(str(root / 'data'), str(root / 'cifar'), validation_size=20)
  return str(root / 'data')


def train_graph(network, spec, precision=model.FLOAT32, batch=4):
  """The TPU route's TRAIN graph of `network` for `spec` (use_tpu: CrossShardOptimizer included)."""
  graph = tf.Graph()
  with graph.as_default():
    tf.train.create_global_step()
    fn = tpu_model_fn.model_fn_builder(1e-3, 100, 0.5, precision=precision,
                                       network=model.network(network, spec))
    estimator_spec = fn({model.IMAGE_KEY: tf.zeros([batch, spec.num_pixels])}, tf.zeros([batch], tf.int32),
                        MODE.TRAIN, params={'use_tpu': True, 'batch_size': batch})
  return graph, estimator_spec


@pytest.mark.parametrize('name', model.NETWORKS)
def test_logits_have_the_classes_of_the_data_and_static_shapes(name):
  with tf.Graph().as_default():
    logits = model.network(name, COLOUR)(tf.zeros([5, COLOUR.num_pixels]), training=True)
  assert logits.shape.as_list() == [5, 6] and logits.dtype == tf.float32


@pytest.mark.parametrize('name', model.NETWORKS)
def test_the_tpu_step_has_no_placeholder_and_all_reduces_its_gradients(name):
  graph, _ = train_graph(name, COLOUR)
  types = [op.type for op in graph.get_operations()]
  assert 'Placeholder' not in types  # a Keras Input inside the TPU computation would be one, of batch None
  assert 'CrossReplicaSum' in types  # TPU rule 6: CrossShardOptimizer


def test_vgg16_is_keras_application_with_softmax_taken_off():
  with tf.Graph().as_default():
    images = tf.random.uniform([3, COLOUR.num_pixels], 0, 255)
    logits = model.network(model.VGG16, COLOUR)(images, training=False)
    names = {v.op.name.split('/')[0] for v in tf.trainable_variables()}
    assert {'block1_conv1', 'block5_conv3', 'fc1', 'fc2', 'predictions'} <= names
    assert logits.op.type != 'Softmax'
    with tf.Session() as session:
      session.run(tf.global_variables_initializer())
      values = session.run(logits)
  assert not np.allclose(values.sum(axis=1), 1.0)  # logits, not probabilities


def test_vgg16_refuses_images_smaller_than_32_pixels():
  with pytest.raises(UserError, match='--model=vgg16 takes images of at least 32x32 pixels; small: 8x8x1'):
    model.network(model.VGG16, SMALL)


@pytest.mark.parametrize('name', [model.CNN, model.DENSE])
def test_bfloat16_computes_in_bfloat16_with_float32_variables(name):
  graph, estimator_spec = train_graph(name, COLOUR, model.BFLOAT16)
  assert {op.outputs[0].dtype for op in graph.get_operations() if op.type == 'MatMul'} == {tf.bfloat16}
  assert estimator_spec.loss.dtype == tf.float32
  with graph.as_default():
    assert {v.dtype.base_dtype for v in tf.global_variables()} == {tf.float32, tf.int64}


def test_vgg16_in_bfloat16_through_keras_mixed_policy():
  if not TF2:
    with pytest.raises(UserError, match='mixed_bfloat16 policy, which TensorFlow 1.15.5 cannot set'):
      train_graph(model.VGG16, COLOUR, model.BFLOAT16)
    return
  graph, estimator_spec = train_graph(model.VGG16, COLOUR, model.BFLOAT16)
  assert {op.outputs[0].dtype for op in graph.get_operations() if op.type == 'Conv2D'} == {tf.bfloat16}
  assert estimator_spec.loss.dtype == tf.float32
  with graph.as_default():
    assert {v.dtype.base_dtype for v in tf.global_variables()} == {tf.float32, tf.int64}
  from tensorflow.compat import v2 as tf_v2  # pylint: disable=g-import-not-at-top
  assert tf_v2.keras.mixed_precision.global_policy().name == 'float32'  # restored


@pytest.mark.parametrize('name', model.NETWORKS)
def test_estimator_and_tpu_routes_build_the_same_variables(name):
  shapes = []
  for builder in (estimator_model_fn.model_fn_builder(1e-3, 100, 0.5, network=model.network(name, COLOUR)),
                  tpu_model_fn.model_fn_builder(1e-3, 100, 0.5, network=model.network(name, COLOUR))):
    shapes.append(model.variable_shapes(builder, COLOUR))
  assert shapes[0] == shapes[1]
  assert any(shape[-1:] == [6] for shape in shapes[0].values())  # the output layer has the data's classes


@requires_tf2
@pytest.mark.parametrize('name', model.NETWORKS)
def test_keras_route_has_the_variables_of_the_estimator_routes(name):
  with tf.Graph().as_default():
    model.network(name, COLOUR)(tf.zeros([2, COLOUR.num_pixels]), training=True)
    graph_shapes = sorted(v.shape.as_list() for v in tf.trainable_variables())
  keras = mnist_keras.keras_model.build_keras_network(name, COLOUR)
  assert sorted(v.shape.as_list() for v in keras.trainable_variables) == graph_shapes
  assert keras(np.zeros((2, COLOUR.num_pixels), np.float32)).shape == (2, 6)


def test_serving_signature_takes_the_images_of_the_data(colour_data_dir):
  with tf.Graph().as_default():
    receiver = serving.receiver_fn(colour_data_dir)()
    assert receiver.receiver_tensors[serving.IMAGES_INPUT].shape.as_list() == [None, 32, 32, 3]
  with tf.Graph().as_default():
    receiver = serving.serving_input_receiver_fn()
    assert receiver.receiver_tensors[serving.IMAGES_INPUT].shape.as_list() == [None, 28, 28]


def accuracy_of(model_dir, program):
  with open(os.path.join(model_dir, '%s_results.json' % program)) as f:
    return json.load(f)['eval']['accuracy']


def test_estimator_routes_train_the_dense_network_on_colour_images(tmp_path, colour_data_dir):
  common = TINY_ARGS + ['--data_dir=%s' % colour_data_dir, '--model=dense', '--seed=1']
  runner.run(parse_flags(mnist_flags.define_flags, common + ['--model_dir=%s' % (tmp_path / 'a')]), mnist.ROUTE)
  runner.run(parse(common + ['--use_tpu=false', '--master=', '--model_dir=%s' % (tmp_path / 'b')]), mnist_tpu.ROUTE)
  # Ten classes, separable by design: chance is 10%.
  assert accuracy_of(str(tmp_path / 'a'), 'mnist') >= 0.6
  assert accuracy_of(str(tmp_path / 'b'), 'mnist_tpu') >= 0.6
  exported = runner.run(parse(common + ['--use_tpu=false', '--master=', '--mode=export',
                                        '--model_dir=%s' % (tmp_path / 'b')]), mnist_tpu.ROUTE)
  images = records.read_split(records.split_path(colour_data_dir, 'test'))[0][:3]
  with tf.Graph().as_default(), tf.Session() as session:
    meta = tf.saved_model.loader.load(session, ['serve'], exported)
    signature = meta.signature_def['serving_default']
    outputs = session.run(signature.outputs['probabilities'].name,
                          {signature.inputs['images'].name: images.astype(np.float32)})
  assert outputs.shape == (3, 10)


def test_a_checkpoint_of_another_network_is_refused(tmp_path, colour_data_dir):
  common = TINY_ARGS + ['--data_dir=%s' % colour_data_dir, '--use_tpu=false', '--master=',
                        '--model_dir=%s' % tmp_path, '--train_steps=2']
  runner.run(parse(common + ['--model=dense', '--mode=train']), mnist_tpu.ROUTE)
  with pytest.raises(UserError, match='checkpoint'):
    runner.run(parse(common + ['--model=cnn', '--mode=evaluate']), mnist_tpu.ROUTE)


@requires_tf2
def test_keras_route_trains_the_dense_network_on_colour_images(tmp_path, colour_data_dir):
  mnist_keras.run(parse_flags(mnist_keras_flags.define_flags, TINY_ARGS + [
      '--data_dir=%s' % colour_data_dir, '--model=dense', '--seed=1', '--use_tpu=false', '--master=',
      '--model_dir=%s' % tmp_path]))
  with open(os.path.join(str(tmp_path), mnist_keras.RESULTS_FILE)) as f:
    assert json.load(f)['eval']['accuracy'] >= 0.6


def test_vgg16_passes_the_readiness_check_on_cifar10_layout(colour_data_dir, capsys):
  precision = model.BFLOAT16 if TF2 else model.FLOAT32
  status = runner.run(parse(['--mode=check_tpu', '--tpu_type=v3-8', '--data_dir=%s' % colour_data_dir,
                             '--model=vgg16', '--precision=%s' % precision, '--batch_size=64',
                             '--eval_batch_size=64']), mnist_tpu.ROUTE)
  output = capsys.readouterr().out
  assert status == 0, output
  assert 'FAIL' not in output
  assert 'PASS xla_compile' in output and "features['image'] [8, 3072]" in output
