"""Simulated Cloud TPU topologies for the tests: TensorFlow's real TPUEstimator with the project's RunConfig.

estimator_tpu/readiness/topology.py does the simulating (TensorFlow's own metadata parser, context, validation
and input pipeline); this module adds what the tests need around it: the slices, an estimator configured as
mnist_tpu.py configures it, and reading back what an input_fn call would feed.
"""
import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu import model
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
