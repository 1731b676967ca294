"""Writes bench/results/summary.md: one compact table over every full run in bench/results (one per TF version).

  python -m bench.summarize [--output_dir=bench/results]

The per-version tf-<version>.md files next to it hold the rates behind each ratio.
"""
import glob
import json
import os
import sys


from absl import app
from absl import flags

from bench import bench_flags
from estimator_tpu.runtime import atomic_files

FLAGS = flags.FLAGS
SUMMARY_FILE = 'summary.md'


def load_results(output_dir):
  """Full (non-smoke) results in output_dir, oldest TensorFlow first."""
  results = []
  for path in glob.glob(os.path.join(output_dir, 'tf-*.json')):
    with open(path) as f:
      result = json.load(f)
    if not result.get('smoke'):
      results.append(result)
  return sorted(results, key=lambda r: [int(p) for p in r['machine']['tensorflow'].split('.') if p.isdigit()])


def ratio_cell(result, name, digits):
  if 'ratios' not in result:
    return 'not run'
  wall, cpu = result['ratios']['wall'][name], result['ratios']['cpu'][name]
  return '%.*f %s (per CPU-s: %.*f)' % (digits, wall, verdict(result, name), digits, cpu)


def verdict(result, name):
  check = result['targets'].get(name)
  return '' if check is None else ('met' if check['met'] else '**missed**')


def accuracy_cell(result):
  if 'accuracy' not in result:
    return 'not run'
  a = result['accuracy']
  if not a['reached']:
    return 'not reached in %s steps (best %.2f%%) **missed**' % ('{:,}'.format(a['evaluations'][-1]['step']),
                                                                  100 * a['best_accuracy'])
  return '%.1f min, %s steps %s (%.1f CPU-min)' % (a['training_seconds'] / 60.0, '{:,}'.format(a['steps']),
                                                   verdict(result, 'p4_minutes'), a['training_cpu_seconds'] / 60.0)


def summary_markdown(results):
  versions = ['TF %s' % r['machine']['tensorflow'] for r in results]
  lines = ['| metric | target | %s |' % ' | '.join(versions), '|---|---|%s' % ('---|' * len(results))]
  rows = [
      ('P1 TPUEstimator path / plain Session loop (examples/s)', '>= 0.95',
       [ratio_cell(r, 'p1_overhead', 3) for r in results]),
      ('P2 input pipeline / training (examples/s)', '>= 20', [ratio_cell(r, 'p2_pipeline', 1) for r in results]),
      ('P3 model FLOP/s / %s float32 matmul FLOP/s' % matmul_label(results), '>= 0.6',
       [ratio_cell(r, 'p3_efficiency', 3) for r in results]),
      ('training examples/s (TPUEstimator path)', '',
       ['{:,.0f}'.format(r['rates']['wall']['estimator_examples_per_sec']) if 'rates' in r else 'not run'
        for r in results]),
      ('P4 training time to %s' % accuracy_label(results), '<= 15 min', [accuracy_cell(r) for r in results]),
      ('peak RSS of the training process', '',
       ['%.0f MiB' % r['accuracy']['peak_rss_mib'] if 'accuracy' in r else 'not run' for r in results]),
      ('load average (1 min) at start / end', '',
       ['%.1f / %.1f' % (r['machine']['load_average_at_start'][0], end_load(r)) for r in results]),
  ]
  # A phase no run measured (e.g. --phases=accuracy everywhere) gets no row.
  rows = [(label, target, cells) for label, target, cells in rows if any(c != 'not run' for c in cells)]
  lines += ['| %s | %s | %s |' % (label, target, ' | '.join(cells)) for label, target, cells in rows]
  return '\n'.join(lines) + '\n'


def matmul_label(results):
  sizes = sorted(set('%dx%d' % (r['matmul_size'], r['matmul_size']) for r in results))
  return ' or '.join(sizes)


def accuracy_label(results):
  runs = [r['accuracy'] for r in results if 'accuracy' in r]
  labels = sorted(set('%.1f%% on all %s %s images' % (100 * a['target'], '{:,}'.format(a['eval_examples']),
                                                        a['eval_split']) for a in runs))
  return ' or '.join(labels) or 'the target accuracy'


def end_load(result):
  part = result.get('throughput') or result.get('accuracy')
  return part['load_average_at_end'][0]


def main(argv):
  del argv
  results = load_results(FLAGS.output_dir)
  if not results:
    sys.stderr.write('error: no full benchmark results (tf-*.json) in %s. Fix: run python -m bench.run_benchmarks '
                     'first.\n' % FLAGS.output_dir)
    sys.exit(1)
  path = os.path.join(FLAGS.output_dir, SUMMARY_FILE)
  atomic_files.write_text(path, summary_markdown(results))
  print(open(path).read())


if __name__ == '__main__':
  flags.DEFINE_string('output_dir', bench_flags.RESULTS_DIR, 'Directory with the tf-<version>.json results.')
  app.run(main)
