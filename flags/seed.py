"""Reproducible training: one seed for every random choice a run makes (docs/RUNNING.md, Reproducible runs)."""
from absl import flags


def define_seed_flag(fv=flags.FLAGS):
  flags.DEFINE_integer('seed', None, 'Seed for the initial weights, the shuffling of the training data and '
                       'dropout. Two CPU runs with the same seed and flags train identically. Default: a new seed '
                       'each run, logged and written into the results JSON so that the run can be repeated.',
                       lower_bound=0, flag_values=fv)
