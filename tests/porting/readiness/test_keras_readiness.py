"""The Keras route's readiness check (TF 2.x): the project's model passes; each broken variant fails with its line.

Broken variants use a one-layer Keras model (compiles in about a second) so that every failure is the variant's:
an op XLA rejects, a dynamic batch, float64, a batch that does not split, variables outside the strategy scope or
untracked by Keras, summaries off the execution grid, and bfloat16 that compiles.
"""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.porting.readiness import check_results
from support.programs import failed_checks as failures
from estimator_tpu.tpu import accelerator_types

IS_TF2 = int(tf.__version__.split('.')[0]) >= 2
pytestmark = pytest.mark.skipif(not IS_TF2, reason='the Keras route is TF 2.x only; TF %s' % tf.__version__)
if IS_TF2:
  import tensorflow as tf2  # pylint: disable=g-import-not-at-top
  from estimator_tpu.keras import checkpoints as keras_checkpoints  # pylint: disable=g-import-not-at-top
  from estimator_tpu.porting.readiness import keras_checks  # pylint: disable=g-import-not-at-top

EXAMPLES, BATCH = 64, 16


def tiny_model_builder(layer=None, in_scope=True, dtype=None):
  """build_model(strategy): Dense(10) on the images, after `layer` (the variant under test) if given."""

  def build(strategy):
    def make():
      images = tf2.keras.Input(shape=(model.NUM_PIXELS,), name=model.IMAGE_KEY)
      net = layer(images) if layer is not None else images
      logits = tf2.keras.layers.Dense(10, dtype=dtype)(net)
      keras = tf2.keras.Model(images, logits)
      keras.compile(optimizer=tf2.keras.optimizers.Adam(1e-3),
                    loss=tf2.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                    weighted_metrics=['accuracy'], steps_per_execution=4)
      return keras
    if not in_scope:
      return make()
    with strategy.scope():
      return make()

  return build


def tiny_dataset(batch=BATCH, drop_remainder=True, image_dtype=np.float32, weights=False):
  rng = np.random.RandomState(0)
  images = (rng.rand(EXAMPLES, model.NUM_PIXELS) * 255).astype(image_dtype)
  labels = rng.randint(0, 10, EXAMPLES).astype(np.int32)
  parts = ({model.IMAGE_KEY: images}, labels) + ((np.ones(EXAMPLES, np.float32),) if weights else ())
  return tf2.data.Dataset.from_tensor_slices(parts).repeat().batch(batch, drop_remainder=drop_remainder)


