"""`mnist_tpu.py --mode=check_tpu` as a user runs it: one line per check, exit status 1 on any failure."""
import os
import subprocess
import sys

import tensorflow.compat.v1 as tf

from support.paths import REPO_ROOT
from support.programs import check_statuses
from support.loopback import closed_port

SCRIPT = os.path.join(REPO_ROOT, 'mnist_tpu.py')
# 2 cores, 16 examples per core; the synthetic test split (110) is scored exactly by 11 eval batches of 10.
FITTING = ['--num_shards=2', '--batch_size=32', '--eval_batch_size=10']


def check_tpu(args):
  return subprocess.run([sys.executable, SCRIPT, '--mode=check_tpu'] + args, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


def test_the_projects_run_is_ready_without_naming_a_tpu(data_dir):
  result = check_tpu(FITTING + ['--data_dir=%s' % data_dir])
  assert result.returncode == 0, result.stdout + result.stderr[-2000:]
  assert result.stdout.splitlines()[-1] == 'TPU readiness: 20 passed, 0 failed, 2 skipped.'
  found = check_statuses(result.stdout)
  assert found['xla_compile'] == 'PASS' and found['tpu_reachable'] == 'SKIP'
  assert 'eval_coverage (rule 9): test: 110 examples, 1 input_fn call: 11 steps of 10 = 110 real + 0 padding' in result.stdout
  # TF 2.15's XLA writes `E ... SetPriority unimplemented for this stream.` at the first XLA run: dropped there.
  assert 'SetPriority' not in result.stderr, result.stderr[-2000:]


def test_missing_data_and_tpu_flag_mistakes_are_failed_checks_not_parse_errors(tmp_path):
  port = closed_port()
  result = check_tpu(['--data_dir=%s' % tmp_path, '--model_dir=/tmp/local-model', '--num_shards=8',
                      '--batch_size=100', '--eval_batch_size=10', '--master=grpc://127.0.0.1:%d' % port])
  assert result.returncode == 1
  found = check_statuses(result.stdout)
  assert sorted(name for name, status in found.items() if status == 'FAIL') == [
      'batch_split', 'cloud_storage', 'input_fn', 'tpu_reachable', 'train_input']
  assert 'TensorFlow %s refuses training on this slice: train batch size 100 must be divisible by number of ' \
      'replicas 8' % tf.__version__ in result.stdout
  assert 'FAIL input_fn (rule 3): %s is missing. Fix: run `python -m tools.prepare_data' % (tmp_path / 'train.tfrecords') \
      in result.stdout
  assert 'FAIL batch_split (rule 16): train batch 100, eval batch 10, predict batch 10 not divisible by num_shards=8' \
      in result.stdout
  assert "FAIL cloud_storage (rule 17): model_dir='/tmp/local-model', data_dir='%s' not on Cloud Storage" % tmp_path \
      in result.stdout
  assert 'FAIL tpu_reachable (rule 2): the TPU worker grpc://127.0.0.1:%d is not reachable' % port in result.stdout
  assert found['xla_compile'] == 'SKIP' and found['eval_coverage'] == 'SKIP'
  assert os.listdir(str(tmp_path)) == []  # the check never downloads or prepares data
  assert 'Traceback' not in result.stderr


def test_the_plan_per_host_of_a_pod_slice(data_dir):
  """--num_shards=32 without a TPU: 4 hosts of 8 cores, each reading its shard; evaluation and prediction SLICED."""
  result = check_tpu(['--num_shards=32', '--batch_size=64', '--eval_batch_size=64', '--data_dir=%s' % data_dir])
  assert result.returncode == 0, result.stdout + result.stderr[-2000:]
  lines = {line.split(':')[0]: line for line in result.stdout.splitlines()}
  assert lines['PASS topology (rule 14)'].startswith('PASS topology (rule 14): 4 hosts x 8 cores = 32 cores (--num_shards=32')
  assert ("params['batch_size'] = 2 per core; each host feeds its 8 cores 16 examples per step (global 64), host h "
          'reading shard h of 4: 63, 63, 62, 62 of 250 training examples.') in lines['PASS train_input (rule 3)']
  assert 'SLICED input: input_fn runs once' in lines['PASS evaluate (rule 14)']
  assert 'SLICED input: input_fn runs once' in lines['PASS predict (rule 14)']
  assert ('test: 110 examples, 1 input_fn call: 2 steps of 64 = 110 real + 18 padding rows of weight 0'
          in lines['PASS eval_coverage (rule 9)'])
