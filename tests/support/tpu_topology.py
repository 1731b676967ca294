"""Simulated Cloud TPU topologies for the tests: TensorFlow's real TPUEstimator with the project's RunConfig.

estimator_tpu/readiness/topology.py does the simulating (TensorFlow's own metadata parser, context, validation
and input pipeline); this module adds what the tests need around it: the slices, an estimator configured as
mnist_tpu.py configures it, readiness plans of such estimators, and reading back what an input_fn call would feed.
"""
import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.porting import readiness
from estimator_tpu.porting.readiness import topology
from estimator_tpu.tpu import accelerator_types
from estimator_tpu.tpu import model_fn as model_fn_lib
from estimator_tpu.tpu import run_config

# 1 host x 8 cores, 4 hosts x 8 cores, 1 host x 4 cores.
SLICES = ('v3-8', 'v3-32', 'v4-8')
TRAIN, EVAL, PREDICT = topology.TRAIN, topology.EVAL, topology.PREDICT


def project_model_fn():
  return model_fn_lib.model_fn_builder(learning_rate=1e-3, decay_steps=100, decay_rate=0.5)


def simulate(tpu_type, train_batch, eval_batch, evaluates_on_tpu=True, eval_on_tpu=True,
             master=topology.SIMULATED_NODE_MASTER):
  """TensorFlow's TPUEstimator on `tpu_type`, configured as mnist_tpu.build_estimator does (num_shards=None).

  `evaluates_on_tpu` is what build_run_config is told (SLICED evaluation input when true); `eval_on_tpu` is the
  estimator's own flag. mnist_tpu.py passes use_tpu and --eval_on_tpu for both.
  """
  config = run_config.build_run_config(model_dir='/tmp/unused', iterations_per_loop=10, num_shards=None,
                                       save_checkpoints_steps=10, master=master, evaluates_on_tpu=evaluates_on_tpu)
  return topology.simulate(config, accelerator_types.parse_tpu_type(tpu_type), project_model_fn(), train_batch,
                           eval_batch, eval_batch, eval_on_tpu=eval_on_tpu)


def plan(num_shards=2, train_batch_size=16, eval_batch_size=None, predict_batch_size=None, iterations_per_loop=1,
         save_checkpoints_steps=None, master=None, params=None, eval_on_tpu=True, host_call_every_n_steps=1,
         cores_per_host=accelerator_types.DEFAULT_CORES_PER_HOST, **plan_args):
  """A readiness.TpuPlan of a TPUEstimator built as a ported program builds it (tpu/run_config.py), on
  `num_shards` cores in hosts of `cores_per_host`; `plan_args` are TpuPlan's own (tpu_name, eval_examples, ...).
  The estimator's model_fn is never called: the check is given the model_fn it checks."""
  config = run_config.build_run_config(
      model_dir=topology.scratch_model_dir(), iterations_per_loop=iterations_per_loop, num_shards=num_shards,
      save_checkpoints_steps=save_checkpoints_steps, master=master, evaluates_on_tpu=eval_on_tpu,
      host_call_every_n_steps=host_call_every_n_steps)
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=project_model_fn(), config=config, params=params, use_tpu=True, train_batch_size=train_batch_size,
      eval_batch_size=eval_batch_size, predict_batch_size=predict_batch_size, eval_on_tpu=eval_on_tpu)
  shape = accelerator_types.shape_from_cores(num_shards, cores_per_host)
  return readiness.TpuPlan(estimator, shape, requested_checkpoint_steps=save_checkpoints_steps, **plan_args)


def read_batches(input_fn, params, max_batches=None):
  """The (features, labels) numpy batches input_fn(params) yields, to its end or `max_batches`; on this CPU."""
  batches = []
  with tf.Graph().as_default():
    element = tf.data.make_one_shot_iterator(input_fn(dict(params))).get_next()
    with tf.Session() as session:
      while max_batches is None or len(batches) < max_batches:
        try:
          batches.append(session.run(element))
        except tf.errors.OutOfRangeError:
          break
  return batches


def image_keys(images):
  """One hashable key per image (float32 [n, 784] from input_fn, or uint8 [n, 28, 28] from the split)."""
  return [row.astype(np.uint8).tobytes() for row in np.asarray(images).reshape(len(images), -1)]


def features_of(batch):
  return batch[0] if isinstance(batch, tuple) else batch


def images_and_weights(batches):
  """(image keys, weights) of all rows of eval batches, in order."""
  keys, weights = [], []
  for batch in batches:
    features = features_of(batch)
    keys += image_keys(features[model.IMAGE_KEY])
    weights += features[model.WEIGHT_KEY].tolist()
  return keys, weights
