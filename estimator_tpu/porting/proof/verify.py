"""--verify: the proof that a port changed nothing but what the TPU requires, on the user's own program.

  python -m estimator_tpu.port --verify PORTED_DIR PATH [PATH ...] --model_fn=MODULE:NAME
      --train_input_fn=MODULE:NAME [--eval_input_fn=MODULE:NAME] [--params=JSON] [--batch_size=N]
      [--eval_batch_size=N] [--train_steps=N] [--continue_steps=N] [--data=MODULE:NAME] [--data_dir=DIR]

PATH is the original program (as given to --write, from the same folder), PORTED_DIR what --write wrote. The
entry points name the original's functions as the readiness check takes them (MODULE:NAME or a builder call
MODULE:NAME(arg=literal, ...)); the same names, imported from the ported copy, are the port's. `{data_dir}` in
them is the data folder; --data names a function that writes the data there (called with it).

One line per check, in the form of the readiness check's lines:
  report          (b) the port report on PORTED_DIR lists nothing required but the TODOs the port wrote
  imports         (a) every ported file parses, and the entry points import from the ported copy
  train_evaluate  (c) the port trains and evaluates under TPUEstimator(use_tpu=False) on this CPU
  same_metrics    (d) evaluated on the original's checkpoint, it gives the original's metrics, every example
                      counted once (the original reads its evaluation input to the end)
  same_losses     (d) trained from that checkpoint on the same batches, it gives the original's per-step losses
  readiness       (e) python -m estimator_tpu.readiness passes on the port's model_fn and input_fns: the TPU path
                      of training, and with --eval_input_fn of evaluation and prediction (eval_metrics and
                      predictions through TensorFlow's outfeed, one core's steps compiled with XLA)

How randomness is held equal: both train from the same checkpoint with the same graph seed (RunConfig's
tf_random_seed, --seed), on the same batches (the first --continue_steps batches of the original's training
input, read once and fed to both), in a training graph built the same way for both (the global step, the
batches, then model_fn), so that the port's model_fn, whose code before its random ops (dropout) is the
original's, draws the same random numbers. Losses and metrics must agree within a relative 1e-5 (float32
sums in another order).

The original and the port run in two processes (they have the same module names): the original from the
folder PATH is relative to, the port from a copy of that folder with PORTED_DIR's files in their places.
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

from estimator_tpu.porting.program import estimators
from estimator_tpu.porting.program import files
from estimator_tpu.porting.program import reading
from estimator_tpu.porting.report import REQUIRED
from estimator_tpu.porting.report import scan_paths
from estimator_tpu.porting.rewrite import output
from estimator_tpu.runtime.errors import UserError

RTOL = 1e-5
# Each check and the part of the proof it is: (a) to (e) of docs/MIGRATION.md, "Porting your own Estimator code".
CHECKS = collections.OrderedDict([('report', 'b'), ('imports', 'a'), ('train_evaluate', 'c'), ('same_metrics', 'd'),
                                  ('same_losses', 'd'), ('readiness', 'e')])
WORKER_TIMEOUT_SECS = 900
PASS, FAIL, SKIP = 'PASS', 'FAIL', 'SKIP'


class Check(collections.namedtuple('Check', ['name', 'status', 'message', 'fix'])):
  """One check of the proof, printed like the readiness check's lines."""

  def line(self):
    text = '%s %s (%s): %s' % (self.status, self.name, CHECKS[self.name], self.message)
    return text + (' Fix: %s' % self.fix if self.status == FAIL and self.fix else '')


class _Results(object):
  """The constructors of Check, as readiness.results has them for its lines."""
  FAIL = FAIL
  SKIP = SKIP

  @staticmethod
  def passed(name, message):
    return Check(name, PASS, message, None)

  @staticmethod
  def failed(name, message, fix):
    return Check(name, FAIL, message, fix)

  @staticmethod
  def skipped(name, message):
    return Check(name, SKIP, message, None)


results = _Results()


