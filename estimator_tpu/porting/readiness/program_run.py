"""`python -m estimator_tpu.readiness --run`: the user's own program, run as `__main__`, judged by TensorFlow.

  python -m estimator_tpu.readiness --run [--tpu_type=v3-8 | --num_shards=N] [--steps=K] [--batch_size=N]
      -- train.py ARGS...        (or: -- -m trainer.task ARGS...)

The program runs with its own arguments (sys.argv = [train.py] + ARGS), from the current folder, with its own
folder first on sys.path, as `python train.py ARGS` would; `-m trainer.task` runs a module of the current folder's
packages as `python -m trainer.task ARGS` would (the Cloud ML Engine layout). Every estimator it builds and every train, evaluate,
predict and export call it makes (tf.estimator.train_and_evaluate's among them) is judged first (call_checks.py),
then run on this CPU for a few steps (interception.py) with its model_dir in a scratch folder, so that the program
reaches its next call. One line per check, as `--mode=check_tpu` prints them; a FAIL names the place in the
program. Exit status 0 when nothing failed, 1 when a check failed or the program raised, 2 when it could not run
(no such file, a flag of this command, or the program stopped before it built any estimator).
"""
import contextlib
import os
import runpy
import shutil
import signal
import sys
import threading
import time

from absl import flags

from estimator_tpu.porting.readiness import call_checks
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import interception
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import accelerator_types

PROGRAM = 'python -m estimator_tpu.readiness --run'
USAGE = ('%s [--tpu_type=v3-8 | --num_shards=N] [--steps=K] [--batch_size=N] -- train.py ARGS... (or -- -m '
         'package.module ARGS...)' % PROGRAM)
DEFAULT_STEPS = 2
EXIT_BAD_INPUT = 2
# A sleep this long or longer is the program waiting (an evaluation delay, a poll for checkpoints its run writes):
# it is skipped, and the program is stopped at the WAITS_ALLOWED + 1th, since the judge moved its model_dirs to a
# scratch folder and no training runs beside it, so what it waits for may never come.
LONG_SLEEP_SECS = 5
WAITS_ALLOWED = 2


class _Waiting(BaseException):
  """Stops a program that keeps sleeping (a BaseException, as KeyboardInterrupt is: `except Exception` in the
  program does not hold it)."""

  def __init__(self, seconds, site):
    super(_Waiting, self).__init__(seconds, site)
    self.seconds, self.site = seconds, site


