"""TensorBoard itself shows what a run writes: the real `tensorboard` program (installed with TensorFlow) serves a
tiny train_and_evaluate run's model_dir on 127.0.0.1, and its HTTP API must give the training loss and learning
rate of every step and the evaluation accuracy at every evaluated checkpoint -- under names that say what they are.

Endpoints (the scalars plugin, the same in TensorBoard 1.15 and 2.15): /data/plugin/scalars/tags gives
{run: {tag: {...}}}, /data/plugin/scalars/scalars?run=RUN&tag=TAG gives [[wall_time, step, value], ...]. The run
of model_dir's own events is '.', an evaluation's is 'eval_test'. TensorBoard 2.x is started with
--load_fast=false, its Python reader: the default may hand reading to a separate Rust binary.
"""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest
import tensorboard

from support import tiny_run
from support.programs import scalar_events

TENSORBOARD = os.path.join(os.path.dirname(sys.executable), 'tensorboard')
TENSORBOARD_MAJOR = int(tensorboard.__version__.split('.')[0])
LOAD_SECS = 120  # TensorBoard's start and first load of the event files, on a loaded 2-core machine
EVALUATED_STEPS = [10, 20, 30]  # --eval_every_steps=10 up to TINY_STEPS = 30
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope='module')
def evaluated_model_dir(tmp_path_factory, shared_data_dir):
  model_dir = str(tmp_path_factory.mktemp('tensorboard') / 'model')
  tiny_run.run(['--mode=train_and_evaluate', '--eval_every_steps=10', '--data_dir=%s' % shared_data_dir,
                '--model_dir=%s' % model_dir])
  return model_dir


def free_port():
  with socket.socket() as s:
    s.bind(('127.0.0.1', 0))
    return s.getsockname()[1]


@pytest.fixture
def tensorboard_url(evaluated_model_dir, tmp_path):
  assert os.path.exists(TENSORBOARD), 'TensorFlow installs the tensorboard program next to its Python'
  port = free_port()
  command = [TENSORBOARD, '--logdir=%s' % evaluated_model_dir, '--host=127.0.0.1', '--port=%d' % port]
  if TENSORBOARD_MAJOR >= 2:
    command.append('--load_fast=false')
  log_path = str(tmp_path / 'tensorboard.log')
  with open(log_path, 'w') as log:
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
  try:
    yield 'http://127.0.0.1:%d' % port, process, log_path
  finally:
    process.terminate()
    try:
      process.wait(timeout=20)
    except subprocess.TimeoutExpired:
      process.kill()
      process.wait()


def get_json(url, path, **query):
  with NO_PROXY.open('%s%s?%s' % (url, path, urllib.parse.urlencode(query)), timeout=10) as response:
    return json.loads(response.read().decode('utf-8'))


def scalars(url, run, tag):
  """[(step, value), ...] of one curve, as TensorBoard serves it."""
  return [(step, value) for _, step, value in get_json(url, '/data/plugin/scalars/scalars', run=run, tag=tag)]


def wait_until_loaded(url, process, log_path):
  """Polls until TensorBoard has loaded every point of the run (bounded by LOAD_SECS); returns the tags."""
  deadline = time.time() + LOAD_SECS
  while True:
    if process.poll() is not None:
      with open(log_path) as f:
        pytest.fail('tensorboard exited with %s:\n%s' % (process.returncode, f.read()[-3000:]))
    try:
      tags = get_json(url, '/data/plugin/scalars/tags')
      if (len(scalars(url, '.', 'train/loss')) == tiny_run.TINY_STEPS
          and len(scalars(url, 'eval_test', 'accuracy')) == len(EVALUATED_STEPS)):
        return tags
    except (OSError, ValueError, KeyError):  # not listening yet, or the run or tag not loaded yet
      pass
    if time.time() > deadline:
      with open(log_path) as f:
        pytest.fail('tensorboard did not load the run within %d s:\n%s' % (LOAD_SECS, f.read()[-3000:]))
    time.sleep(1)


def test_tensorboard_shows_every_training_step_and_every_evaluation(tensorboard_url, evaluated_model_dir):
  url, process, log_path = tensorboard_url
  tags = wait_until_loaded(url, process, log_path)
  # One curve per quantity, named for it: no `loss` next to a sparser `loss_1`.
  assert sorted(tags['.']) == ['train/learning_rate', 'train/loss']
  assert {'accuracy', 'mean_loss'} <= set(tags['eval_test'])

  steps = list(range(tiny_run.TINY_STEPS))
  written = scalar_events(evaluated_model_dir)
  for tag in ('train/loss', 'train/learning_rate'):
    served = scalars(url, '.', tag)
    assert [step for step, _ in served] == steps
    np.testing.assert_allclose([value for _, value in served], [value for _, value in written[tag]], rtol=1e-6)
  fv = tiny_run.parse(tiny_run.TINY_ARGS)
  np.testing.assert_allclose([rate for _, rate in scalars(url, '.', 'train/learning_rate')],
                             tiny_run.default_learning_rates(fv, steps), rtol=1e-5, atol=1e-9)

  accuracy = scalars(url, 'eval_test', 'accuracy')
  assert [step for step, _ in accuracy] == EVALUATED_STEPS
  assert all(0.0 <= value <= 1.0 for _, value in accuracy) and accuracy[-1][1] >= 0.8