def add_arguments(parser):
  group = parser.add_argument_group('--verify', 'the entry points and what to feed them')
  group.add_argument('--model_fn', help='the model_fn: MODULE:NAME or MODULE:NAME(arg=literal, ...)')
  group.add_argument('--train_input_fn', help='the training input_fn, named the same way')
  group.add_argument('--eval_input_fn', help='the evaluation input_fn (without it, same_metrics is not checked)')
  group.add_argument('--params', default='{}', help='params of both model_fns, as a JSON object')
  group.add_argument('--batch_size', type=int, default=16, help='global training batch (default 16)')
  group.add_argument('--eval_batch_size', type=int, default=None, help='global evaluation batch (default: '
                     '--batch_size)')
  group.add_argument('--train_steps', type=int, default=4, help='steps the original trains (default 4)')
  group.add_argument('--continue_steps', type=int, default=3, help='steps both train from its checkpoint')
  group.add_argument('--seed', type=int, default=1, help='the graph seed of every run (default 1)')
  group.add_argument('--data', help='MODULE:NAME of a function that writes the data into its argument')
  group.add_argument('--data_dir', help='the data folder ({data_dir} in the entry points); default: a new one')
  group.add_argument('--readiness_model_fn', help='the model_fn for the readiness check, when it differs (a builder '
                     'that takes use_tpu, as BERT\'s does: use_tpu=True there)')
  group.add_argument('--readiness_eval_input_fn', help='the evaluation input_fn for the readiness check, when the '
                     'TPU run uses another one (BERT\'s with drop_remainder=True on a TPU); default --eval_input_fn')
  group.add_argument('--readiness_args', default='', help='more flags for the readiness check, e.g. '
                     '"--num_shards=8 --eval_batch_size=64"')


def main(args, stdout):
  """--verify from the command line: one line per check, then the summary; 0 when every check passed."""
  if not args.model_fn or not args.train_input_fn:
    raise UserError('--verify needs the entry points.', 'pass --model_fn=MODULE:NAME and '
                    '--train_input_fn=MODULE:NAME (and --eval_input_fn to compare metrics).')
  if not os.path.isdir(args.verify):
    raise UserError('%s is not a folder.' % args.verify, 'give --verify the OUT_DIR that --write wrote.')
  request = request_from(args)
  checks = run(args.paths, args.verify, request)
  return print_checks(checks, stdout)


def request_from(args):
  return {
      'model_fn': args.model_fn, 'train_input_fn': args.train_input_fn, 'eval_input_fn': args.eval_input_fn,
      'params': json.loads(args.params or '{}'), 'batch_size': args.batch_size,
      'eval_batch_size': args.eval_batch_size or args.batch_size, 'train_steps': args.train_steps,
      'continue_steps': args.continue_steps, 'seed': args.seed, 'data': args.data, 'data_dir': args.data_dir,
      'readiness_args': args.readiness_args.split(), 'readiness_model_fn': args.readiness_model_fn,
      'readiness_eval_input_fn': args.readiness_eval_input_fn,
  }


def print_checks(checks, stdout):
  failed = [c for c in checks if c.status == results.FAIL]
  skipped = [c for c in checks if c.status == results.SKIP]
  for check in checks:
    stdout.write(check.line() + '\n')
  if skipped:
    stdout.write('Not checked: %s.\n' % '; '.join('%s (%s)' % (c.name, c.message.rstrip('.')) for c in skipped))
  stdout.write('Port proof: %d passed, %d failed, %d not checked.\n' % (
      len(checks) - len(failed) - len(skipped), len(failed), len(skipped)))
  return 1 if failed else 0


# --- the checks ---------------------------------------------------------------------------------------------------

def run(paths, ported_dir, request, base=None):
  """Every check, as readiness CheckResults (status PASS/FAIL/SKIP)."""
  base = os.path.abspath(base or os.getcwd())
  checks = [check_report(paths, ported_dir, base)]
  work = tempfile.mkdtemp(prefix='port-verify-')
  try:
    tree = os.path.join(work, 'ported')
    overlay(base, ported_dir, tree)
    request = dict(request, data_dir=request.get('data_dir') or os.path.join(work, 'data'), work=work,
                   original_kind=original_kind(paths), padded=pads_evaluation(ported_dir))
    parse_problem = check_parses(ported_dir)
    original = _worker('original', base, dict(request, model_dir=os.path.join(work, 'original')))
    if original.get('error'):
      return checks + [results.failed('imports', parse_problem or 'the original did not run: %s' %
                                      original['error'], 'make the original run with these entry points.')] + [
                                          results.skipped(name, 'the original did not run.')
                                          for name in list(CHECKS)[2:]]
    port = _worker('port', tree, dict(request, model_dir=os.path.join(work, 'port'), original=original))
    checks.append(results.failed('imports', parse_problem, 'fix the ported files.') if parse_problem else
                  results.failed('imports', port['error'], 'fix what the port broke (or a TODO left there).')
                  if port.get('error') and port.get('stage') == 'import' else
                  results.passed('imports', 'every ported file parses; the entry points import from the ported '
                                 'copy.'))
    checks += port_checks(original, port, request)
  finally:
    shutil.rmtree(work, ignore_errors=True)
  return checks


