"""Flags of tools/local_cluster.py: the shape of the cluster to start on this machine, where to log, how long to wait."""
from absl import flags


def define_local_cluster_flags(fv=flags.FLAGS):
  flags.DEFINE_integer('workers', 1, 'Training workers besides the chief.', lower_bound=0, flag_values=fv)
  flags.DEFINE_integer('ps', 1, 'Parameter servers (at least 1 when there are workers).', lower_bound=0,
                       flag_values=fv)
  flags.DEFINE_bool('evaluator', True, 'Also start an evaluator task.', flag_values=fv)
  flags.DEFINE_string('task_log_dir', None, 'Where each task logs, to <task>.log. Default: a new directory under '
                      'the system temp dir. (--log_dir is absl\'s own flag.)', flag_values=fv)
  flags.DEFINE_float('timeout_secs', 0, 'Stop every task and fail if the run takes longer (0: no limit).',
                     lower_bound=0, flag_values=fv)
  flags.register_multi_flags_validator(
      ['workers', 'ps'], lambda values: not values['workers'] or values['ps'] > 0,
      message='workers share the model through parameter servers: with --workers, pass --ps=1 or more.',
      flag_values=fv)
