"""The launcher (estimator_tpu/local_cluster.py, local_cluster.py) with stand-in tasks (fake_task.py, no TensorFlow):
the TF_CONFIG each task gets, how a run ends, and that every process it started is gone afterwards -- when all
goes well, when a task fails, when time runs out, when a task ignores SIGTERM or has children, and when the
launcher itself is terminated.
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from estimator_tpu.distributed import local_cluster
from support import fake_task
from support.paths import REPO_ROOT
from support.paths import SUPPORT_DIR
from support.processes import group_alive

FAKE_TASK = os.path.join(SUPPORT_DIR, 'fake_task.py')
LAUNCHER = ['-m', 'tools.local_cluster']  # run from REPO_ROOT
TIMEOUT_SECS = 30  # generous: stand-in tasks start in well under a second
ALL_TASKS = ['ps-0', 'chief-0', 'worker-0', 'worker-1', 'evaluator-0']


def fake_env(tmp_path, plan):
  os.makedirs(records_dir(tmp_path), exist_ok=True)
  return dict(os.environ, FAKE_TASK_DIR=records_dir(tmp_path), FAKE_TASK_PLAN=json.dumps(plan))


def records_dir(tmp_path):
  return str(tmp_path / 'records')


def read_records(tmp_path):
  return fake_task.read_records(records_dir(tmp_path))


def wait_for_records(tmp_path, names):
  records = fake_task.wait_for_records(records_dir(tmp_path), names, TIMEOUT_SECS)
  assert set(names) <= set(records), 'tasks did not start: %s' % sorted(records)
  return records


def assert_all_gone(records):
  """No process of any task's group is left, nor any child a task started."""
  for name, record in records.items():
    assert not group_alive(record['pgid']), '%s left processes behind' % name
    if record['child']:
      with pytest.raises(ProcessLookupError):
        os.kill(record['child'], 0)


def make_cluster(tmp_path, plan, num_workers=2, evaluator=True):
  return local_cluster.LocalCluster([sys.executable, FAKE_TASK], str(tmp_path / 'logs'), num_workers=num_workers,
                                    evaluator=evaluator, env=fake_env(tmp_path, plan))


def outcomes(results):
  return {r.task.name: (r.returncode, r.stopped) for r in results}


def test_each_task_gets_its_tf_config_on_distinct_loopback_ports(tmp_path):
  with make_cluster(tmp_path, {'ps-0': 'hang'}) as cluster:
    results = cluster.wait(timeout_secs=TIMEOUT_SECS)
  records = read_records(tmp_path)
  assert sorted(records) == sorted(ALL_TASKS)
  spec = records['chief-0']['tf_config']['cluster']
  assert sorted(spec) == ['chief', 'ps', 'worker'] and len(spec['worker']) == 2  # the evaluator is not in it
  addresses = [a for job in spec.values() for a in job]
  assert all(a.startswith('127.0.0.1:') for a in addresses) and len(set(addresses)) == len(addresses)
  for name, record in records.items():
    assert record['tf_config']['cluster'] == spec
    assert '%(type)s-%(index)d' % record['tf_config']['task'] == name
  # Every task in its own process group, so that stopping one stops all it started.
  assert all(r['pgid'] == r['pid'] for r in records.values())
  # Success: the four finishing tasks exited 0 by themselves; the ps, which never ends, was stopped.
  assert outcomes(results) == {'ps-0': (-signal.SIGTERM, True), 'chief-0': (0, False), 'worker-0': (0, False),
                               'worker-1': (0, False), 'evaluator-0': (0, False)}
  assert_all_gone(records)


def test_a_failing_task_stops_all_the_others(tmp_path):
  plan = {'ps-0': 'hang', 'chief-0': 'hang_with_child', 'worker-0': 'hang', 'worker-1': 'exit:3',
          'evaluator-0': 'hang'}
  started = time.time()
  with make_cluster(tmp_path, plan) as cluster:
    with pytest.raises(local_cluster.ClusterError) as failure:
      cluster.wait(timeout_secs=TIMEOUT_SECS)
  assert time.time() - started < TIMEOUT_SECS
  assert 'task worker-1 exited with status 3' in str(failure.value)
  ended = outcomes(failure.value.results)
  assert ended.pop('worker-1') == (3, False)
  assert all(stopped for _, stopped in ended.values()), ended
  assert_all_gone(wait_for_records(tmp_path, ALL_TASKS))


