"""A stand-in for one task of a cluster, for the local_cluster tests: no TensorFlow, starts in a blink.

It reads its task from TF_CONFIG, records {tf_config, pid, pgid, child} in $FAKE_TASK_DIR/<type>-<index>.json,
waits until every task named in $FAKE_TASK_PLAN (JSON {task name: action}) has done the same (so that no task
ends before the others are there to be checked), then does what the plan says (default 'exit:0'):
  exit:N                 exit with status N
  hang                   sleep until killed
  hang_ignoring_sigterm  ignore SIGTERM, sleep until SIGKILLed
  hang_with_child        start a child process that sleeps too (it must be stopped with its parent)
"""
import json
import os
import signal
import subprocess
import sys
import time


def read_records(directory):
  """{task name: record} of every task that has recorded itself in `directory` so far."""
  records = {}
  for name in os.listdir(directory):
    if name.endswith('.json'):
      with open(os.path.join(directory, name)) as f:
        records[name[:-len('.json')]] = json.load(f)
  return records


def wait_for_records(directory, names, timeout_secs=20):
  """Waits until every task in `names` has recorded itself, or the time is up; returns the records found."""
  deadline = time.time() + timeout_secs
  while not set(names) <= set(read_records(directory)) and time.time() < deadline:
    time.sleep(0.02)
  return read_records(directory)



def main():
  config = json.loads(os.environ['TF_CONFIG'])
  name = '%s-%d' % (config['task']['type'], config['task']['index'])
  plan = json.loads(os.environ.get('FAKE_TASK_PLAN', '{}'))
  action = plan.get(name, 'exit:0')
  child = None
  if action == 'hang_ignoring_sigterm':
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
  if action == 'hang_with_child':
    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']).pid
  record = {'tf_config': config, 'pid': os.getpid(), 'pgid': os.getpgid(0), 'child': child}
  path = os.path.join(os.environ['FAKE_TASK_DIR'], name + '.json')
  with open(path + '.tmp', 'w') as f:
    json.dump(record, f)
  os.rename(path + '.tmp', path)  # the test polls for this file: it must appear complete
  wait_for_records(os.environ['FAKE_TASK_DIR'], plan)
  if action.startswith('exit:'):
    sys.exit(int(action.split(':')[1]))
  while True:
    time.sleep(1)


if __name__ == '__main__':
  main()
