"""Scores the port report on real Estimator programs against our hand judgments (docs/PORT_REPORT.md).

  python -m bench.port_yardstick.score --checkouts DIR [--tool ROOT] [--details] [--markdown] [NAME ...]

DIR holds one folder per repository, DIR/<owner>/<name>, checked out at the commit programs.json names
(`python -m bench.port_yardstick.clone DIR` makes them; it is the only step that needs the network). For every program this runs
`python -m estimator_tpu.port PATHS --format=json` from the program's folder, with the port report of ROOT (default:
this repository; give a checkout of an older commit to measure it), and compares its `required` findings with
judgments/<program>.json:

- `required`: every change the program needs to run under TPUEstimator, as (path, line, rule[, count]) with why;
- `not_required`: places a report might flag that need no change (why: TensorFlow's source or the program's flow);
- `not_counted`: changes needed only in some setups (a TPU Node's gs:// paths), never scored.

programs.json names each program's repository, commit, folder and paths, whether it is a control (already ported),
its set, and for the programs added in issue 26 its `kind` (contrib.learn, premade+train_and_evaluate, seq2seq, ...;
carried into the scores) and `run`: how the original is started, what data it reads, whether that data can be
synthesised and whether the original ran (for the runs of the port, not for this score).

A required finding is true when its (path, line, rule) is a judged change (up to its count; more are duplicates,
false), false when it is judged not required; a judged change no finding names is missed. A required finding
judged neither way is UNJUDGED: the scorer lists it and exits 1, because precision cannot be told without a human.
Precision = true / (true + false), recall = true / (true + missed), over all programs.

programs.json names each program's repository, commit, folder, paths, set and control; programs added since the
held-out round also carry `kind` (contrib.learn, premade+train_and_evaluate, nlp, image, multi-file, control, ...)
and `run` (how the original is started, what data it reads, whether that data can be synthesised and whether the
original ran), which the scorer carries into its rows (kind) or leaves to the runs of the ports (run).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
PROGRAMS = os.path.join(HERE, 'programs.json')
JUDGMENTS = os.path.join(HERE, 'judgments')
# judged while the report was improved / judged before it first ran on them (issue 26's first held-out half, whose
# misses were seen and worked on after that run) / judged before the report first ran on them, after that work: the
# second held-out set, whose misses were seen and worked on after its first run / the third, judged under the one
# number-and-place decision of docs/PORT_REPORT.md before any tool ran on it (then worked on) / the fourth, chosen
# and judged while the report was improved on the third, before any tool ran on it (then worked on) / the fifth,
# chosen and judged while the report was improved on the fourth, before any tool ran on it (then worked on) / the
# sixth, chosen and judged while the report was improved on the fifth, before any tool ran on it (then worked on) /
# the seventh, chosen and judged while the report was improved on the sixth, before any tool ran on it (then worked
# on) / the eighth to thirteenth, each chosen and judged the same way while the report was improved on the set
# before / the fourteenth to sixteenth, the same way, under the five protocol rows docs/PORT_REPORT.md added
# before the fourteenth / the seventeenth to twenty-second, the same way / the twenty-third, the same way, under the
# constant-splits row docs/PORT_REPORT.md added before it / the twenty-fourth to twenty-ninth, the same way
# (the twenty-sixth to twenty-ninth under the three rows added after the twenty-fifth's first run; the
# twenty-eighth and twenty-ninth also under the spec-with-eval_metric_ops row added before the twenty-eighth).
SETS = ('development', 'held-out', 'held-out-2', 'held-out-3', 'held-out-4', 'held-out-5', 'held-out-6', 'held-out-7', 'held-out-8', 'held-out-9',
        'held-out-10', 'held-out-11', 'held-out-12', 'held-out-13', 'held-out-14',
        'held-out-15', 'held-out-16', 'held-out-17', 'held-out-18',
        'held-out-19', 'held-out-20', 'held-out-21', 'held-out-22', 'held-out-23',
        'held-out-24', 'held-out-25', 'held-out-26',
        'held-out-27', 'held-out-28', 'held-out-29')
# Rows of the report before the rule registry (commit 180b60a and earlier) -> rule numbers.
LEGACY_ROWS = {'rule-dtypes': 15, 'rule-gcs': 17, 'version-contrib': 19, 'tool': 13}

Key = collections.namedtuple('Key', ['path', 'line', 'rule'])


def load_programs(path, names=()):
  with open(path) as f:
    programs = json.load(f)
  unknown = set(names) - set(p['name'] for p in programs)
  if unknown:
    raise SystemExit('error: no such program: %s. Fix: use names from %s.' % (', '.join(sorted(unknown)), path))
  return [p for p in programs if not names or p['name'] in names]


def load_judgments(folder, name):
  with open(os.path.join(folder, name + '.json')) as f:
    doc = json.load(f)
  required = collections.OrderedDict()
  for entry in doc['required']:
    key = Key(entry['path'], entry['line'], entry['rule'])
    assert key not in required, 'judged twice: %s %s' % (name, key)
    required[key] = (entry.get('count', 1), entry['why'])
  not_required = collections.OrderedDict((Key(e['path'], e['line'], e['rule']), e['why']) for e in doc['not_required'])
  both = set(required) & set(not_required)
  assert not both, 'judged both ways: %s %s' % (name, sorted(both))
  return required, not_required


def rule_of(finding):
  """The rule of a finding; reports older than the rule registry carry a `row` instead."""
  if 'rule' in finding:
    return finding['rule']
  row = finding['row']
  if row == '13' and 'py_func' not in finding['message']:
    return 15  # the old row 13 held string ops, now rule 15; py_func is rule 18
  return LEGACY_ROWS.get(row, 18 if row == '13' else int(row) if row.isdigit() else row)


def repository_folder(checkouts, repository):
  owner, name = repository.split('/')
  for candidate in (os.path.join(checkouts, owner, name), os.path.join(checkouts, name)):
    if os.path.isdir(candidate):
      return candidate
  raise SystemExit('error: %s is not in %s. Fix: clone it there at the commit programs.json names '
                   '(bench/port_yardstick/clone.sh %s).' % (repository, checkouts, checkouts))


def checked_commit(folder, commit):
  """'verified', or why the commit could not be checked (a folder that is not a git checkout)."""
  try:
    head = subprocess.run(['git', '-C', folder, 'rev-parse', 'HEAD'], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, universal_newlines=True, timeout=30).stdout.strip()
  except (OSError, subprocess.SubprocessError):
    head = ''
  if not head:
    return 'not a git checkout: commit not verified'
  if head != commit:
    raise SystemExit('error: %s is at %s, not %s. Fix: git -C %s checkout %s' % (folder, head, commit, folder,
                                                                                 commit))
  return 'verified'


def run_report(program, folder, tool_root, python):
  cwd = os.path.join(folder, program['folder'])
  command = [python, '-m', 'estimator_tpu.port'] + program['paths'] + ['--format=json']
  env = dict(os.environ, PYTHONPATH=tool_root)
  start = time.time()
  completed = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, timeout=120)
  seconds = time.time() - start
  try:
    report = json.loads(completed.stdout)
  except ValueError:
    report = None
  return report, completed, seconds


def score_program(program, report, completed, seconds, judgments=JUDGMENTS):
  required, not_required = load_judgments(judgments, program['name'])
  row = collections.OrderedDict([('name', program['name']), ('control', program['control']),
                                 ('set', program.get('set', SETS[0])), ('kind', program.get('kind', '')),
                                 ('exit', completed.returncode),
                                 ('seconds', round(seconds, 2))])
  crashed = report is None or completed.returncode not in (0, 1) or 'Traceback' in completed.stderr
  findings = report['findings'] if report else []
  crashed = crashed or any('could not analyse' in f['message'] for f in findings)
  reported = collections.Counter(Key(f['path'], f['line'], rule_of(f)) for f in findings
                                 if f['severity'] == 'required')
  true = false = 0
  false_list, unjudged, missed = [], [], []
  for key, count in sorted(reported.items()):
    if key in required:
      judged = required[key][0]
      true += min(count, judged)
      if count > judged:
        false += count - judged
        false_list.append((key, count - judged, 'duplicate of a judged change'))
    elif key in not_required:
      false += count
      false_list.append((key, count, not_required[key]))
    else:
      unjudged.append((key, count))
  for key, (judged, why) in required.items():
    if reported.get(key, 0) < judged:
      missed.append((key, judged - reported.get(key, 0), why))
  row.update([('required_reported', sum(reported.values())), ('true', true), ('false', false),
              ('missed', sum(n for _, n, _ in missed)), ('unjudged', sum(n for _, n in unjudged)),
              ('judged_changes', sum(n for n, _ in required.values())), ('crashed', crashed),
              ('false_findings', [dict(key._asdict(), count=n, why=why) for key, n, why in false_list]),
              ('missed_changes', [dict(key._asdict(), count=n, why=why) for key, n, why in missed]),
              ('unjudged_findings', [dict(key._asdict(), count=n) for key, n in unjudged])])
  return row


def ratio(a, b):
  return round(float(a) / b, 3) if b else float('nan')


def totals(rows):
  true, false, missed = (sum(r[k] for r in rows) for k in ('true', 'false', 'missed'))
  unported = [r for r in rows if not r['control']]
  summary = collections.OrderedDict([
      ('programs', len(rows)), ('unported', len(unported)), ('controls', len(rows) - len(unported)),
      ('repositories', len(set(r['repository'] for r in rows))),
      ('unported_repositories', len(set(r['repository'] for r in unported))),
      ('required_reported', sum(r['required_reported'] for r in rows)), ('true', true), ('false', false),
      ('missed', missed), ('unjudged', sum(r['unjudged'] for r in rows)),
      ('precision', ratio(true, true + false)), ('recall', ratio(true, true + missed)),
      ('controls_exit_0', all(r['exit'] == 0 for r in rows if r['control'])),
      ('unported_exit_1', all(r['exit'] == 1 for r in unported)),
      ('crashes', sum(1 for r in rows if r['crashed'])),
      ('slowest_seconds', max(r['seconds'] for r in rows) if rows else 0),
  ])
  for name in SETS:
    chosen = [r for r in rows if r['set'] == name]
    if chosen and len(chosen) < len(rows):
      t, f, m = (sum(r[k] for r in chosen) for k in ('true', 'false', 'missed'))
      summary[name] = collections.OrderedDict([('programs', len(chosen)), ('true', t), ('false', f), ('missed', m),
                                               ('precision', ratio(t, t + f)), ('recall', ratio(t, t + m))])
  return summary


def print_table(rows, summary, markdown, out):
  header = ('program', 'set', 'required reported', 'true', 'false', 'missed', 'exit', 'seconds')
  if markdown:
    out.write('| %s |\n|%s\n' % (' | '.join(header), '---|' * len(header)))
  for r in rows:
    cells = ('%s%s' % (r['name'], ' (control)' if r['control'] else ''), r['set'], r['required_reported'], r['true'],
             r['false'], r['missed'], r['exit'], '%.2f' % r['seconds'])
    if markdown:
      out.write('| %s |\n' % ' | '.join(str(c) for c in cells))
    else:
      out.write('%-36s required %3d  true %3d  false %2d  missed %2d  exit %d  %5.2f s%s%s\n' % (
          cells[0], r['required_reported'], r['true'], r['false'], r['missed'], r['exit'], r['seconds'],
          '  UNJUDGED %d' % r['unjudged'] if r['unjudged'] else '', '  CRASHED' if r['crashed'] else ''))
  if markdown:
    out.write('| **total** | | %d | %d | %d | %d | | |\n' % (summary['required_reported'], summary['true'],
                                                              summary['false'], summary['missed']))
  out.write('\n%s\n' % json.dumps(summary))


def print_details(rows, out):
  for r in rows:
    lines = ['  false %s:%d rule %d (x%d): %s' % (f['path'], f['line'], f['rule'], f['count'], f['why'])
             for f in r['false_findings']]
    lines += ['  missed %s:%d rule %d (x%d): %s' % (m['path'], m['line'], m['rule'], m['count'], m['why'])
              for m in r['missed_changes']]
    lines += ['  UNJUDGED %s:%d rule %d (x%d)' % (u['path'], u['line'], u['rule'], u['count'])
              for u in r['unjudged_findings']]
    if lines:
      out.write('%s\n%s\n' % (r['name'], '\n'.join(lines)))


def parse_args(argv):
  parser = argparse.ArgumentParser(prog='python -m bench.port_yardstick.score', description=__doc__.split('\n')[0])
  parser.add_argument('names', nargs='*', metavar='NAME', help='only these programs (default: all)')
  parser.add_argument('--checkouts', required=True, help='folder with DIR/<owner>/<name> clones')
  parser.add_argument('--programs', default=PROGRAMS, help='the program list (default: this folder\'s)')
  parser.add_argument('--judgments', default=JUDGMENTS, help='folder of <program>.json judgments (default: '
                      'this folder\'s)')
  parser.add_argument('--tool', default=REPO_ROOT, help='repository whose port report runs (default: this one)')
  parser.add_argument('--python', default=sys.executable, help='Python that runs the report (default: this one)')
  parser.add_argument('--details', action='store_true', help='list false, missed and unjudged findings')
  parser.add_argument('--markdown', action='store_true', help='print the table as markdown')
  parser.add_argument('--save', help='write every program\'s scores and report to this JSON file')
  return parser.parse_args(argv)


def main(argv=None):
  args = parse_args(sys.argv[1:] if argv is None else argv)
  rows, reports = [], {}
  for program in load_programs(args.programs, args.names):
    folder = repository_folder(os.path.abspath(args.checkouts), program['repository'])
    commit = checked_commit(folder, program['commit'])
    report, completed, seconds = run_report(program, folder, os.path.abspath(args.tool), os.path.abspath(args.python))
    row = score_program(program, report, completed, seconds, args.judgments)
    row['repository'], row['commit'], row['commit_check'] = program['repository'], program['commit'], commit
    rows.append(row)
    reports[program['name']] = {'report': report, 'stderr': completed.stderr}
  summary = totals(rows)
  print_table(rows, summary, args.markdown, sys.stdout)
  if args.details:
    print_details(rows, sys.stdout)
  if args.save:
    with open(args.save, 'w') as f:
      json.dump({'summary': summary, 'programs': rows, 'reports': reports}, f, indent=1)
  return 1 if summary['unjudged'] or summary['crashes'] else 0


if __name__ == '__main__':
  sys.exit(main())
