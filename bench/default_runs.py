"""Runs the seed command -- `python mnist_tpu.py --use_tpu=false --master=''` with its defaults -- several times
and tabulates the exact test accuracy and the wall time of each run: does the default reach 99.4% every time?

  python -m bench.default_runs --data_dir=DIR [--runs=5 --first_seed=1]   # this interpreter's TensorFlow
  bash bench/default_runs.sh --data_dir=DIR                                # both TensorFlows, one after the other
  python -m bench.default_runs --data_dir=DIR --defaults=tpu [--program=mnist_keras]   # the TPU defaults
  bash bench/tpu_default_runs.sh --data_dir=DIR    # the TPU defaults of both TPU routes (TF 2.15), and bfloat16

--defaults=tpu runs the same program on this CPU with the defaults a TPU run gets (estimator_tpu/runtime/
batch_sizes.py: tpu_default_args()): with CrossShardOptimizer's mean reduction (and TPUStrategy's all-reduce of the
mean loss) an 8-core step at global batch 1,024 applies the update of one device at batch 1,024, so the accuracy a
v3-8 user gets from the defaults is measured here, up to the TPU's own numerics (docs/BENCHMARKS.md).

Run i trains with --seed=first_seed+i, so every run is repeatable exactly (docs/RUNNING.md, "Reproducible runs")
and the seeds are fixed before any run, not picked after. Each run is a separate process, timed from start to
exit, with a new model directory; the data directory is prepared once beforehand and shared. Writes
<output_dir>/<name>-tf-<version>.{json,md} (name: default-runs for the seed command, else program, defaults and
--label). Timings are wall-clock: run it on an idle machine.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import tensorflow.compat.v1 as tf
from absl import app
from absl import flags

from bench import machine
from estimator_tpu.data import prepare
from estimator_tpu.runtime import atomic_files
from estimator_tpu.runtime import batch_sizes

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_ACCURACY = 0.994

flags.DEFINE_string('data_dir', None, 'Prepared MNIST (prepared here first if empty).')
flags.DEFINE_integer('runs', 5, 'Runs of the default command.', lower_bound=1)
flags.DEFINE_integer('first_seed', 1, 'Run i uses --seed=first_seed+i.', lower_bound=0)
flags.DEFINE_enum('program', 'mnist_tpu', ['mnist_tpu', 'mnist_keras'], 'The program to run (with --use_tpu=false).')
flags.DEFINE_enum('defaults', 'local', ['local', 'tpu'], 'local: the program\'s defaults on this CPU. tpu: the '
                  'defaults of a TPU run (batch sizes, learning rate: batch_sizes.tpu_default_args()), on this CPU.')
flags.DEFINE_string('label', None, 'Added to the output name (e.g. bfloat16 with --extra_args=--precision=bfloat16).')
flags.DEFINE_string('output_dir', os.path.join(REPO_ROOT, 'bench', 'results', 'default_runs'),
                    'Where the JSON and markdown tables go.')
flags.DEFINE_list('extra_args', [], 'Flags added to every run (to try another recipe); empty for the default.')
flags.mark_flag_as_required('data_dir')
FLAGS = flags.FLAGS


def program_args():
  """The program's arguments besides data, model directory and seed: --defaults' flags, then --extra_args."""
  defaults = batch_sizes.tpu_default_args() if FLAGS.defaults == 'tpu' else []
  return defaults + FLAGS.extra_args


def output_name():
  if FLAGS.program == 'mnist_tpu' and FLAGS.defaults == 'local' and not FLAGS.label:
    return 'default-runs'
  return '-'.join([FLAGS.program, '%s-defaults' % FLAGS.defaults] + ([FLAGS.label] if FLAGS.label else []))


def run_once(seed, model_dir):
  """Runs the seed command once; returns its results JSON plus the wall time in seconds."""
  command = [sys.executable, os.path.join(REPO_ROOT, FLAGS.program + '.py'), '--use_tpu=false', '--master=',
             '--data_dir=%s' % FLAGS.data_dir, '--model_dir=%s' % model_dir, '--seed=%d' % seed] + program_args()
  load = machine.load_average()[0]
  start = time.time()
  completed = subprocess.run(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
  seconds = time.time() - start
  if completed.returncode != 0:
    raise RuntimeError('run with seed %d failed:\n%s' % (seed, completed.stdout[-3000:]))
  with tf.io.gfile.GFile(os.path.join(model_dir, FLAGS.program + '_results.json')) as f:
    summary = json.load(f)
  return {'seed': seed, 'accuracy': summary['eval']['accuracy'], 'examples': summary['eval']['examples'],
          'global_step': summary['global_step'], 'seconds': round(seconds, 1),
          'output_lines': len(completed.stdout.splitlines()), 'load_average_at_start': load}


def markdown(result):
  runs = result['runs']
  accuracies = [run['accuracy'] for run in runs]
  lines = ['# %s, %d runs (TensorFlow %s)' % (result.get('title', 'The default command'), len(runs),
                                                result['tensorflow']), '',
           'Command: `%s`; %d CPUs (%s).' % (result['command'], result['machine']['cpus'],
                                           result['machine']['cpu_model']), '',
           'Each run: `%s`.' % result.get('run_command', ''), '',
           '| run | seed | test accuracy (%d images) | steps | wall time | load average at start | lines printed |'
           % runs[0]['examples'], '|---|---|---|---|---|---|---|']
  for i, run in enumerate(runs):
    lines.append('| %d | %d | %.2f%% | %d | %d min %02d s | %.1f | %d |' % (
        i + 1, run['seed'], 100 * run['accuracy'], run['global_step'], run['seconds'] // 60, run['seconds'] % 60,
        run['load_average_at_start'], run['output_lines']))
  seconds = [run['seconds'] for run in runs]
  lines += ['', 'min / median / max accuracy: %.2f%% / %.2f%% / %.2f%%; runs at or above %.1f%%: %d of %d.' % (
      100 * min(accuracies), 100 * statistics.median(accuracies), 100 * max(accuracies), 100 * TARGET_ACCURACY,
      sum(a >= TARGET_ACCURACY for a in accuracies), len(runs)),
            'wall time min / median / max: %.0f / %.0f / %.0f s.' % (min(seconds), statistics.median(seconds),
                                                                     max(seconds))]
  return '\n'.join(lines) + '\n'


def main(argv):
  del argv
  prepare.ensure_data(FLAGS.data_dir)
  result = {'tensorflow': tf.__version__, 'machine': machine.describe(),
            'command': 'python -m bench.default_runs ' + ' '.join(sys.argv[1:]), 'runs': [],
            'title': '`%s.py` with the %s defaults%s' % (FLAGS.program, 'TPU' if FLAGS.defaults == 'tpu' else 'local',
                                                          ' (%s)' % FLAGS.label if FLAGS.label else ''),
            'run_command': ' '.join(['python', FLAGS.program + '.py', '--use_tpu=false', "--master=''",
                                     '--seed=N'] + program_args())}
  with tempfile.TemporaryDirectory(prefix='default-runs-') as work_dir:
    for i in range(FLAGS.runs):
      seed = FLAGS.first_seed + i
      result['runs'].append(run_once(seed, os.path.join(work_dir, 'seed-%d' % seed)))
      print('run %d/%d: seed %d, accuracy %.4f, %.0f s' % (i + 1, FLAGS.runs, seed, result['runs'][-1]['accuracy'],
                                                         result['runs'][-1]['seconds']), flush=True)
  name = os.path.join(FLAGS.output_dir, '%s-tf-%s' % (output_name(), tf.__version__))
  atomic_files.write_text(name + '.json', json.dumps(result, indent=2, sort_keys=True))
  atomic_files.write_text(name + '.md', markdown(result))
  print(markdown(result))


if __name__ == '__main__':
  app.run(main)
