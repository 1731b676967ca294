"""The programs as the tests run them: flags parsed on a private FlagValues, mnist_tpu.py in a subprocess, and
what a run's output and files must look like (one clear error, every message once, the events written).
"""
import collections
import glob
import io
import os
import re
import subprocess
import sys

import tensorflow.compat.v1 as tf
from absl import flags

from estimator_tpu import runner
from flags import mnist_tpu as mnist_tpu_flags
from support.paths import REPO_ROOT

SCRIPT = os.path.join(REPO_ROOT, 'mnist_tpu.py')
# mnist_tpu.py on this machine's CPU.
LOCAL_TPU_ARGS = ['--use_tpu=false', '--master=']
# Tiny data (conftest.py: 250 train and 110 test examples): the lesson tests' batches and steps.
TRAIN_BATCH, EVAL_BATCH, TRAIN_STEPS = 16, 50, 6
TINY = ['--use_tpu=false', '--master=', '--validation_size=50', '--train_steps=30', '--batch_size=16',
        '--iterations=10', '--save_checkpoints_steps=10', '--eval_batch_size=50', '--num_predictions=4']
# The most lines a default-shaped run may print (runner/test_output.py says why).
MAX_LINES = 80
# The prefix of a logged line on stderr ("01:35:15 ", "01:35:15 WARNING ": runtime/logs.py); the one absl gives
# every line of a log file ("I1123 01:35:15.334882 139727342119808 runner.py:131] "); the C++ runtime's.
SHORT_PREFIX = re.compile(r'^\d\d:\d\d:\d\d (?:(?:WARNING|ERROR|CRITICAL) )?')
ABSL_PREFIX = re.compile(r'^[IWEF]\d{4} [\d:.]+ +\d+ [^\]]+\] ')
CPP_PREFIX = re.compile(r'^\d{4}-\d\d-\d\d [\d:.]+: [IWEF] \S+\] ')
# What TensorFlow's own handler printed: the second copy of every TensorFlow message.
TENSORFLOW_HANDLER = re.compile(r'^(DEBUG|INFO|WARNING|ERROR|CRITICAL):tensorflow:', re.M)
CHECK_STATUSES = ('PASS', 'FAIL', 'SKIP')


def parse_flags(define, args):
  """Parses `args` with the flags `define(fv)` defines, on a private FlagValues (no state shared between tests)."""
  fv = flags.FlagValues()
  define(fv)
  fv(['program'] + args)
  return fv


def parse(args):
  """mnist_tpu.py's flags, parsed from `args`."""
  return parse_flags(mnist_tpu_flags.define_flags, args)


def training_job(model_dir):
  """What the runner builds a training estimator for: `model_dir`, no TPU, no warm start, no seed."""
  return runner.Job(model_dir, None, None, None, runner.TRAIN)


def run_script(args, timeout=300):
  """`python mnist_tpu.py ARGS` from the repository root; returns the CompletedProcess."""
  return subprocess.run([sys.executable, SCRIPT] + args, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)


def run_main(main, args):
  """(exit status, stdout, stderr) of a command-line main(argv, stdout, stderr) run in this process."""
  out, err = io.StringIO(), io.StringIO()
  status = main(args, stdout=out, stderr=err)
  return status, out.getvalue(), err.getvalue()


def assert_one_clear_error(result, *fragments):
  """Exit status 1 and one `error: ... Fix: ...` line holding every fragment; returns that line."""
  assert 'Traceback' not in result.stderr and 'Original stack trace' not in result.stderr, result.stderr[-3000:]
  errors = [line for line in result.stderr.splitlines() if line.startswith('error: ')]
  assert len(errors) == 1, result.stderr[-3000:]
  assert result.returncode == 1
  line = errors[0]
  assert line.count(' Fix: ') == 1, line
  for fragment in fragments:
    assert fragment in line, line
  return line


def messages(output):
  """The lines of `output` without their logging prefix (ours, absl's or the C++ runtime's)."""
  return [CPP_PREFIX.sub('', ABSL_PREFIX.sub('', SHORT_PREFIX.sub('', line))) for line in output.splitlines()]


def assert_every_message_once_and_no_noise(output, max_lines=MAX_LINES):
  assert not TENSORFLOW_HANDLER.search(output), 'TensorFlow printed its messages a second time'
  lines = messages(output)
  repeated = [a for a, b in zip(lines, lines[1:]) if a == b]
  assert not repeated, repeated
  assert not [line for line in lines if 'deprecat' in line.lower()]
  assert not [line for line in lines if 'global_step/sec' in line or 'examples/sec:' in line]
  assert len(lines) <= max_lines, '\n'.join(lines)
  return lines


def check_lines(output):
  """[(status, check name)] of a readiness check's output, in the order printed."""
  return [tuple(line.split(':')[0].split()[:2]) for line in output.splitlines()
          if line.split() and line.split()[0] in CHECK_STATUSES]


def failed_checks(checks):
  """The names of the failed checks among {name: readiness CheckResult}, sorted."""
  return sorted(name for name, check in checks.items() if check.status == 'FAIL')


def check_statuses(output):
  """{check name: status} of a readiness check's output."""
  return {name: status for status, name in check_lines(output)}


def scalar_events(directory):
  """{tag: [(step, value), ...]} from every event file directly in `directory`, sorted by step."""
  events = collections.defaultdict(list)
  for path in glob.glob(os.path.join(directory, 'events.out.tfevents.*')):
    for event in tf.train.summary_iterator(path):
      for value in event.summary.value:
        if value.HasField('simple_value'):
          events[value.tag].append((event.step, value.simple_value))
        elif value.HasField('tensor') and not value.tensor.string_val:
          events[value.tag].append((event.step, float(tf.make_ndarray(value.tensor))))
  return {tag: sorted(points) for tag, points in events.items()}
