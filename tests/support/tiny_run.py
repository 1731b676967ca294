"""Runs mnist_tpu.py (and mnist.py) in-process on tiny synthetic data: parsed into a private FlagValues, no subprocess.

In-process runs skip the TensorFlow import a subprocess pays for, so each mode takes a second or two.
"""
import math

import mnist
import mnist_tpu
from estimator_tpu import runner
from flags import mnist as mnist_flags
from flags import training
from support.programs import parse
from support.programs import parse_flags

TINY_STEPS = 30
# Training images the tiny data set keeps for validation (conftest.py's fixtures).
TINY_VALIDATION = 50
# iterations=10 with save_checkpoints_steps=15: checkpoints are adjusted to every 20 steps.
TINY_ARGS = ['--use_tpu=false', '--master=', '--validation_size=50', '--train_steps=%d' % TINY_STEPS,
             '--batch_size=16', '--iterations=10', '--save_checkpoints_steps=15', '--eval_batch_size=50']


def run(args):
  """mnist_tpu.py's --mode on TINY_ARGS + args (later flags win); returns what the mode returns."""
  return runner.run(parse(TINY_ARGS + args), mnist_tpu.ROUTE)


def default_learning_rates(fv, steps):
  """The default schedule written out: from --learning_rate down to 0 at --train_steps along half a cosine."""
  rate = training.learning_rate_args(fv)['learning_rate']
  return [rate * 0.5 * (1 + math.cos(math.pi * min(step, fv.train_steps) / fv.train_steps)) for step in steps]


def run_mnist(args):
  """mnist.py's --mode (the plain Estimator) on tiny settings + args; returns what the mode returns."""
  return runner.run(parse_flags(mnist_flags.define_flags, ['--validation_size=50', '--batch_size=16',
                                                                '--eval_batch_size=50'] + args), mnist.ROUTE)
