"""The TPU readiness check: `mnist_tpu.py --check_tpu` checks, on this CPU, whether the run would work on a TPU.

The check reports the TPU flag rules itself (batch split, gs:// paths), one line each next to everything else it
finds, so the validators that enforce them while parsing step aside when it runs; it needs no TPU to be named.
"""
from absl import flags


def define_readiness_flags(fv=flags.FLAGS):
  flags.DEFINE_bool('check_tpu', False,
                    'Instead of training, check on this CPU that the run these flags describe would work on a Cloud '
                    'TPU with --num_shards cores (input shapes and dtypes, XLA compilation of the training step, '
                    'batch split, checkpoint cadence, eval coverage, gs:// paths, TPU reachability), print one line '
                    'per check and exit non-zero if any fails. Uses the TPU defaults whatever --use_tpu says; no '
                    'TPU needs to be named.', flag_values=fv)


def checking_tpu(fv):
  """True while parsing a --check_tpu command line (False where the flag is not defined)."""
  return 'check_tpu' in fv and bool(fv['check_tpu'].value)