def tiny_plan(tpu_type='v5litepod-4', batch=BATCH, **overrides):
  values = dict(eval_batch_size=BATCH, steps_per_execution=4, save_checkpoints_steps=8, eval_examples=EXAMPLES,
                eval_steps=EXAMPLES // BATCH, eval_padded=True)
  values.update(overrides)
  return keras_checks.KerasPlan(accelerator_types.parse_tpu_type(tpu_type), batch, **values)


def callbacks_every(summary_every, model_dir):
  def callbacks(keras):
    manager = keras_checkpoints.build_checkpoint_manager(keras, model_dir)
    return [keras_checkpoints.SaveCheckpoints(manager, 8),
            tf2.keras.callbacks.TensorBoard(log_dir=model_dir, update_freq=summary_every)]
  return callbacks


def run_check(tmp_path, build=None, train=None, plan=None, summary_every=4):
  checks = keras_checks.check_keras_readiness(
      build or tiny_model_builder(), train or tiny_dataset(), plan or tiny_plan(),
      eval_dataset=tiny_dataset(weights=True), predict_input=np.zeros((BATCH, model.NUM_PIXELS), np.float32),
      callbacks=callbacks_every(summary_every, str(tmp_path)), probe_timeout_secs=2.0)
  return {check.name: check for check in checks}


def test_the_tiny_baseline_passes(tmp_path):
  checks = run_check(tmp_path)
  assert failures(checks) == []
  assert 'TPUStrategy would run 4 replicas' in checks['topology'].message
  assert 'only with the PJRT runtime, tpu-vm-tf-2.15.1-pjrt' in checks['tpu_runtime'].message
  assert "train features['image'] [16, 784], train labels [16]" in checks['dataset_shapes'].message
  assert 'optimizer step 0 -> 1' in checks['keras_train_step'].message
  assert 'a checkpoint every 8 steps = every 2 executions of 4 steps' in checks['checkpoint_cadence'].message
  assert "the optimizer (" in checks['keras_checkpoint'].message


def test_py_function_in_the_model_is_an_op_xla_rejects(tmp_path):
  def python_side(images):
    result = tf2.numpy_function(lambda x: x, [images], tf2.float32, name='python_side')
    result.set_shape(images.shape)
    return result

  checks = run_check(tmp_path, tiny_model_builder(tf2.keras.layers.Lambda(python_side)))
  assert 'keras_train_step' in failures(checks)
  assert "XLA cannot compile 1 op of one replica's training step: PyFunc" in checks['keras_train_step'].message
  assert 'do that work in the tf.data input' in checks['keras_train_step'].fix
  assert checks['step_dtypes'].status == check_results.SKIP


def test_a_dynamic_batch_is_a_failed_shape_check(tmp_path):
  checks = run_check(tmp_path, train=tiny_dataset(drop_remainder=False))
  assert failures(checks) == ['dataset_shapes']
  assert "train features['image'] has shape [?, 784]" in checks['dataset_shapes'].message
  assert 'dynamic padder' in checks['dataset_shapes'].message
  assert 'drop_remainder=True' in checks['dataset_shapes'].fix


def test_float64_input_and_float64_layers(tmp_path):
  checks = run_check(tmp_path, tiny_model_builder(dtype='float64'), train=tiny_dataset(image_dtype=np.float64))
  assert failures(checks) == ['dataset_dtypes', 'step_dtypes']
  assert "train features['image'] is float64" in checks['dataset_dtypes'].message
  assert 'compute in float64' in checks['step_dtypes'].message


def test_a_batch_that_does_not_split_over_the_replicas(tmp_path):
  checks = run_check(tmp_path, train=tiny_dataset(batch=18), plan=tiny_plan('v6e-8', batch=18))
  assert failures(checks) == ['batch_split']
  assert checks['batch_split'].message.startswith('train batch 18 not divisible by num_replicas_in_sync=8: each '
                                                  'of the 8 replicas')
  assert checks['batch_split'].fix == 'use multiples of 8, e.g. train batch 16.'


def test_variables_created_outside_the_strategy_scope(tmp_path):
  checks = run_check(tmp_path, tiny_model_builder(in_scope=False))
  assert failures(checks) == ['strategy_scope']
  assert 'created outside strategy.scope()' in checks['strategy_scope'].message


def test_variables_keras_does_not_track(tmp_path):
  class Untracked(object):
    """A variable made outside any layer, used by a Lambda: Keras does not track it."""

    def __init__(self):
      self.scale = None

    def __call__(self, images):
      if self.scale is None:
        self.scale = tf2.Variable(1.0, name='loose_scale')
      return tf2.keras.layers.Lambda(lambda x: x * self.scale)(images)

  checks = run_check(tmp_path, tiny_model_builder(Untracked()))
  assert 'keras_layers' in failures(checks)
  assert 'loose_scale' in checks['keras_layers'].message or 'not tracked' in checks['keras_layers'].message


def test_summaries_off_the_execution_grid(tmp_path):
  checks = run_check(tmp_path, summary_every=6)
  assert failures(checks) == ['summary_cadence']
  assert 'summaries land every 12 steps, not every 6' in checks['summary_cadence'].message


def test_bfloat16_steps_compile_with_xla(tmp_path):
  policy = tf2.keras.mixed_precision.Policy('mixed_bfloat16')
  checks = run_check(tmp_path, tiny_model_builder(tf2.keras.layers.Dense(32, dtype=policy), dtype='float32'),
                     plan=tiny_plan(precision='bfloat16'))
  assert failures(checks) == []
  assert 'computes in bfloat16' in checks['precision'].message
  assert 'outputs float32' in checks['keras_predict_step'].message
