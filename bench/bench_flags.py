"""Flags of the benchmark runner (the mnist_tpu.py flags are defined next to them and keep their defaults).

`--smoke` swaps in tiny values for every flag the command line leaves unset, so the whole benchmark finishes in
seconds on synthetic data; CI runs it that way to keep the scripts working.
"""
import os

from absl import flags

RESULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')
PHASES = ('accuracy', 'throughput')

# Values for --smoke: each one replaces a default, never a value given on the command line.
SMOKE_VALUES = {
    'output_dir': os.path.join(RESULTS_DIR, 'tmp'),
    'batch_size': 16,
    'iterations': 5,
    'eval_batch_size': 10,         # the synthetic test split has 110 images: 11 full batches, exact
    'eval_every_steps': 10,
    'train_steps': 40,
    'target_accuracy': 0.9,        # the synthetic classes are separable: reachable in a few dozen steps
    'max_minutes': 2.0,
    'rounds': 1,
    'warmup_steps': 3,
    'measure_steps': 6,
    'pipeline_warmup_batches': 2,
    'matmul_size': 256,
    'matmul_runs': 3,
}


def define_bench_flags(fv=flags.FLAGS):
  flags.DEFINE_bool('smoke', False, 'Tiny synthetic data and tiny sizes: the whole run takes seconds (for CI).',
                    flag_values=fv)
  flags.DEFINE_string('output_dir', RESULTS_DIR, 'Where <tf-version>.json and <tf-version>.md are written.',
                      flag_values=fv)
  flags.DEFINE_list('phases', list(PHASES), 'Phases to run: accuracy (P4 + peak RSS), throughput (P1-P3).',
                    flag_values=fv)
  flags.register_validator('phases', lambda names: bool(names) and set(names) <= set(PHASES),
                           message='--phases takes a comma-separated subset of %s.' % ','.join(PHASES),
                           flag_values=fv)
  # Throughput (P1-P3): `rounds` rounds, each timing every workload once, so load drift hits all of them.
  flags.DEFINE_integer('rounds', 5, 'Throughput rounds; the rates are totals over all rounds.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('warmup_steps', 50, 'Training steps run but not timed at the start of every measurement '
                       '(graph build, session start, first steps); the same for both training loops.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('measure_steps', 200, 'Timed training steps per loop and round, after the warm-up.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('pipeline_warmup_batches', 50, 'Input-pipeline batches not timed (shuffle buffer fill).',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('matmul_size', 2048, 'Side of the square float32 matrices of the matmul ceiling.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('matmul_runs', 10, 'Timed matmuls per round (after one untimed run).',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('intra_op_threads', 0, 'Session intra-op threads of the plain loop, the pipeline and the '
                       'matmul (0: TensorFlow picks). The TPUEstimator path keeps its own session config.',
                       lower_bound=0, flag_values=fv)
  flags.DEFINE_integer('inter_op_threads', 0, 'Session inter-op threads, as --intra_op_threads.',
                       lower_bound=0, flag_values=fv)
  # Time to accuracy (P4). The mnist_tpu.py flags set the training recipe; --train_steps is the step budget.
  # --eval_every_steps (checkpoint and evaluate every this many steps; replaces --save_checkpoints_steps in this
  # phase) and --eval_split are mnist_tpu.py's own flags (flags/modes.py), with the same meaning here.
  flags.DEFINE_float('target_accuracy', 0.994, 'Accuracy to reach on the evaluation split.',
                     lower_bound=0.0, upper_bound=1.0, flag_values=fv)
  flags.DEFINE_float('max_minutes', 30.0, 'Training time budget of the accuracy phase (evaluations excluded).',
                     lower_bound=0.0, flag_values=fv)


def apply_smoke_values(fv=flags.FLAGS):
  """Replaces the defaults by SMOKE_VALUES for the flags the command line did not set."""
  for name, value in sorted(SMOKE_VALUES.items()):
    if not fv[name].present:
      fv[name].value = value
