"""One seed per run: the initial weights, the shuffling of the training data and dropout all follow from it, so
that two CPU runs with the same seed and flags train identically (docs/RUNNING.md, Reproducible runs).

Every training run has a seed: --seed, or one picked here and logged, and written into the results JSON, so that
any run can be repeated. The seed becomes the graph-level seed (RunConfig.tf_random_seed, which Estimator sets on
every graph it builds); every random op -- the initialisers, Dataset.shuffle, dropout -- derives its own seed from
it and from its place in the graph, which is the same in every run of the same code.
"""
import random

import numpy as np
from absl import logging

from estimator_tpu.runtime import checkpoints

PICKED_SEEDS = 10 ** 6  # a picked seed is short enough to retype
_MAX_SEED = 2 ** 31 - 1
_STEP_STRIDE = 1000003  # a prime: different start steps of one seed give different graph seeds


def resolve(seed):
  """`seed`, or a new random one when it is None."""
  return seed if seed is not None else random.SystemRandom().randrange(PICKED_SEEDS)


def log_seed(seed, picked):
  if picked:
    logging.info('Seed %d, picked for this run (pass --seed=%d to repeat it).', seed, seed)
  else:
    logging.info('Seed %d (--seed).', seed)


def graph_seed(seed, start_step):
  """The graph-level seed of a training call that starts at global step `start_step` (None: unseeded).

  Estimator builds a new graph for every train() call and seeds it the same way, so with one fixed seed every call
  would replay the same shuffle order and dropout masks from the start: train_and_evaluate's second stretch would
  see the first stretch's batches again. Folding in the start step gives each call a stream of its own that is just
  as repeatable; a run from scratch (step 0) uses the seed itself.
  """
  if seed is None:
    return None
  return seed if start_step == 0 else (seed + start_step * _STEP_STRIDE) % _MAX_SEED


def seed_host_generators(seed):
  """Seeds the random generators outside the graph: Python's, NumPy's and, on TF 2.15, Keras'.

  On TF 2.15 the initialisers of `tf.compat.v1.layers` are Keras' stateless ones, and an unseeded one takes its
  seed from Keras' generator or from Python's `random`, not from the graph seed (keras/src/backend.py,
  RandomGenerator._create_seed); so the graph seed alone gave two runs different initial weights there. Keras'
  generator, once `tf.keras.utils.set_random_seed` has made one (mnist_keras.py does, and so does any Keras program
  run earlier in the same process), is used instead of Python's and keeps its state from call to call: seeding
  Python's alone then gave two runs of one seed different weights whenever a Keras run came first. So Keras' own
  setter resets it here where it exists (TF 2.15; TF 1.15's Keras has no such generator).
  """
  random.seed(seed)
  np.random.seed(seed)
  keras_setter = _keras_set_random_seed()
  if keras_setter is not None:
    keras_setter(seed)


def _keras_set_random_seed():
  """tf.keras.utils.set_random_seed on TF 2.15; None on TF 1.15 (tf.compat.v1.keras.utils has none on either)."""
  import tensorflow as tf_top  # the TF 2 namespace: only it carries the setter
  utils = getattr(getattr(tf_top, 'keras', None), 'utils', None)
  return getattr(utils, 'set_random_seed', None)


def training_graph_seed(seed, model_dir):
  """graph_seed for a training call that continues from `model_dir`'s latest checkpoint (step 0 if none)."""
  latest = checkpoints.latest_checkpoint(model_dir)
  return graph_seed(seed, checkpoints.checkpoint_step(latest) if latest else 0)
