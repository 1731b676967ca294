"""Lines the C++ runtime writes to descriptor 2 (runtime/native_stderr.py): exactly the named one dropped, and TF
2.15's `E ... SetPriority unimplemented` line, which its XLA writes at a process's first XLA run, gone from the
readiness check (porting/readiness/xla.py). Each case is a fresh process: the line comes once per process."""
import os
import subprocess
import sys

import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu.porting.readiness import xla
from support.paths import REPO_ROOT
from support.tiny_run import TINY_VALIDATION

TF2 = tf.__version__.startswith('2.')
SET_PRIORITY = (b'2026-11-26 08:05:01.105208: E external/local_xla/xla/stream_executor/stream_executor_internal.h:177'
                b'] SetPriority unimplemented for this stream.\n')
# One XLA computation on the CPU, run with TensorFlow alone.
PLAIN_XLA_RUN = '''
import pytest
import tensorflow.compat.v1 as tf
with tf.Graph().as_default():
  total = tf.xla.experimental.compile(lambda: tf.constant(1.0) + 1.0)
  with tf.Session() as session:
    session.run(total)
'''


def run_python(code):
  env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT, os.environ.get('PYTHONPATH', '')]),
             TF_CPP_MIN_LOG_LEVEL='0')
  result = subprocess.run([sys.executable, '-c', code], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env, timeout=120)
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stderr


def set_priority_lines(stderr):
  return [line for line in stderr.splitlines(True) if xla.SET_PRIORITY_LINE.search(line)]


def test_the_pattern_matches_tensorflows_line_and_no_other():
  assert xla.SET_PRIORITY_LINE.search(SET_PRIORITY)
  assert not xla.SET_PRIORITY_LINE.search(SET_PRIORITY.replace(b': E ', b': W '))
  assert not xla.SET_PRIORITY_LINE.search(SET_PRIORITY.replace(b'SetPriority', b'SetStreamPriority'))


def test_dropping_writes_back_every_other_line_in_order():
  other_error = b'2026-11-26 08:05:01.2: E external/local_xla/xla/service/service.cc:1] Something else failed.\n'
  stderr = run_python('''
import os, sys
from estimator_tpu.porting.readiness import xla
from estimator_tpu.runtime import native_stderr
sys.stderr.write('before\\n')
with native_stderr.dropping(xla.SET_PRIORITY_LINE):
  os.write(2, %r)
  sys.stderr.write('python, inside\\n')
  os.write(2, %r)
  os.write(2, b'no line break at the end')
sys.stderr.write('\\nafter\\n')
''' % (other_error, SET_PRIORITY))
  stderr = stderr[stderr.index(b'before\n'):]  # TF 2.15 writes lines of its own while it is imported
  assert stderr == b'before\n' + other_error + b'python, inside\nno line break at the end\nafter\n'


def test_a_plain_xla_run_writes_the_line_on_tf2_only():
  """The line is TensorFlow's own (its CPU stream pool), not something this project's code asks for."""
  lines = set_priority_lines(run_python(PLAIN_XLA_RUN))
  assert len(lines) == (1 if TF2 else 0), lines


def test_after_the_checks_first_xla_run_no_line_and_the_rest_of_the_output_stays():
  stderr = run_python('''
import sys
from estimator_tpu.porting.readiness import xla
sys.stderr.write('before\\n')
xla.register_xla_kernels()
sys.stderr.write('after\\n')
''' + PLAIN_XLA_RUN)
  assert set_priority_lines(stderr) == []
  assert stderr.index(b'before\n') < stderr.index(b'after\n')
  if TF2:  # TensorFlow's lines of that run still come through
    assert b'XLA service' in stderr[stderr.index(b'before\n'):stderr.index(b'after\n')], stderr


@pytest.mark.skipif(not TF2, reason='mnist_keras.py is the TF 2.x route; TF %s' % tf.__version__)
def test_the_keras_routes_check_prints_no_set_priority_line(data_dir, tmp_path):
  """Its first XLA run is Keras' jit_compile: the check runs register_xla_kernels before it."""
  result = subprocess.run([sys.executable, 'mnist_keras.py', '--mode=check_tpu', '--data_dir=%s' % data_dir,
                           '--model_dir=%s' % (tmp_path / 'm'), '--validation_size=%d' % TINY_VALIDATION,
                           '--batch_size=16', '--eval_batch_size=16'], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
  assert result.returncode == 0, result.stdout + result.stderr[-2000:]
  assert result.stdout.splitlines()[-1].startswith('TPU readiness: ')
  assert 'SetPriority' not in result.stderr, result.stderr[-2000:]
