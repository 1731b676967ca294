"""What a program prints: its own progress and results, or TensorFlow's full logs as well."""
from absl import flags


def define_log_flags(fv=flags.FLAGS):
  flags.DEFINE_bool('tf_log', False, "Also print TensorFlow's own log lines: Estimator's INFO messages, per-step "
                    'rates, deprecation notices about the tf.compat.v1 APIs this project uses, and the INFO lines of '
                    "TensorFlow's C++ runtime. Default: the program's progress and results, checkpoint saves, and "
                    "TensorFlow's warnings and errors.", flag_values=fv)


def define_progress_flags(fv=flags.FLAGS):
  flags.DEFINE_integer('log_every_steps', None, 'Log a training progress line (step, loss, examples/s, ETA) every '
                       'this many steps. Default: 100 on CPU; on a TPU once per --iterations loop. The host sees a '
                       'TPU (or a Keras steps_per_execution run) only between loops, so lines fall on the first '
                       'loop boundary at or past each multiple.', lower_bound=1,
                       flag_values=fv)
