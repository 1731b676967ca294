"""Runs `--write` on the real programs whose original ran, then runs the original and the port the same way.

  python -m bench.port_yardstick.write_runs --checkouts DIR --runs DIR --work DIR [--python PY] [--names A,B] [--judge]

For each program of programs.json with `run.original_ran` true and a `run.replay` command: (1) ports the program
with `python -m estimator_tpu.port --write` from its folder (the paths of programs.json), recording the exit status,
the changes made and the TODOs left, by rule; (2) copies the program's folder twice under WORK/<name>/, once as it
is and once with the port's files in place of the originals, and runs `run.replay` in each with a fresh output
folder; (3) reads the evaluation metrics both runs logged (TensorFlow's "Saving dict for global step" lines, which
REPLAY_HOOK prints where a program keeps TensorFlow's logging above INFO) and prints one row per program.

The synthetic-data setups (each program's make_data.py and its data) are third-party formats and stay outside the
repository: RUNS/<name>/ holds them and `run.replay` names them through {data}. The placeholders of `run.replay`:
{py} the Python, {prog} the copy of the program's folder (also the working directory), {out} a fresh output folder,
{data} RUNS/<name>, {runs} RUNS. The replay is the command the original was run with (run.original_run_note), so a
port that fails it fails where the original ran.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time

from bench.port_yardstick import score

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHANGES = re.compile(r'(\d+) change\(s\) made \((.*)\)\.$', re.M)  # ... made (rule 1 (TPUEstimator): 2, ...).
CHANGE_RULE = re.compile(r'rule (\d+) \([^()]*\): (\d+)')
TODO_RULE = re.compile(r'TODO\(tpu port, rule (\d+)\)')
METRICS = re.compile(r'Saving dict for global step (\d+): (.*)')
# Put first on the path of every replay (as its sitecustomize). (1) The evaluation line every run's metrics are read
# from: Estimator (and contrib.learn's) log "Saving dict for global step" at INFO, which a program that leaves
# TensorFlow's logging at WARN never shows; there the hook prints the same line, the moment each module is imported
# (no TensorFlow import of its own: the program imports it as it would). (2) The model_dir of an estimator given
# none, in the replay's output folder instead of a new temporary folder. (3) When evaluating a copied checkpoint:
# training becomes a no-op and train_and_evaluate evaluates once, the same patch for the original and the port, so
# both evaluate the same weights (contrib.learn's Experiment evaluates after its training anyway; one with
# checkpoint_and_export=True, which evaluates only when it saves a checkpoint, is made to do the same).
REPLAY_HOOK = """import importlib.abc
import importlib.util
import os
import sys

# TF 1.15 imports contrib's modules under tensorflow.contrib (its tensorflow_core is aliased).
_LOGGING_EVALUATIONS = ('tensorflow_estimator.python.estimator.estimator',
                        'tensorflow.contrib.learn.python.learn.estimators.estimator',
                        'tensorflow_core.contrib.learn.python.learn.estimators.estimator')


def _print_evaluations(module):
  write = module._write_dict_to_summary

  def write_dict_to_summary(output_dir, dictionary, current_global_step):
    import logging
    if not logging.getLogger('tensorflow').isEnabledFor(logging.INFO):
      print('Saving dict for global step %d: %s' % (current_global_step, module._dict_to_str(dictionary)), flush=True)
    return write(output_dir, dictionary, current_global_step)
  module._write_dict_to_summary = write_dict_to_summary


def _evaluate_after_training(module):
  # An Experiment(checkpoint_and_export=True) evaluates only when a checkpoint is saved, which an evaluation of a
  # copied checkpoint (training already at its last step) never does: it evaluates after training instead.
  train_and_evaluate = module.Experiment.train_and_evaluate

  def evaluate_after_training(self):
    self._checkpoint_and_export = False
    return train_and_evaluate(self)
  module.Experiment.train_and_evaluate = evaluate_after_training


# module name -> what is done to it once it is imported
_PATCHES = dict.fromkeys(_LOGGING_EVALUATIONS, _print_evaluations)
if os.environ.get('WRITE_RUNS_EVAL_ONLY'):
  _PATCHES.update(dict.fromkeys(('tensorflow.contrib.learn.python.learn.experiment',
                                 'tensorflow_core.contrib.learn.python.learn.experiment'), _evaluate_after_training))


class _AfterImport(importlib.abc.MetaPathFinder):

  def find_spec(self, name, path, target=None):
    if name not in _PATCHES:
      return None
    sys.meta_path.remove(self)
    try:
      spec = importlib.util.find_spec(name)
    finally:
      sys.meta_path.insert(0, self)
    execute = spec.loader.exec_module

    def exec_module(module):
      execute(module)
      _PATCHES[name](module)
    spec.loader.exec_module = exec_module
    return spec