def define_flags(fv):
  flags.DEFINE_bool('run', False, 'Run the program after -- and judge every estimator call it makes.',
                    flag_values=fv)
  flags.DEFINE_string('tpu_type', None, 'The TPU slice to judge the calls for (v3-8, v3-32, v4-8, ...).',
                      flag_values=fv)
  flags.DEFINE_integer('num_shards', None, 'TPU cores of the slice (8 per host), instead of --tpu_type. Neither: '
                       'each TPUEstimator\'s own TPUConfig.num_shards, else 8.', lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('steps', DEFAULT_STEPS, 'Training steps, evaluation batches and predictions each call runs '
                       'on the CPU after it is judged.', lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('batch_size', None, 'Global training batch of the TPU run. Default: the TPUEstimator\'s '
                       'train_batch_size, or the batch the program\'s input_fn yields on the CPU.', lower_bound=1,
                       flag_values=fv)
  flags.register_multi_flags_validator(
      ['tpu_type', 'num_shards'], lambda f: not (f['tpu_type'] and f['num_shards']),
      message='--tpu_type and --num_shards both name the slice; pass only one of them.', flag_values=fv)


def split_argv(argv):
  """(this command's arguments, the program and its arguments)."""
  argv = list(argv)
  if '--' not in argv:
    raise UserError('--run needs the program after --.', 'write: %s' % USAGE)
  at = argv.index('--')
  program = argv[at + 1:]
  if not program:
    raise UserError('no program after --.', 'write: %s' % USAGE)
  return argv[:at], program


def parse(own):
  fv = flags.FlagValues()
  define_flags(fv)
  try:
    leftover = fv(['readiness'] + own)
  except flags.Error as e:
    raise UserError('%s.' % '; '.join(line.strip().rstrip('.') for line in str(e).splitlines() if line.strip()),
                    'write: %s' % USAGE)
  if len(leftover) > 1:
    raise UserError('unexpected arguments before --: %s.' % ' '.join(leftover[1:]), 'write: %s' % USAGE)
  return fv


def planned_slice(fv):
  if fv.tpu_type:
    return accelerator_types.parse_tpu_type(fv.tpu_type), '--tpu_type=%s' % fv.tpu_type
  if fv.num_shards:
    return accelerator_types.shape_from_cores(fv.num_shards), '--num_shards=%d' % fv.num_shards
  return None, None


def main(argv, stdout=None, stderr=None):
  stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
  try:
    return run(argv, stdout)
  except UserError as e:
    stderr.write('error: %s\n' % e)
    stderr.flush()
    return EXIT_BAD_INPUT


def run(argv, stdout):
  own, program = split_argv(argv)
  fv = parse(own)
  shape, source = planned_slice(fv)
  if program[0] == '-m':
    path, program_dir = module_program(program)
    program = [path] + program[2:]
  else:
    path = program[0]
    if not os.path.isfile(path):
      raise UserError('%s: no such file.' % path, 'give the path of your program: %s' % USAGE)
    if not path.endswith('.py'):
      raise UserError('%s is not a Python file.' % path, 'give the .py file you run with python: %s' % USAGE)
    program_dir = os.path.dirname(os.path.abspath(path))
  judge = call_checks.Judge(stdout, shape, source, fv.batch_size)
  status = run_program(path, program, program_dir, judge, fv.steps)
  if status is not None:
    return status
  return judge.summary()


def module_program(program):
  """(file, folder) of `-m package.module`, found as `python -m` finds it: in the current folder, then in the
  folders of PYTHONPATH; its packages may be namespace packages (no __init__.py), as Python 3 allows. The module is
  not imported: its package's __init__ files would run outside the judge."""
  if len(program) < 2 or program[1].startswith('-'):
    raise UserError('-m needs the module to run.', 'write: %s' % USAGE)
  parts = program[1].split('.')
  roots = [os.getcwd()] + [os.path.abspath(p) for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]
  for root in roots:
    base = os.path.join(root, *parts)
    for candidate in (base + '.py', os.path.join(base, '__main__.py')):
      if os.path.isfile(candidate):
        return candidate, root
  raise UserError('no module %s under %s or the folders of PYTHONPATH (a folder %s with %s.py).' % (
      program[1], os.getcwd(), os.sep.join(parts[:-1]) or '.', parts[-1]),
      'run from the folder you run `python -m %s` in.' % program[1])


def run_program(path, argv, program_dir, judge, steps):
  """Runs the program under the interceptor; None when it ended (or raised: a FAIL line), else the exit status
  for a program that stopped before building any estimator. A program under package folders (found by -m) runs
  as that module, so its relative imports work."""
  saved_argv, saved_path = list(sys.argv), list(sys.path)
  sys.argv = list(argv)
  sys.path.insert(0, program_dir)
  interceptor = interception.Interceptor(judge, program_dir, steps)
  module = _module_name(path, program_dir)
  try:
    with interceptor, _long_sleeps_skipped(program_dir), _cleaned_up_when_terminated():
      try:
        if module:
          runpy.run_module(module, run_name='__main__', alter_sys=True)
        else:
          runpy.run_path(path, run_name='__main__')
      except _Waiting as e:
        if not interceptor.built and not interceptor.contrib_built:
          raise UserError('%s waits (time.sleep(%g) again and again, at %s) before it built any estimator.' % (
              path, e.seconds, e.site), 'run it as `python %s` first: what it waits for is not there.' % ' '.join(argv))
        judge.report([check_results.skipped('program', 'the program keeps waiting (time.sleep(%g) again and again, at '
                                            '%s), most likely for a file its own run would write (a checkpoint: the '
                                            'judge moved each model_dir to a scratch folder and runs each call for a '
                                            'few steps): stopped there; every call before it is judged above.'
                                            % (e.seconds, e.site))])
      except SystemExit as e:
        code = e.code
        if code in (None, 0):
          return _judged_something(interceptor, argv)
        site = interception.program_frames(sys.exc_info()[2], program_dir)
        if not interceptor.built:
          raise UserError('%s stopped with exit status %s at %s before it built any estimator.' % (path, code, site),
                          'run it as `python %s` first: its own flags or data are wrong.' % ' '.join(argv))
        judge.crash(SystemExit('exit status %s' % code), site)
      except KeyboardInterrupt:
        raise
      except Exception as e:  # noqa: BLE001 -- the user's program raised: one FAIL line, never a traceback
        judge.crash(e, interception.program_frames(sys.exc_info()[2], program_dir))
  except _Terminated:
    raise SystemExit(128 + signal.SIGTERM)  # (after the finally below: the scratch folder is gone)
  finally:
    sys.argv[:] = saved_argv
    sys.path[:] = saved_path
    shutil.rmtree(interceptor.scratch, ignore_errors=True)  # the redirected model_dirs and exports
  return _judged_something(interceptor, argv) if not judge.counts else None


class _Terminated(BaseException):
  """SIGTERM while the program runs (a `timeout` or a scheduler stopping it): raised where the program is, past its
  own handlers (not an Exception, not SystemExit), so the scratch folder of model_dirs and exports is removed."""


@contextlib.contextmanager
def _cleaned_up_when_terminated():
  """SIGTERM raises _Terminated while the program runs (Python's default would end the process at once and leave
  the scratch folder, gigabytes of checkpoints for a large model, behind); the previous handler after it."""
  if threading.current_thread() is not threading.main_thread():
    yield
    return

  def terminated(signum, frame):  # pylint: disable=unused-argument
    raise _Terminated()

  previous = signal.signal(signal.SIGTERM, terminated)
  try:
    yield
  finally:
    signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _long_sleeps_skipped(program_dir):
  """time.sleep of LONG_SLEEP_SECS or more in the program's own thread returns at once while the program runs;
  after WAITS_ALLOWED such sleeps the next one stops the program (_Waiting): a loop that polls for a file sleeps
  forever otherwise. Other threads (a library's poll) sleep as they asked."""
  sleep, waits, program_thread = time.sleep, [], threading.current_thread()

  def judged_sleep(seconds):
    if seconds < LONG_SLEEP_SECS or threading.current_thread() is not program_thread:
      return sleep(seconds)
    waits.append(seconds)
    if len(waits) > WAITS_ALLOWED:
      raise _Waiting(seconds, interception.user_site(os.path.abspath(program_dir)))
    return None

  time.sleep = judged_sleep
  try:
    yield
  finally:
    time.sleep = sleep


def _judged_something(interceptor, argv):
  """None once the program built an estimator; a program that ran to its end without one was judged on nothing,
  which is no pass: one error line."""
  if interceptor.built or interceptor.contrib_built:
    return None
  raise UserError('`python %s` ran to its end without building an Estimator or TPUEstimator: nothing was judged.'
                  % ' '.join(argv), 'give the program that builds the estimator and trains it, with the arguments '
                  'it trains with.')


def _module_name(path, program_dir):
  """`trainer.task` for program_dir/trainer/task.py when trainer is a package; None for a file run as a script."""
  relative = os.path.relpath(os.path.abspath(path), program_dir)
  parts = relative[:-len('.py')].split(os.sep)
  if len(parts) < 2 or relative.startswith(os.pardir):
    return None
  if parts[-1] == '__main__':
    parts = parts[:-1]
  return '.'.join(parts)
