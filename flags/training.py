"""Model directory, batch sizes, steps and optimiser settings.

Defaults suit the local CPU run (measured: >= 99% MNIST test accuracy in under 10 minutes on 2 cores, see
README); `--batch_size`, `--eval_batch_size` and `--learning_rate` left unset take the defaults of
estimator_tpu/runtime/batch_sizes.py for where the run is: this CPU, or a TPU (docs/BENCHMARKS.md measures both).
"""
from absl import flags

from estimator_tpu import model
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.runtime import results
from estimator_tpu.runtime.batch_sizes import LOCAL_BATCH_SIZE
from estimator_tpu.runtime.batch_sizes import LOCAL_EVAL_BATCH_SIZE
from estimator_tpu.runtime.batch_sizes import LOCAL_LEARNING_RATE
from estimator_tpu.runtime.batch_sizes import TPU_BATCH_SIZE
from estimator_tpu.runtime.batch_sizes import TPU_EVAL_BATCH_SIZE
from estimator_tpu.runtime.batch_sizes import TPU_LEARNING_RATE

LOGGED_PREDICTIONS = results.LOGGED_PREDICTIONS
EXPONENTIAL_DECAY_STEPS = 1000  # --lr_decay_steps' default for --lr_schedule=exponential


def define_training_flags(fv=flags.FLAGS):
  flags.DEFINE_string('model_dir', None, 'Checkpoints and event files. On a Cloud TPU it must be a gs:// path. '
                      'Default (local runs only): a new directory under the system temp dir.', flag_values=fv)
  flags.DEFINE_integer('batch_size', None, 'Global training batch (all cores together). Default: %d locally, %d '
                       'on TPU. On TPU it must be divisible by the number of cores.' % (LOCAL_BATCH_SIZE,
                                                                                          TPU_BATCH_SIZE),
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('eval_batch_size', None, 'Global evaluation and prediction batch. Default: %d locally, %d '
                       'on TPU. On TPU it must be divisible by the number of cores.' % (LOCAL_EVAL_BATCH_SIZE,
                                                                                          TPU_EVAL_BATCH_SIZE),
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('train_steps', 2000, 'Total training steps (TPUEstimator max_steps).',
                       lower_bound=1, flag_values=fv)
  # The default recipes (cosine over the 2,000 steps, from one rate locally and one on TPU) were chosen on the
  # validation split from measured runs; docs/BENCHMARKS.md has the runs, bench/default_runs.py repeats them.
  flags.DEFINE_float('learning_rate', None, 'Initial Adam learning rate. Default: %g locally, %g on TPU (at the TPU '
                     'batch of %d).' % (LOCAL_LEARNING_RATE, TPU_LEARNING_RATE, TPU_BATCH_SIZE), lower_bound=0.0,
                     flag_values=fv)
  flags.DEFINE_enum('lr_schedule', model.COSINE, [model.COSINE, model.EXPONENTIAL],
                    'cosine: from --learning_rate down to 0 at step --lr_decay_steps (default: --train_steps) along '
                    'half a cosine. exponential: times --lr_decay_rate every --lr_decay_steps steps (default %d), '
                    'smoothly.' % EXPONENTIAL_DECAY_STEPS, flag_values=fv)
  flags.DEFINE_integer('lr_decay_steps', None, 'Steps of the learning-rate decay (see --lr_schedule).',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_float('lr_decay_rate', 0.5, '--lr_schedule=exponential: the decay factor per --lr_decay_steps.',
                     lower_bound=0.0, upper_bound=1.0, flag_values=fv)
  flags.DEFINE_integer('save_checkpoints_steps', 1000, 'Checkpoint cadence in steps.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('num_predictions', 10, 'Test images to predict (the first ones; -1: all of them). The '
                       'first %d are logged; --predictions_file gets them all.' % LOGGED_PREDICTIONS,
                       lower_bound=-1, flag_values=fv)


def learning_rate_args(fv):
  """The learning-rate arguments of the model_fn builders and of keras/model.compile_model, from the flags; an
  unset --learning_rate is the default for where the run is (--use_tpu; mnist.py has none: this machine)."""
  default_steps = fv.train_steps if fv.lr_schedule == model.COSINE else EXPONENTIAL_DECAY_STEPS
  rate = batch_sizes.effective_learning_rate(fv.learning_rate, 'use_tpu' in fv and fv.use_tpu)
  return {'learning_rate': rate, 'decay_steps': fv.lr_decay_steps or default_steps,
          'decay_rate': fv.lr_decay_rate, 'schedule': fv.lr_schedule}