sys.meta_path.insert(0, _AfterImport())

# An estimator given no model_dir trains in tempfile.mkdtemp(): each such folder an estimator asks for becomes
# WRITE_RUNS_MODEL_DIRS/<n>, in the order asked (the same in the original's run and the port's), so the replay's
# output folder holds the checkpoints another run can evaluate.
_MODEL_DIRS = os.environ.get('WRITE_RUNS_MODEL_DIRS')
if _MODEL_DIRS:
  import itertools
  import tempfile
  _mkdtemp, _asked = tempfile.mkdtemp, itertools.count()

  def _mkdtemp_for_estimators(*args, **kwargs):
    caller = sys._getframe(1).f_globals.get('__name__', '')
    if not caller.startswith(('tensorflow_estimator.', 'tensorflow.contrib.learn.', 'tensorflow_core.contrib.learn.')):
      return _mkdtemp(*args, **kwargs)
    path = os.path.join(_MODEL_DIRS, str(next(_asked)))
    os.makedirs(path, exist_ok=True)
    return path
  tempfile.mkdtemp = _mkdtemp_for_estimators

if os.environ.get('WRITE_RUNS_EVAL_ONLY'):
  import tensorflow as _tf  # first: tf.estimator is only set up when TensorFlow is imported before it
  _tf.estimator.Estimator  # pylint: disable=pointless-statement
  from tensorflow_estimator.python.estimator import estimator as _estimator, training as _training
  from tensorflow_estimator.python.estimator.tpu import tpu_estimator as _tpu_estimator
  _estimator.Estimator.train = lambda self, *args, **kwargs: self
  _tpu_estimator.TPUEstimator.train = lambda self, *args, **kwargs: self
  def _evaluate_only(self):
    spec = self._eval_spec
    return self._estimator.evaluate(input_fn=spec.input_fn, steps=spec.steps, name=spec.name, hooks=spec.hooks), []
  _training._TrainingExecutor.run_local = _evaluate_only
