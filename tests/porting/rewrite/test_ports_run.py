"""Ports that run: each program of tests/porting/programs (ours, one per way a port used to break a program) runs
as a script before and after `--write`, and the port, started on the original's checkpoint, prints the
original's results.

Each program trains to a fixed max_steps in the model_dir given as its argument and prints `RESULT {json}` after
every evaluate/predict. The original runs first; the port then runs on a copy of that model_dir, so it trains
no further and evaluates and predicts with the same weights: every RESULT must match (metrics to 1e-5). A port
that crashes where the original ran, drops an example or a metric, or changes what the CPU computes fails here.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest
import tensorflow.compat.v1 as tf

from support.paths import REPO_ROOT
from support.paths import TESTS_DIR

PROGRAMS = os.path.join(TESTS_DIR, 'porting', 'programs')
NAMES = sorted(n for n in os.listdir(PROGRAMS) if os.path.isfile(os.path.join(PROGRAMS, n, 'train.py')))
TF1_ONLY = {'experiment_input': "contrib.learn's Experiment, which TensorFlow 2 does not have"}


def run(script, model_dir, cwd):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL='3')
  done = subprocess.run([sys.executable, script, model_dir], cwd=cwd, env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
  assert done.returncode == 0, '%s failed:\n%s' % (script, done.stdout[-3000:])
  return [json.loads(line[len('RESULT '):]) for line in done.stdout.splitlines() if line.startswith('RESULT ')]


def same(original, ported):
  if isinstance(original, dict):
    return isinstance(ported, dict) and sorted(original) == sorted(ported) and all(
        same(original[k], ported[k]) for k in original)
  if isinstance(original, list):
    return isinstance(ported, list) and len(original) == len(ported) and all(
        same(a, b) for a, b in zip(original, ported))
  if isinstance(original, float):
    return abs(original - ported) <= 1e-5 * max(1.0, abs(original))
  return original == ported


@pytest.mark.parametrize('name', NAMES)
def test_the_port_runs_and_prints_the_originals_results_on_its_checkpoint(name, tmp_path):
  if name in TF1_ONLY and not tf.__version__.startswith('1.'):
    pytest.skip('%s (TensorFlow %s)' % (TF1_ONLY[name], tf.__version__))
  shutil.copytree(os.path.join(PROGRAMS, name), str(tmp_path / name))
  written = subprocess.run([sys.executable, '-m', 'estimator_tpu.port', '--write', str(tmp_path / 'out'),
                            os.path.join(name, 'train.py')], cwd=str(tmp_path), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True,
                           env=dict(os.environ, PYTHONPATH=REPO_ROOT))
  assert written.returncode in (0, 1), written.stdout
  original = run(os.path.join(name, 'train.py'), str(tmp_path / 'model'), str(tmp_path))
  assert original, 'the original printed no RESULT'
  shutil.copytree(str(tmp_path / 'model'), str(tmp_path / 'model_for_port'))
  ported = run(os.path.join('out', name, 'train.py'), str(tmp_path / 'model_for_port'), str(tmp_path))
  assert same(original, ported), 'original %s\nport     %s' % (original, ported)
