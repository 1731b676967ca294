"""TPU VMs (TensorFlow 2.15) next to TPU Nodes (both TFs): the resolver each TensorFlow really has, the pre-flight
that fits each architecture, and both programs with --tpu_name=local. No network: 'local' and grpc:// addresses
resolve without one, and the TPU's device files are simulated in a temporary directory.
"""
import os
import subprocess
import sys
import time

import pytest
import tensorflow.compat.v1 as tf

import mnist_keras
from support.paths import REPO_ROOT
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import cluster as tpu_cluster
from estimator_tpu.tpu import run_config

TF1 = tf.__version__.startswith('1.')
RESOLVER = tf.distribute.cluster_resolver.TPUClusterResolver
tf2 = mnist_keras.tf  # the TF API as mnist_keras.py sees it


def write(path, text=''):
  os.makedirs(os.path.dirname(path), exist_ok=True)
  with open(path, 'w') as f:
    f.write(text)


@pytest.fixture
def roots(tmp_path):
  """(dev_root, sys_root): empty stand-ins for /dev and /sys."""
  dev, sys_root = tmp_path / 'dev', tmp_path / 'sys'
  dev.mkdir()
  sys_root.mkdir()
  return str(dev), str(sys_root)


def test_each_tensorflows_resolver_for_local():
  """TF 2.15: the TPU of this VM, an in-process master ''. TF 1.15: the master 'local', which no session takes."""
  resolver = RESOLVER(tpu='local')
  if TF1:
    assert resolver.master() == 'local' and resolver.cluster_spec() is None
  else:
    assert resolver.master() == '' and not resolver.cluster_spec()
    assert type(resolver._cloud_tpu_client).__name__ == '_LocalCloudTpuClient'  # pylint: disable=protected-access


def test_local_tpu_resolves_on_tf2_and_is_one_clear_error_on_tf1():
  if TF1:
    with pytest.raises(UserError, match='TensorFlow 1.15.5 cannot use: TPU VMs run TensorFlow 2'):
      tpu_cluster.resolve_tpu_cluster('local')
    return
  resolver = tpu_cluster.resolve_tpu_cluster('local')
  assert isinstance(resolver, RESOLVER) and resolver.master() == ''
  config = run_config.build_run_config('/tmp/unused', 10, None, 10, cluster=resolver)
  assert (config.master, config.evaluation_master) == ('', '')  # in-process: TPUEstimator uses this VM's TPU
  assert not config.session_config.HasField('cluster_def')


def test_a_tpu_node_address_resolves_without_network():
  resolver = tpu_cluster.resolve_tpu_cluster('grpc://10.0.0.2:8470')
  assert resolver.master() == 'grpc://10.0.0.2:8470'
  assert resolver.cluster_spec().as_dict() == {'worker': ['10.0.0.2:8470']}


def test_attached_tpu_devices(roots):
  dev, sys_root = roots
  assert preflight.attached_tpu_devices(dev, sys_root) == []
  write(os.path.join(dev, 'vfio', 'vfio'))  # the VFIO control node alone is no TPU
  write(os.path.join(dev, 'vfio', '12'))
  write(os.path.join(sys_root, 'kernel', 'iommu_groups', '12', 'devices', '0000:00:05.0', 'vendor'), '0x10de\n')
  write(os.path.join(dev, 'accel0'))
  write(os.path.join(sys_root, 'class', 'accel', 'accel0', 'device', 'vendor'), '0x10de\n')  # NVIDIA's accel
  assert preflight.attached_tpu_devices(dev, sys_root) == []
  write(os.path.join(dev, 'accel1'))  # a v2-v4 TPU VM chip; no vendor in sysfs
  write(os.path.join(dev, 'vfio', '13'))
  write(os.path.join(sys_root, 'kernel', 'iommu_groups', '13', 'devices', '0000:00:06.0', 'vendor'), '0x1ae0\n')
  assert preflight.attached_tpu_devices(dev, sys_root) == [os.path.join(dev, 'accel1'), os.path.join(dev, 'vfio', '13')]


class LocalResolver(object):
  """What the pre-flight asks of TPUClusterResolver('local') on TF 2.15."""

  def master(self):
    return ''


def test_no_attached_tpu_fails_in_a_moment_without_a_tcp_probe(roots, monkeypatch):
  monkeypatch.setattr(preflight, 'require_reachable', lambda *args: pytest.fail('probed a port'))
  start = time.time()
  with pytest.raises(UserError, match='no TPU is attached to this machine') as raised:
    tpu_cluster.require_tpu_reachable(cluster=LocalResolver(), dev_root=roots[0], sys_root=roots[1])
  assert time.time() - start < 1.0
  assert 'tpu-vm ssh' in raised.value.fix
  write(os.path.join(roots[0], 'accel0'))
  assert tpu_cluster.require_tpu_reachable(cluster=LocalResolver(), dev_root=roots[0], sys_root=roots[1]) == [
      os.path.join(roots[0], 'accel0')]


def test_mnist_tpu_on_a_machine_without_a_tpu(tmp_path):
  """--tpu_name=local: TF 2.15 stops at the pre-flight (no /dev/accel* here), TF 1.15 at the architecture."""
  start = time.time()
  result = subprocess.run([sys.executable, 'mnist_tpu.py', '--tpu_name=local', '--model_dir=%s' % (tmp_path / 'm'),
                           '--data_dir=%s' % (tmp_path / 'd')], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
  assert result.returncode == 1 and 'Traceback' not in result.stderr
  expected = 'cannot use: TPU VMs run TensorFlow 2' if TF1 else 'error: no TPU is attached to this machine'
  assert expected in result.stderr
  assert time.time() - start < 30
  assert not os.path.exists(str(tmp_path / 'd'))  # nothing was prepared


def test_keras_on_a_tpu_vm_initialises_the_local_tpu_without_connecting(roots, monkeypatch):
  if TF1:
    with pytest.raises(UserError, match='TensorFlow 1.15.5 cannot use'):
      mnist_keras.build_strategy('local', dev_root=roots[0], sys_root=roots[1])
    return
  calls = []
  monkeypatch.setattr(tf2.config, 'experimental_connect_to_cluster', lambda *args: calls.append('connect'))
  with pytest.raises(UserError, match='no TPU is attached'):
    mnist_keras.build_strategy('local', dev_root=roots[0], sys_root=roots[1])
  write(os.path.join(roots[0], 'accel0'))
  # A device file, but this TensorFlow has no TPU support: initialising the real local TPU system fails, clearly.
  with pytest.raises(UserError, match="could not connect to TPU 'local'"):
    mnist_keras.build_strategy('local', dev_root=roots[0], sys_root=roots[1])
  assert calls == []
