"""Runs mnist_tpu.py in-process on tiny synthetic data: parsed into a private FlagValues, no subprocess.

In-process runs skip the TensorFlow import a subprocess pays for, so each mode takes a second or two.
"""
from absl import flags

import mnist_tpu
from flags import mnist_tpu as mnist_tpu_flags

TINY_STEPS = 30
# iterations=10 with save_checkpoints_steps=15: checkpoints are adjusted to every 20 steps.
TINY_ARGS = ['--use_tpu=false', '--master=', '--validation_size=50', '--train_steps=%d' % TINY_STEPS,
             '--batch_size=16', '--iterations=10', '--save_checkpoints_steps=15', '--eval_batch_size=50']


def parse_flags(args):
  fv = flags.FlagValues()
  mnist_tpu_flags.define_mnist_tpu_flags(fv)
  fv(['mnist_tpu.py'] + args)
  return fv


def run(args):
  """mnist_tpu.run on TINY_ARGS + args (later flags win); returns what the mode returns."""
  return mnist_tpu.run(parse_flags(TINY_ARGS + args))
