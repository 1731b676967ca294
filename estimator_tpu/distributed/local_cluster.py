"""A TF_CONFIG cluster on this machine: one process per task (ps, chief, workers, evaluator) on 127.0.0.1.

For trying distributed training without machines, and for testing it. Every task runs the same command; only its
TF_CONFIG differs. The run is over when the chief, every worker and the evaluator have exited; the parameter
servers, which serve until they are stopped, are then stopped. If any task fails, or the time limit passes,
every task still running is stopped. Each task runs in its own process group (its own session), so stopping a
task stops whatever it started, and a Ctrl-C meant for the launcher does not hit the tasks half-way.

No shell is involved: the command is an argument list.
"""
import collections
import contextlib
import os
import signal
import socket
import subprocess
import time

from estimator_tpu.distributed import tf_config

HOST = '127.0.0.1'  # loopback only: the ports are reachable from this machine alone
POLL_SECS = 0.2
STOP_GRACE_SECS = 10.0
LOG_TAIL_LINES = 20


class TaskResult(collections.namedtuple('TaskResult', ['task', 'returncode', 'seconds', 'log_path', 'stopped'])):
  """How one task ended: its exit status (negative: killed by that signal), and whether we stopped it."""


class ClusterError(Exception):
  """A task failed or the cluster ran out of time; `results` says how every task ended."""

  def __init__(self, message, results):
    super(ClusterError, self).__init__(message)
    self.results = results


def free_ports(count):
  """`count` distinct ports on 127.0.0.1 that were free a moment ago (all bound at once, then released)."""
  with contextlib.ExitStack() as stack:
    sockets = [stack.enter_context(contextlib.closing(socket.socket())) for _ in range(count)]
    for sock in sockets:
      sock.bind((HOST, 0))
    return [sock.getsockname()[1] for sock in sockets]


def cluster_spec(num_workers, num_ps):
  """{'chief': [addr], 'worker': [...], 'ps': [...]} on free loopback ports (the evaluator is not in it)."""
  ports = iter(free_ports(1 + num_workers + num_ps))
  spec = {tf_config.CHIEF: ['%s:%d' % (HOST, next(ports))]}
  for job, count in ((tf_config.WORKER, num_workers), (tf_config.PS, num_ps)):
    if count:
      spec[job] = ['%s:%d' % (HOST, next(ports)) for _ in range(count)]
  return spec


def tasks_of(spec, evaluator):
  """Every task to start: parameter servers first (the others connect to them), the evaluator last."""
  tasks = [tf_config.Task(tf_config.PS, i) for i in range(len(spec.get(tf_config.PS, [])))]
  tasks.append(tf_config.Task(tf_config.CHIEF, 0))
  tasks += [tf_config.Task(tf_config.WORKER, i) for i in range(len(spec.get(tf_config.WORKER, [])))]
  if evaluator:
    tasks.append(tf_config.Task(tf_config.EVALUATOR, 0))
  return tasks


