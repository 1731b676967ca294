"""Runs a Python program as every task of a TF_CONFIG cluster on this machine: ps, chief, workers, evaluator.

  python -m tools.local_cluster [--workers=1 --ps=1 --evaluator --task_log_dir=DIR --timeout_secs=S] \
      -- PROGRAM.py ARGS   (or -- -m MODULE ARGS)

  python -m tools.prepare_data --data_dir=/tmp/mnist
  python -m tools.local_cluster --workers=2 -- -m tools.mnist_cluster --data_dir=/tmp/mnist \
      --model_dir=/tmp/mnist_cluster

Each task runs `<this Python> PROGRAM.py ARGS` (or `-m MODULE ARGS`, from this directory) with its own TF_CONFIG, on ports of 127.0.0.1, and logs to
<task_log_dir>/<task>.log. When the chief, every worker and the evaluator have exited with status 0, the
parameter servers are stopped and the exit status is 0. If a task fails, the time runs out or the launcher is
interrupted (Ctrl-C, SIGTERM), every task still running is stopped and the exit status is non-zero.
"""
import datetime
import importlib.util
import os
import signal
import sys
import tempfile

from absl import app
from absl import flags

from estimator_tpu.distributed import local_cluster
from estimator_tpu.runtime.errors import UserError
from flags import local_cluster as local_cluster_flags

FLAGS = flags.FLAGS
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def default_log_dir():
  stamp = datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
  return os.path.join(tempfile.gettempdir(), 'estimator_tpu', 'cluster-%s' % stamp)


def task_command(argv):
  """[this Python, PROGRAM.py, ARGS...] or [this Python, -m, MODULE, ARGS...] from the arguments after `--`."""
  if not argv or argv == ['-m']:
    raise UserError('no program to run.', 'name it after --, e.g. `python -m tools.local_cluster -- -m '
                    'tools.mnist_cluster --data_dir=DIR --model_dir=DIR`.')
  if argv[0] == '-m':
    if not _module_exists(argv[1]):
      raise UserError('the module %s does not exist.' % argv[1], 'give a module importable from here after -m.')
  elif not os.path.isfile(argv[0]):
    raise UserError('the program %s does not exist.' % argv[0], 'give the path of a Python file after --.')
  return [sys.executable] + argv


def _module_exists(name):
  try:
    return importlib.util.find_spec(name) is not None
  except (ImportError, ValueError):  # a parent package is missing, or the name is empty
    return False


def print_results(results):
  for result in results:
    if result.stopped:
      ending = 'stopped' if result.returncode is None or result.returncode < 0 else 'exit %d' % result.returncode
    else:
      ending = 'exit %d' % result.returncode
    print('%-12s %-8s after %6.1f s  log: %s' % (result.task.name, ending, result.seconds, result.log_path))


def interrupt(signum, frame):
  """SIGTERM or SIGINT (a signal handler's arguments): unwinds through the `with` in run(), which stops every
  task. Later signals are ignored, so that a second Ctrl-C cannot cut that short."""
  del signum, frame
  for stop_signal in STOP_SIGNALS:
    signal.signal(stop_signal, signal.SIG_IGN)
  raise KeyboardInterrupt()


def run(command):
  log_dir = FLAGS.task_log_dir or default_log_dir()
  cluster = local_cluster.LocalCluster(command, log_dir, num_workers=FLAGS.workers, num_ps=FLAGS.ps,
                                       evaluator=FLAGS.evaluator)
  print('Cluster %s; logs in %s' % (cluster.spec, log_dir))
  with cluster:
    try:
      results = cluster.wait(timeout_secs=FLAGS.timeout_secs or None)
    except local_cluster.ClusterError as e:
      print_results(e.results)
      failed = [r for r in e.results if r.returncode not in (0, None) and not r.stopped]
      for result in failed[:1]:
        sys.stderr.write('--- last lines of %s ---\n%s' % (result.log_path, cluster.log_tail(result.task)))
      raise UserError('%s' % e, 'read the task logs in %s.' % log_dir)
  print_results(results)


def main(argv):
  for signum in STOP_SIGNALS:
    signal.signal(signum, interrupt)
  try:
    run(task_command(argv[1:]))
  except UserError as e:
    sys.stderr.write('error: %s\n' % e)
    sys.exit(1)
  except KeyboardInterrupt:
    sys.stderr.write('error: interrupted; every task was stopped.\n')
    sys.exit(130)


if __name__ == '__main__':
  local_cluster_flags.define_local_cluster_flags()
  app.run(main)
