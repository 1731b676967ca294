"""Turns timed windows into rates, the four ratios and their targets; writes the JSON and markdown files.

Every rate and ratio exists twice: per wall second ('wall', the issue's definition, on which targets are judged)
and per CPU second of this process ('cpu', which load from other processes on a shared machine barely moves).
"""
import json
import os

from bench import timing
from estimator_tpu.runtime import atomic_files

TARGETS = {  # name: (comparison, threshold)
    'p1_overhead': ('>=', 0.95),
    'p2_pipeline': ('>=', 20.0),
    'p3_efficiency': ('>=', 0.6),
    'p4_minutes': ('<=', 15.0),
}


KINDS = {  # measured workload: name of its rate
    'estimator': 'estimator_examples_per_sec',
    'session': 'session_examples_per_sec',
    'pipeline_file': 'pipeline_file_examples_per_sec',
    'pipeline_cached': 'pipeline_cached_examples_per_sec',
    'matmul': 'matmul_flops_per_sec',
}
CLOCKS = ('wall', 'cpu')


def throughput_rates(rounds):
  """{'wall': {rate name: value}, 'cpu': {...}} over all rounds; `rounds` is a list of {kind: timing.Window}."""
  totals = {kind: timing.total(r[kind] for r in rounds) for kind in KINDS}
  return {clock: {name: totals[kind].amount / getattr(totals[kind], clock) for kind, name in KINDS.items()}
          for clock in CLOCKS}


def ratios(rates, train_flops_per_example):
  """P1-P3 from rates; P2 takes the slower of the two pipeline speeds (first epoch from file, later from cache)."""
  estimator = rates['estimator_examples_per_sec']
  pipeline = min(rates['pipeline_file_examples_per_sec'], rates['pipeline_cached_examples_per_sec'])
  return {
      'p1_overhead': estimator / rates['session_examples_per_sec'],
      'p2_pipeline': pipeline / estimator,
      'p3_efficiency': train_flops_per_example * estimator / rates['matmul_flops_per_sec'],
      # Not a target: the same efficiency for the plain loop, to separate Estimator overhead from kernel speed.
      'p3_efficiency_plain_loop':
          train_flops_per_example * rates['session_examples_per_sec'] / rates['matmul_flops_per_sec'],
  }


def all_ratios(rates, train_flops_per_example):
  return {clock: ratios(rates[clock], train_flops_per_example) for clock in CLOCKS}


def target_checks(values):
  """{name: {'value', 'target', 'met'}} for every target whose value was measured (None: not reached)."""
  checks = {}
  for name, (comparison, threshold) in sorted(TARGETS.items()):
    if name not in values:
      continue
    value = values[name]
    met = value is not None and (value >= threshold if comparison == '>=' else value <= threshold)
    checks[name] = {'value': value, 'target': '%s %g' % (comparison, threshold), 'met': met}
  return checks


def result_name(tf_version):
  return 'tf-%s' % tf_version


def _count(value):
  return '{:,.0f}'.format(value)


def _verdict(checks, name):
  if name not in checks:
    return 'not run'
  return 'yes' if checks[name]['met'] else '**no**'


def throughput_cells(result):
  """{metric: (wall-clock text, CPU-time text)} for P1-P3 and the plain-loop P3."""
  cells = {}
  for clock, unit in (('wall', 's'), ('cpu', 'CPU-s')):
    r, q = result['rates'][clock], result['ratios'][clock]
    model_flops = result['flops']['per_example'] * r['estimator_examples_per_sec']
    texts = {
        'p1_overhead': '%.3f (%s / %s ex/%s)' % (q['p1_overhead'], _count(r['estimator_examples_per_sec']),
                                                 _count(r['session_examples_per_sec']), unit),
        'p2_pipeline': '%.1f (file %s, cached %s ex/%s)' % (q['p2_pipeline'],
                                                            _count(r['pipeline_file_examples_per_sec']),
                                                            _count(r['pipeline_cached_examples_per_sec']), unit),
        'p3_efficiency': '%.3f (%.1f / %.1f GFLOP/%s)' % (q['p3_efficiency'], model_flops / 1e9,
                                                          r['matmul_flops_per_sec'] / 1e9, unit),
        'p3_efficiency_plain_loop': '%.3f' % q['p3_efficiency_plain_loop'],
    }
    for name, text in texts.items():
      cells.setdefault(name, []).append(text)
  return cells


def markdown_rows(result):
  """(metric, wall-clock measurement, CPU-time measurement, target, met) rows of one run."""
  checks, rows = result['targets'], []
  if 'rates' in result:
    cells = throughput_cells(result)
    size = result['matmul_size']
    rows.append(('P1 TPUEstimator path / plain Session loop',) + tuple(cells['p1_overhead']) +
                ('>= 0.95', _verdict(checks, 'p1_overhead')))
    rows.append(('P2 input pipeline / training',) + tuple(cells['p2_pipeline']) +
                ('>= 20', _verdict(checks, 'p2_pipeline')))
    rows.append(('P3 model FLOP/s / %dx%d matmul FLOP/s' % (size, size),) + tuple(cells['p3_efficiency']) +
                ('>= 0.6', _verdict(checks, 'p3_efficiency')))
    rows.append(('P3 of the plain Session loop (for comparison)',) + tuple(cells['p3_efficiency_plain_loop']) +
                ('', ''))
  if 'accuracy' in result:
    a = result['accuracy']
    label = 'P4 time to %.1f%% on all %s %s images' % (100 * a['target'], _count(a['eval_examples']),
                                                       a['eval_split'])
    if a['reached']:
      wall = '%.1f min, %s steps' % (a['training_seconds'] / 60.0, _count(a['steps']))
      cpu = '%.1f CPU-min' % (a['training_cpu_seconds'] / 60.0)
    else:
      wall = 'not reached: best %.2f%%, stopped by %s' % (100 * (a['best_accuracy'] or 0), a['stopped_by'])
      cpu = ''
    rows.append((label, wall, cpu, '<= 15 min', _verdict(checks, 'p4_minutes')))
    rows.append(('Peak RSS of the training process', '%.0f MiB' % a['peak_rss_mib'], '', '', ''))
  return rows


def markdown(result):
  m = result['machine']
  header = 'TensorFlow %s, Python %s, %d CPUs (%s), %s; load average %s at start' % (
      m['tensorflow'], m['python'], m['cpus'], m['cpu_model'], result['date'],
      ' / '.join('%.2f' % x for x in m['load_average_at_start']))
  lines = [header + '.', '',
           '| metric | per wall second (judged) | per CPU second | target | met |', '|---|---|---|---|---|']
  lines += ['| %s | %s | %s | %s | %s |' % row for row in markdown_rows(result)]
  lines += ['', 'Command: `%s`' % result['command'], '']
  return '\n'.join(lines)


def write_result(result, output_dir):
  """Writes <output_dir>/tf-<version>.json and .md; returns the JSON path."""
  os.makedirs(output_dir, exist_ok=True)
  base = os.path.join(output_dir, result_name(result['machine']['tensorflow']))
  atomic_files.write_text(base + '.json', json.dumps(result, indent=2, sort_keys=True) + '\n')
  atomic_files.write_text(base + '.md', markdown(result))
  return base + '.json'
