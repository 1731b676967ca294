"""An unreachable TPU fails in seconds with a clear message: the probe, the pre-flight, and mnist_tpu.py itself.

Only loopback addresses: a closed port (refused at once) and a port whose connections hang (the timeout path).
"""
import socket
import subprocess
import sys
import time

import pytest

from support.paths import REPO_ROOT
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import cluster as tpu_cluster
from support.loopback import closed_port, silent_port

PREFLIGHT_LIMIT_SECS = 30.0


def test_listening_port_is_reachable():
  with socket.socket() as listener:
    listener.bind(('127.0.0.1', 0))
    listener.listen(1)
    assert preflight.probe('127.0.0.1', listener.getsockname()[1], timeout_secs=2.0) is None


def test_closed_port_is_refused_at_once():
  start = time.time()
  error = preflight.probe('127.0.0.1', closed_port(), timeout_secs=5.0)
  assert 'refused' in error.lower()
  assert time.time() - start < 1.0


def test_silent_port_gives_up_at_the_timeout():
  with silent_port() as port:
    start = time.time()
    error = preflight.probe('127.0.0.1', port, timeout_secs=1.0)
    elapsed = time.time() - start
  assert error == 'no answer within 1 s'
  assert 0.9 <= elapsed < 1.0 + preflight.JOIN_SLACK_SECS + 0.5


@pytest.mark.parametrize('address', ['127.0.0.1:8470', 'grpc://127.0.0.1', 'http://127.0.0.1:8470', ''])
def test_address_must_be_grpc_host_port(address):
  with pytest.raises(UserError, match='not a TPU worker address'):
    preflight.split_address(address)


def test_preflight_names_the_worker_and_the_fix():
  port = closed_port()
  with pytest.raises(UserError) as raised:
    tpu_cluster.require_tpu_reachable(master='grpc://127.0.0.1:%d' % port, timeout_secs=2.0)
  assert raised.value.problem == ('the TPU worker grpc://127.0.0.1:%d is not reachable: Connection refused '
                                  '(TCP connect, 2 s limit).' % port)
  assert 'gcloud compute tpus list' in raised.value.fix


def test_preflight_uses_the_resolved_tpu_address():
  class FakeResolver(object):
    def master(self):
      return 'grpc://127.0.0.1:%d' % port

  port = closed_port()
  with pytest.raises(UserError, match='grpc://127.0.0.1:%d is not reachable' % port):
    tpu_cluster.require_tpu_reachable(cluster=FakeResolver(), timeout_secs=2.0)


def test_preflight_passes_for_a_listening_worker():
  with socket.socket() as listener:
    listener.bind(('127.0.0.1', 0))
    listener.listen(1)
    tpu_cluster.require_tpu_reachable(master='grpc://127.0.0.1:%d' % listener.getsockname()[1], timeout_secs=2.0)


def test_mnist_tpu_with_an_unreachable_master_fails_within_30_seconds():
  port = closed_port()
  start = time.time()
  # gs:// paths satisfy the flag rules; they are never touched because the pre-flight runs first.
  result = subprocess.run([sys.executable, 'mnist_tpu.py', '--master=grpc://127.0.0.1:%d' % port,
                           '--model_dir=gs://never-used/model', '--data_dir=gs://never-used/data'],
                          cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=120)
  elapsed = time.time() - start
  assert result.returncode == 1
  assert elapsed < PREFLIGHT_LIMIT_SECS
  assert 'error: the TPU worker grpc://127.0.0.1:%d is not reachable: Connection refused' % port in result.stderr
  assert 'Traceback' not in result.stderr