def test_a_task_that_outlives_the_time_limit_is_stopped(tmp_path):
  plan = {'ps-0': 'hang', 'chief-0': 'hang'}
  with make_cluster(tmp_path, plan, num_workers=0, evaluator=False) as cluster:
    started = time.time()
    with pytest.raises(local_cluster.ClusterError) as failure:
      cluster.wait(timeout_secs=2)
  assert time.time() - started < 2 + local_cluster.STOP_GRACE_SECS
  assert 'chief-0 still running after 2 s' in str(failure.value)
  assert outcomes(failure.value.results) == {'ps-0': (-signal.SIGTERM, True), 'chief-0': (-signal.SIGTERM, True)}
  assert_all_gone(wait_for_records(tmp_path, ['ps-0', 'chief-0']))


def test_a_task_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path):
  plan = {'ps-0': 'hang_ignoring_sigterm', 'chief-0': 'hang'}
  cluster = make_cluster(tmp_path, plan, num_workers=0, evaluator=False)
  try:
    cluster.start()
    records = wait_for_records(tmp_path, ['ps-0', 'chief-0'])  # the ps has set its SIGTERM handler by now
  finally:
    cluster.stop(grace_secs=1)
  assert outcomes(cluster.results()) == {'ps-0': (-signal.SIGKILL, True), 'chief-0': (-signal.SIGTERM, True)}
  assert_all_gone(records)


def test_workers_without_a_parameter_server_are_refused(tmp_path):
  with pytest.raises(ValueError, match='parameter server'):
    local_cluster.LocalCluster([sys.executable, FAKE_TASK], str(tmp_path), num_workers=1, num_ps=0)


# --- the program ----------------------------------------------------------------------------------------------------

def launch(tmp_path, plan, *flags):
  command = [sys.executable] + LAUNCHER + ['--task_log_dir=%s' % (tmp_path / 'logs'),
                                         '--timeout_secs=%d' % TIMEOUT_SECS]
  return subprocess.Popen(command + list(flags) + ['--', FAKE_TASK], cwd=REPO_ROOT, env=fake_env(tmp_path, plan),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def test_launcher_reports_the_failed_task_and_exits_1(tmp_path):
  launcher = launch(tmp_path, {'ps-0': 'hang', 'chief-0': 'hang', 'worker-0': 'exit:3'})
  try:
    out, err = launcher.communicate(timeout=TIMEOUT_SECS + local_cluster.STOP_GRACE_SECS)
  finally:
    launcher.kill()
  assert launcher.returncode == 1
  assert err.strip().splitlines()[-1] == ('error: task worker-0 exited with status 3; stopped the others. Fix: '
                                          'read the task logs in %s.' % (tmp_path / 'logs'))
  assert 'worker-0     exit 3' in out
  assert_all_gone(wait_for_records(tmp_path, ['ps-0', 'chief-0', 'worker-0', 'evaluator-0']))


@pytest.mark.parametrize('signum', [signal.SIGTERM, signal.SIGINT])
def test_terminating_the_launcher_stops_every_task(tmp_path, signum):
  launcher = launch(tmp_path, {name: 'hang' for name in ALL_TASKS}, '--workers=2')
  try:
    records = wait_for_records(tmp_path, ALL_TASKS)
    launcher.send_signal(signum)
    _, err = launcher.communicate(timeout=local_cluster.STOP_GRACE_SECS + 10)
  finally:
    launcher.kill()
  assert launcher.returncode == 130
  assert 'every task was stopped' in err
  assert_all_gone(records)


def test_launcher_needs_a_program(tmp_path):
  result = subprocess.run([sys.executable] + LAUNCHER + ['--', str(tmp_path / 'missing.py')], cwd=REPO_ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
  assert result.returncode == 1
  assert result.stderr.startswith('error: the program %s does not exist.' % (tmp_path / 'missing.py'))
  assert not os.path.exists(str(tmp_path / 'logs'))