def original_kind(paths):
  """'tpu' when the original program builds TPUEstimators only (it is run as one), else 'plain'."""
  program, _ = reading.read(paths)
  sites = [s for s in estimators.Index(program).sites.values() if s.kind in ('estimator', 'tpu')]
  return 'tpu' if sites and all(site.kind == 'tpu' for site in sites) else 'plain'


def pads_evaluation(ported_dir):
  """Whether the port evaluates on padded input (it wrote tpu_exact_eval_input): then so does the proof."""
  for root, _, names in os.walk(ported_dir):
    for name in names:
      if name.endswith('.py'):
        with open(os.path.join(root, name)) as f:
          if 'def tpu_exact_eval_input(' in f.read():
            return True
  return False


def check_report(paths, ported_dir, base):
  """(b) The port report on the ported files: every required finding is at a TODO the port wrote."""
  # Checks rule 13 (readiness).
  ported_paths = []
  for path in paths:
    relative = os.path.relpath(os.path.join(base, path), base)
    ported_paths.append(os.path.join(ported_dir, relative))
  missing = [p for p in ported_paths if not os.path.exists(p)]
  if missing:
    return results.failed('report', '%s not in the ported copy.' % ', '.join(missing),
                          'give --verify the folder --write wrote, and the same PATHs.')
  report = scan_paths(ported_paths)
  required = [f for f in report.findings if f.severity == REQUIRED]
  cache = {}
  uncovered = [f for f in required if not at_todo(f, cache)]
  if uncovered:
    return results.failed('report', '%d required finding(s) the port left without a TODO: %s' % (
        len(uncovered), '; '.join('%s:%d rule %d' % (os.path.relpath(f.path, ported_dir), f.line, f.rule)
                                  for f in uncovered[:5])), 'report it: the port should have made or marked it.')
  if required:
    return results.passed('report', 'the port report lists %d required finding(s), each at a TODO the port '
                          'wrote.' % len(required))
  return results.passed('report', 'the port report requires nothing.')


def at_todo(finding, coverage_cache):
  """Whether a finding is on a statement under a `# TODO(tpu port, rule N)` comment of its rule (coverage_cache:
  {path: coverage}, filled as files are read)."""
  if finding.path not in coverage_cache:
    with open(finding.path) as f:
      coverage_cache[finding.path] = output.todo_coverage(f.read())
  return finding.line in coverage_cache[finding.path].get(finding.rule, ())


def check_parses(ported_dir):
  """None, or what does not parse in the ported copy."""
  for root, _, names in os.walk(ported_dir):
    for name in names:
      if name.endswith('.py'):
        _, problem = files.read_module(os.path.join(root, name))
        if problem is not None:
          return '%s %s' % (problem.path, problem.problem)
  return None