"""


def by_rule(numbers):
  counts = collections.Counter(int(n) for n in numbers)
  return ', '.join('r%d:%d' % (rule, counts[rule]) for rule in sorted(counts)) or '-'


# What `--write` says of a program the report requires nothing of (porting/cli.py).
NOTHING_TO_PORT = 'Nothing to port: '


def port(program, folder, out, python):
  """`--write` from the program's folder, as a user would run it; returns its exit status and what it printed."""
  shutil.rmtree(out, ignore_errors=True)
  os.makedirs(os.path.dirname(out), exist_ok=True)
  completed = subprocess.run([python, '-m', 'estimator_tpu.port', '--write', out] + program['paths'], cwd=folder,
                             env=dict(os.environ, PYTHONPATH=REPO_ROOT), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
  text = completed.stdout
  made = CHANGES.search(text)
  changed = [rule for rule, count in CHANGE_RULE.findall(made.group(2)) for _ in range(int(count))] if made else []
  if completed.returncode == 0 and NOTHING_TO_PORT in text and not os.path.isdir(out):
    # An already-ported program (a control): --write changes nothing and writes nothing; its port is the program
    # as it is, replayed and judged like any other.
    for path in program['paths']:
      os.makedirs(os.path.dirname(os.path.join(out, path)), exist_ok=True)
      shutil.copy2(os.path.join(folder, path), os.path.join(out, path))
  # A traceback exits 1 too, as a port with TODOs does: it wrote nothing, and is the tool's crash.
  crashed = 'Traceback (most recent call last)' in text or (completed.returncode in (0, 1) and not os.path.isdir(out))
  return {'exit': 'crash' if crashed else completed.returncode, 'changes': int(made.group(1)) if made else 0,
          'changes_by_rule': by_rule(changed), 'todos': len(TODO_RULE.findall(text)),
          'todos_by_rule': by_rule(TODO_RULE.findall(text)), 'output': text}


# Under the replay's output folder: the model_dirs of estimators given none (REPLAY_HOOK).
TEMPORARY_MODEL_DIRS = 'temporary_model_dirs'
JUDGE = '{py} -m estimator_tpu.readiness --run -- '
# What `readiness --run` says of a program that built no estimator (program_run._judged_something).
NOTHING_JUDGED = 'without building an Estimator or TPUEstimator: nothing was judged'
CHECK_LINE = re.compile(r'^(PASS|FAIL|SKIP) (\w+)', re.M)


def judge_commands(replay_command):
  """The replay once per program it runs, that program under `readiness --run` (issue 26's requirement 1): every
  `{py} ` but those that run the data maker (`{py} {data}/...`); a replay of train.py then eval.py is judged twice,
  once at each."""
  commands = []
  for at in [match.start() for match in re.finditer(r'\{py\} ', replay_command)]:
    rest = replay_command[at + len('{py} '):]
    if not rest.startswith('{data}/'):
      commands.append(replay_command[:at] + JUDGE + rest)
  return commands


def judged(program, folder, ported, run_dir, data, runs, python, timeout, hook=None):
  """`readiness --run` on the port, replayed as the original ran, at each program of the replay: the exit status
  (the worst), the check lines of all, and their logs. A step of the replay that builds no estimator (a script that
  prepares data) is left out when another one was judged."""
  results = []
  # `run.judge_replay`: the program as its users start it on a TPU (its TPU flags), where the CPU replay would have
  # its model_fn build the CPU path (a model_fn that takes use_tpu from the program's own flags).
  commands = judge_commands(program['run'].get('judge_replay') or program['run']['replay'])
  for index, command in enumerate(commands):
    where = run_dir if len(commands) == 1 else '%s-%d' % (run_dir, index + 1)
    result = replay(dict(program, run=dict(program['run'], replay=command)), folder, ported, where, data, runs,
                    python, timeout, hook=hook)
    with open(result['log']) as f:
      log = f.read()
    results.append((result, CHECK_LINE.findall(log), NOTHING_JUDGED in log))
  if not results:
    return None
  kept = [each for each in results if not each[2]] or results
  lines = [line for _, found, _ in kept for line in found]
  exits = [result['exit'] for result, _, _ in kept]
  failed = sorted(set(name for verdict, name in lines if verdict == 'FAIL'))
  return {'exit': next((code for code in exits if code != 0), 0),
          'passed': sum(1 for verdict, _ in lines if verdict == 'PASS'),
          'failed': sum(1 for verdict, _ in lines if verdict == 'FAIL'), 'failed_checks': failed,
          'logs': [result['log'] for result, _, _ in kept], 'log': kept[-1][0]['log']}


def parse_metrics(log):
  """Every evaluation the run logged: [(step, {name: value})] in order. An array value (a confusion matrix, which
  NumPy prints a row a line) is read to its last row, as one line of text."""
  found = []
  lines = log.splitlines()
  for index, line in enumerate(lines):
    match = METRICS.search(line)
    if not match:
      continue
    pairs, following = match.group(2), iter(lines[index + 1:])
    while pairs.count('[') > pairs.count(']'):
      more = next(following, None)
      if more is None:
        break
      pairs += ' ' + more.strip()
    values = {}
    for pair in _top_level_parts(pairs):
      name, _, value = pair.partition(' = ')
      try:
        values[name.strip()] = float(value)
      except ValueError:
        values[name.strip()] = ' '.join(value.split())
    found.append((int(match.group(1)), values))
  return found


def _top_level_parts(text):
  """text split at the ', ' that are outside brackets."""
  parts, depth, start = [], 0, 0
  for index, char in enumerate(text):
    depth += {'[': 1, '(': 1, ']': -1, ')': -1}.get(char, 0)
    if depth <= 0 and text.startswith(', ', index):
      parts.append(text[start:index])
      start = index + 2
  return parts + [text[start:]]


def write_hook(folder):
  """REPLAY_HOOK as folder/sitecustomize.py; returns the folder, to put first on every replay's path."""
  os.makedirs(folder, exist_ok=True)
  with open(os.path.join(folder, 'sitecustomize.py'), 'w') as f:
    f.write(REPLAY_HOOK)
  return folder


def checkpoint_folder(program, run_dir):
  """Where the replay leaves its checkpoints: run.checkpoint ({prog}/... or {out}/...), by default {out}."""
  return program['run'].get('checkpoint', '{out}').format(prog=os.path.join(run_dir, 'prog'),
                                                          out=os.path.join(run_dir, 'out'))


def replay(program, folder, ported, run_dir, data, runs, python, timeout, hook=None, checkpoint_of=None):
  """Copies the program's folder (with the port's files over it when `ported` is given) and runs the recorded
  command there with a fresh output folder; returns its exit status, seconds, metrics and the log's tail.
  `hook` (REPLAY_HOOK's folder) goes first on its path. With `checkpoint_of` (another run's folder), the
  checkpoints are copied in first and the hook turns training off, so the run only evaluates those weights."""
  shutil.rmtree(run_dir, ignore_errors=True)
  prog, out = os.path.join(run_dir, 'prog'), os.path.join(run_dir, 'out')
  shutil.copytree(folder, prog, symlinks=True, ignore=shutil.ignore_patterns('.git'))
  if ported:
    for root, _, files in os.walk(ported):
      for name in files:
        target = os.path.join(prog, os.path.relpath(os.path.join(root, name), ported))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.islink(target):
          os.unlink(target)  # a file the program links in from elsewhere (even a dangling link): the port's replaces it
        shutil.copyfile(os.path.join(root, name), target)
  os.makedirs(out)
  env = dict(os.environ, PYTHONHASHSEED='0', PYTHONPATH=os.pathsep.join([hook, REPO_ROOT]) if hook else REPO_ROOT,
             WRITE_RUNS_MODEL_DIRS=os.path.join(out, TEMPORARY_MODEL_DIRS))
  if checkpoint_of:
    target = checkpoint_folder(program, run_dir)
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(checkpoint_folder(program, checkpoint_of), target, symlinks=True)
    env.update(WRITE_RUNS_EVAL_ONLY='1')
  command = program['run']['replay'].format(py=python, prog=prog, out=out, data=data, runs=runs)
  start = time.time()
  try:
    completed = subprocess.run(['bash', '-c', command], cwd=prog, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=timeout, env=env)
    status, log = completed.returncode, completed.stdout
  except subprocess.TimeoutExpired as e:
    status, log = 'timeout', (e.stdout or b'').decode('utf-8', 'replace') if isinstance(e.stdout, bytes) else ''
  with open(os.path.join(run_dir, 'log.txt'), 'w') as f:
    f.write('$ %s\n%s' % (command, log))
  return {'exit': status, 'seconds': round(time.time() - start, 1), 'metrics': parse_metrics(log),
          'tail': [line for line in log.splitlines() if line.strip()][-3:], 'log': os.path.join(run_dir, 'log.txt')}


def compare(original, ported, tolerance=None):
  """The last evaluation of each run: the same metric names? each value (original/port); with a tolerance, whether
  every value agrees within it (relative)."""
  if not original or not ported or not original['metrics'] or not ported['metrics']:
    return '-'
  (step_o, a), (step_p, b) = original['metrics'][-1], ported['metrics'][-1]
  if sorted(a) != sorted(b):
    return 'metrics differ: only original %s, only port %s' % (sorted(set(a) - set(b)), sorted(set(b) - set(a)))
  parts, differ = [], []
  for name in sorted(a):
    if isinstance(a[name], float) and isinstance(b[name], float):
      parts.append('%s %.6g/%.6g' % (name, a[name], b[name]))
      if tolerance is not None and abs(a[name] - b[name]) > tolerance * max(abs(a[name]), abs(b[name]), 1e-12):
        differ.append(name)
    else:  # a value logged as text (a matrix's first row): compared as it reads
      parts.append('%s %s/%s' % (name, a[name], b[name]))
      if a[name] != b[name]:
        differ.append(name)
  if tolerance is not None and not [name for name in a if name != 'global_step']:
    return 'NOTHING COMPARED (only the global step was logged): step %d/%d' % (step_o, step_p)
  verdict = '' if tolerance is None else ('SAME (rel %g): ' % tolerance if not differ else
                                          'DIFFER in %s: ' % ', '.join(differ))
  return '%sstep %d/%d: %s' % (verdict, step_o, step_p, '; '.join(parts))


def _restored_nothing(run):
  """True when a run's last evaluation reports global_step 0: it evaluated an untrained model."""
  return bool(run and run['metrics'] and run['metrics'][-1][0] == 0)


def evaluate_checkpoint(evaluate, ported):
  """Both evaluate the original's checkpoint (no training): the same weights, so the CPU's metrics must agree.
  `evaluate(kind, source)` runs one evaluation (source None: the original). Where they differ, the original
  evaluates its checkpoint a second time: a program whose evaluation draws at random (an unseeded shuffle or noise
  op) differs from itself, and the row says so instead of calling the port's different numbers a change."""
  row = {'original_eval': evaluate('original', None), 'ported_eval': evaluate('port', ported)}
  row['checkpoint_compare'] = compare(row['original_eval'], row['ported_eval'], tolerance=1e-4)
  if _restored_nothing(row['original_eval']):
    # A model_dir the replay leaves nowhere to copy (tempfile.mkdtemp()): both evaluated fresh random weights.
    row['checkpoint_compare'] = 'no checkpoint restored (global_step 0): ' + row['checkpoint_compare']
  elif row['checkpoint_compare'].startswith('DIFFER'):
    row['original_eval_again'] = evaluate('original-again', None)
    itself = compare(row['original_eval'], row['original_eval_again'], tolerance=1e-4)
    if itself.startswith('DIFFER'):
      row['checkpoint_compare'] = "RANDOM (the original's own two evaluations differ too, %s): %s" % (
          itself[len('DIFFER '):].split(':')[0], row['checkpoint_compare'])
  return row


def parse_args(argv):
  parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
  parser.add_argument('--checkouts', required=True, help='DIR/<owner>/<name>: the repositories at their commits')
  parser.add_argument('--runs', required=True, help='RUNS/<name>: each program\'s synthetic-data setup')
  parser.add_argument('--work', required=True, help='scratch folder for the ports and the runs (outside the repo)')
  parser.add_argument('--python', default=sys.executable, help='the Python (TF) the originals ran with')
  parser.add_argument('--programs', default=score.PROGRAMS)
  parser.add_argument('--names', default='', help='comma-separated program names (default: all that ran)')
  parser.add_argument('--timeout', type=float, default=900, help='seconds per run')
  parser.add_argument('--save', help='write the rows as JSON here')
  parser.add_argument('--judge', action='store_true', help='also run the port under `readiness --run`')
  return parser.parse_args(argv)


def main(argv=None):
  args = parse_args(sys.argv[1:] if argv is None else argv)
  names = [n for n in args.names.split(',') if n]
  with open(args.programs) as f:
    programs = [p for p in json.load(f) if (p.get('run') or {}).get('original_ran') and p['run'].get('replay')
                and (not names or p['name'] in names)]
  rows = []
  hook = write_hook(os.path.join(os.path.abspath(args.work), 'replay_hook'))
  print('| name | set | original | port exit | changes | TODOs | port runs | last evaluation, fresh runs (original/port)'
        ' | evaluation of the original\'s checkpoint (original/port) | readiness --run on the port |')
  print('|---|---|---|---|---|---|---|---|---|---|')
  for program in programs:
    folder = os.path.join(score.repository_folder(args.checkouts, program['repository']), program['folder'])
    base = os.path.join(os.path.abspath(args.work), program['name'])
    data = os.path.join(os.path.abspath(args.runs), program['name'])
    written = port(program, folder, os.path.join(base, 'port'), args.python)
    original = replay(program, folder, None, os.path.join(base, 'run-original'), data, os.path.abspath(args.runs),
                      args.python, args.timeout, hook=hook)
    ported = None
    if written['exit'] in (0, 1):
      ported = replay(program, folder, os.path.join(base, 'port'), os.path.join(base, 'run-port'), data,
                      os.path.abspath(args.runs), args.python, args.timeout, hook=hook)
    row = {'name': program['name'], 'set': program['set'], 'port': written, 'original': original, 'ported': ported,
           'compare': compare(original, ported)}
    saved = os.path.join(base, 'run-original')
    if ported and ported['exit'] == 0 and original['exit'] == 0 and 'checkpoint' in program['run'] and \
        not os.path.isdir(checkpoint_folder(program, saved)):
      row['checkpoint_compare'] = 'no checkpoint at %s' % checkpoint_folder(program, saved)
    elif ported and ported['exit'] == 0 and original['exit'] == 0:
      row.update(evaluate_checkpoint(
          lambda kind, source: replay(program, folder, source, os.path.join(base, 'eval-' + kind), data,
                                      os.path.abspath(args.runs), args.python, args.timeout, hook=hook,
                                      checkpoint_of=os.path.join(base, 'run-original')),
          os.path.join(base, 'port')))
    if args.judge and ported:
      row['judged'] = judged(program, folder, os.path.join(base, 'port'), os.path.join(base, 'judge-port'), data,
                             os.path.abspath(args.runs), args.python, args.timeout, hook=hook)
    rows.append(row)
    judge = row.get('judged')
    print('| %s | %s | exit %s | %s | %d (%s) | %d (%s) | %s | %s | %s | %s |' % (
        program['name'], program['set'], original['exit'], written['exit'], written['changes'],
        written['changes_by_rule'], written['todos'], written['todos_by_rule'],
        ('exit %s' % ported['exit']) if ported else 'not written', row['compare'],
        row.get('checkpoint_compare', '-'),
        'exit %s, %d PASS, %d FAIL%s' % (judge['exit'], judge['passed'], judge['failed'],
                                         ' (%s)' % ', '.join(judge['failed_checks']) if judge['failed'] else '')
        if judge else '-'), flush=True)
  if args.save:
    with open(args.save, 'w') as f:
      json.dump(rows, f, indent=1)
  return 0


if __name__ == '__main__':
  sys.exit(main())