class LocalCluster(object):
  """Starts `command` once per task with that task's TF_CONFIG; use as a context manager so it always stops.

    with LocalCluster([sys.executable, '-m', 'tools.mnist_cluster', ...], log_dir, num_workers=2) as cluster:
      results = cluster.wait(timeout_secs=600)
  """

  def __init__(self, command, log_dir, num_workers=1, num_ps=1, evaluator=True, env=None):
    if num_workers and not num_ps:
      raise ValueError('workers need a parameter server to share variables through (num_ps >= 1)')
    self.command = list(command)
    self.log_dir = log_dir
    self.spec = cluster_spec(num_workers, num_ps)
    self.tasks = tasks_of(self.spec, evaluator)
    self._env = dict(os.environ if env is None else env)
    self._processes = collections.OrderedDict()  # task -> Popen
    self._started = {}
    self._ended = {}
    self._stopped = set()
    self._empty_groups = set()

  def __enter__(self):
    self.start()
    return self

  def __exit__(self, *exc_info):
    self.stop()  # whatever ended the `with`

  def log_path(self, task):
    return os.path.join(self.log_dir, '%s.log' % task.name)

  def pids(self):
    return {task: process.pid for task, process in self._processes.items()}

  def start(self):
    """Starts every task; if one cannot be started, stops those already running and re-raises."""
    os.makedirs(self.log_dir, exist_ok=True)
    try:
      for task in self.tasks:
        self._start_task(task)
    except BaseException:
      self.stop()
      raise

  def _start_task(self, task):
    env = dict(self._env, **{tf_config.NAME: tf_config.encode(self.spec, task)})
    # The log goes to a file: a pipe that nobody reads would fill up and stall the task.
    with open(self.log_path(task), 'w') as log:
      self._processes[task] = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                               start_new_session=True)
    self._started[task] = time.time()

  def wait(self, timeout_secs=None):
    """Waits until the chief, the workers and the evaluator have exited, then stops the ps; returns their results.

    Raises ClusterError (after stopping every task) when one of them exits with a non-zero status, a ps exits on
    its own, or `timeout_secs` pass first.
    """
    deadline = None if timeout_secs is None else time.time() + timeout_secs
    finishing = [task for task in self.tasks if task.type != tf_config.PS]
    while True:
      self._poll()
      failed = [task for task in self.tasks if self._failed(task)]
      if failed:
        self.stop()
        raise ClusterError('task %s %s; stopped the others.' % (failed[0].name, self._how_it_ended(failed[0])),
                           self.results())
      if all(task in self._ended for task in finishing):
        self.stop()
        return self.results()
      if deadline is not None and time.time() > deadline:
        running = [task.name for task in finishing if task not in self._ended]
        self.stop()
        raise ClusterError('%s still running after %d s; stopped every task.' % (', '.join(running), timeout_secs),
                           self.results())
      time.sleep(POLL_SECS)

  def stop(self, grace_secs=STOP_GRACE_SECS):
    """Stops every task and whatever it started: SIGTERM to each process group that still has a process, SIGKILL
    to those left after `grace_secs`. Returns once every group is empty (or has been sent SIGKILL)."""
    for task in self._live_groups():
      self._signal_group(task, signal.SIGTERM)
    deadline = time.time() + grace_secs
    while self._live_groups() and time.time() < deadline:
      time.sleep(POLL_SECS / 4)
    for task in self._live_groups():
      self._signal_group(task, signal.SIGKILL)
    for process in self._processes.values():
      process.wait()
    self._poll()

  def results(self):
    return [TaskResult(task, self._processes[task].returncode,
                       self._ended.get(task, time.time()) - self._started[task], self.log_path(task),
                       task in self._stopped)
            for task in self.tasks if task in self._processes]

  def log_tail(self, task, lines=LOG_TAIL_LINES):
    with open(self.log_path(task), errors='replace') as f:
      return ''.join(collections.deque(f, maxlen=lines))

  def _poll(self):
    """Notes tasks that have exited; returns the set of ended tasks."""
    for task, process in self._processes.items():
      if task not in self._ended and process.poll() is not None:
        self._ended[task] = time.time()
    return set(self._ended)

  def _live_groups(self):
    """Tasks whose process group still has a process (its leader, or anything it started). Reaps ended leaders.

    A group's id is the pid of its leader, which we started; Linux does not hand that id to a new process while
    any process of the group is left, so a group that still has members is ours. Once a group has been seen
    empty, its id may be reused, so it is never looked at again.
    """
    self._poll()
    live = []
    for task, process in self._processes.items():
      if task in self._empty_groups:
        continue
      try:
        os.killpg(process.pid, 0)  # signal 0: only checks that the group has a process
      except ProcessLookupError:
        self._empty_groups.add(task)
        continue
      live.append(task)
    return live

  def _signal_group(self, task, signum):
    if task not in self._ended:
      self._stopped.add(task)  # its main process was still running: it did not end by itself
    try:
      os.killpg(self._processes[task].pid, signum)
    except ProcessLookupError:
      self._empty_groups.add(task)  # it emptied in the meantime

  def _failed(self, task):
    if task not in self._ended or task in self._stopped:
      return False
    return task.type == tf_config.PS or self._processes[task].returncode != 0

  def _how_it_ended(self, task):
    code = self._processes[task].returncode
    if code < 0:
      return 'was killed by signal %d' % -code
    return 'exited with status %d' % code