def port_checks(original, port, request):
  if port.get('error'):
    failure = results.failed('train_evaluate', port['error'], 'fix what the port broke (or a TODO left there).')
    return [failure] + [results.skipped(n, 'the port did not run.') for n in list(CHECKS)[3:]]
  evaluated = ' and evaluated the checkpoint (below)' if port.get('metrics') is not None else ''
  checks = [results.passed('train_evaluate', 'under TPUEstimator(use_tpu=False) on this CPU, trained from the '
                           'original\'s checkpoint to global step %d on the port\'s own input%s.' % (
                               port['trained_metrics']['global_step'], evaluated))]
  if original.get('metrics') is None:
    checks.append(results.skipped('same_metrics', 'no --eval_input_fn given.'))
  else:
    difference = compare(original['metrics'], port['metrics'])
    if difference:
      checks.append(results.failed('same_metrics', difference, 'the port changed what the model computes.'))
    else:
      largest = max(_relative(original['metrics'][k], port['metrics'][k]) for k in original['metrics'])
      checks.append(results.passed('same_metrics', 'on the original\'s checkpoint (step %d), every metric as the '
                                   'original\'s within %g (largest difference %.1e): %s.' % (
                                       original['step'], RTOL, largest, _metrics_text(port['metrics']))))
  losses = compare_losses(original['losses'], port['losses'])
  checks.append(results.failed('same_losses', losses, 'the port changed how the model trains.') if losses else
                results.passed('same_losses', '%d steps from the checkpoint on the same batches, per-step losses '
                               'as the original\'s within %g (largest difference %.1e): %s.' % (
                                   len(port['losses']), RTOL, max([0.0] + [_relative(a, b) for a, b in zip(
                                       original['losses'], port['losses'])]),
                                   ', '.join('%.6g' % x for x in port['losses']))))
  ready = port.get('readiness')
  if ready is None:
    checks.append(results.skipped('readiness', 'the readiness check did not run.'))
  elif ready['status'] == 0:
    checks.append(results.passed('readiness', 'python -m estimator_tpu.readiness passes on the port (%s).'
                                 % ready['summary']))
  else:
    checks.append(results.failed('readiness', ready['summary'] + ': ' + '; '.join(ready['failures']),
                                 'resolve what the readiness check names (a TODO the port left?).'))
  return checks


def compare(expected, actual):
  """None, or which metrics differ (by more than RTOL)."""
  problems = []
  for key in sorted(set(expected) | set(actual)):
    if key not in expected or key not in actual:
      problems.append('%s only in the %s' % (key, 'port' if key in actual else 'original'))
    elif not _close(expected[key], actual[key]):
      problems.append('%s %r (original) != %r (port)' % (key, expected[key], actual[key]))
  return '; '.join(problems) or None


def compare_losses(expected, actual):
  if len(expected) != len(actual):
    return '%d losses (original) != %d (port)' % (len(expected), len(actual))
  for step, (a, b) in enumerate(zip(expected, actual), 1):
    if not _close(a, b):
      return 'step %d: loss %r (original) != %r (port)' % (step, a, b)
  return None


def _close(a, b):
  return _relative(a, b) <= RTOL


def _relative(a, b):
  """The difference of two numbers, relative to the larger (to 1 for numbers below 1)."""
  return abs(a - b) / max(1.0, abs(a), abs(b))


def _metrics_text(metrics):
  return ', '.join('%s %.6g' % (k, v) for k, v in sorted(metrics.items()))


# --- the two trees and their processes ----------------------------------------------------------------------------

def overlay(root, ported_dir, target):
  """`target`: the folder `root` with the files of `ported_dir` in their places (everything else linked)."""
  ported = set()
  for folder, _, names in os.walk(ported_dir):
    for name in names:
      ported.add(os.path.relpath(os.path.join(folder, name), ported_dir))

  def build(relative):
    source = os.path.join(root, relative)
    destination = os.path.join(target, relative)
    os.makedirs(destination, exist_ok=True)
    for name in sorted(os.listdir(source)):
      if name.startswith('.') or name == '__pycache__':
        continue
      path = os.path.join(relative, name) if relative else name
      if path in ported:
        shutil.copy(os.path.join(ported_dir, path), os.path.join(target, path))
      elif any(p.startswith(path + os.sep) for p in ported):
        build(path)
      else:
        os.symlink(os.path.join(source, name), os.path.join(target, path))

  build('')


def _worker(role, tree, request):
  """Runs this module as a worker of `role` in the folder `tree`; returns its result (or {'error': ...})."""
  work = request['work']
  request_path = os.path.join(work, role + '_request.json')
  result_path = os.path.join(work, role + '_result.json')
  with open(request_path, 'w') as f:
    json.dump(request, f)
  tool_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
  env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree, tool_root] + [
      p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
  completed = subprocess.run([sys.executable, '-m', 'estimator_tpu.porting.proof.worker', role, request_path,
                              result_path], cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, timeout=WORKER_TIMEOUT_SECS)
  if os.path.exists(result_path):
    with open(result_path) as f:
      return json.load(f)
  lines = [line for line in completed.stderr.splitlines() if line.strip()]
  return {'error': 'the %s process ended with status %d: %s' % (role, completed.returncode,
                                                                 lines[-1] if lines else '(no output)')}

