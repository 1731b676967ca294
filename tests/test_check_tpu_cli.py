"""`mnist_tpu.py --mode=check_tpu` as a user runs it: one line per check, exit status 1 on any failure."""
import os
import subprocess
import sys

from conftest import REPO_ROOT
from loopback import closed_port

SCRIPT = os.path.join(REPO_ROOT, 'mnist_tpu.py')
# 2 cores, 16 examples per core; the synthetic test split (110) is scored exactly by 11 eval batches of 10.
FITTING = ['--num_shards=2', '--batch_size=32', '--eval_batch_size=10']


def check_tpu(args):
  return subprocess.run([sys.executable, SCRIPT, '--mode=check_tpu'] + args, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


def statuses(stdout):
  return {line.split()[1].rstrip(':'): line.split()[0] for line in stdout.splitlines()
          if line.split()[0] in ('PASS', 'FAIL', 'SKIP')}


def test_the_projects_run_is_ready_without_naming_a_tpu(data_dir):
  result = check_tpu(FITTING + ['--data_dir=%s' % data_dir])
  assert result.returncode == 0, result.stdout + result.stderr[-2000:]
  assert result.stdout.splitlines()[-1] == 'TPU readiness: 12 passed, 0 failed, 2 skipped.'
  found = statuses(result.stdout)
  assert found['xla_compile'] == 'PASS' and found['tpu_reachable'] == 'SKIP'
  assert 'eval_coverage: 11 eval steps of 10 = 110 examples' in result.stdout


def test_missing_data_and_tpu_flag_mistakes_are_failed_checks_not_parse_errors(tmp_path):
  port = closed_port()
  result = check_tpu(['--data_dir=%s' % tmp_path, '--model_dir=/tmp/local-model', '--num_shards=8',
                      '--batch_size=100', '--eval_batch_size=10', '--master=grpc://127.0.0.1:%d' % port])
  assert result.returncode == 1
  found = statuses(result.stdout)
  assert sorted(name for name, status in found.items() if status == 'FAIL') == [
      'batch_split', 'cloud_storage', 'input_fn', 'tpu_reachable']
  assert 'FAIL input_fn: %s is missing. Fix: run `python -m tools.prepare_data' % (tmp_path / 'train.tfrecords') \
      in result.stdout
  assert 'FAIL batch_split: train batch 100, eval batch 10, predict batch 10 not divisible by num_shards=8' \
      in result.stdout
  assert "FAIL cloud_storage: model_dir='/tmp/local-model', data_dir='%s' not on Cloud Storage" % tmp_path \
      in result.stdout
  assert 'FAIL tpu_reachable: the TPU worker grpc://127.0.0.1:%d is not reachable' % port in result.stdout
  assert found['xla_compile'] == 'SKIP' and found['eval_coverage'] == 'SKIP'
  assert os.listdir(str(tmp_path)) == []  # the check never downloads or prepares data
  assert 'Traceback' not in result.stderr
