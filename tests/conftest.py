"""Shared fixtures: tiny synthetic datasets, the gs:// server (gcs_fixture.py), and the repository root on sys.path
(for `flags`, the programs and `support`)."""
import os
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (REPO_ROOT, os.path.join(REPO_ROOT, 'tests')):
  if path not in sys.path:
    sys.path.insert(0, path)

from support import tiny_run  # noqa: E402  (needs the path above)
from estimator_tpu.data import records  # noqa: E402
from estimator_tpu.data import synthetic  # noqa: E402

TINY_VALIDATION = tiny_run.TINY_VALIDATION
pytest_plugins = ['support.gcs_fixture']  # the gs:// fixtures `gcs` and `gcs_session`


@pytest.fixture
def idx_dir(tmp_path):
  """Four gzipped IDX files: 300 train (last 50 = validation) and 110 test synthetic digits."""
  directory = str(tmp_path / 'idx')
  synthetic.write_idx_dir(directory)
  return directory


@pytest.fixture
def data_dir(tmp_path, idx_dir):
  """The standard TFRecord layout written from `idx_dir`."""
  directory = str(tmp_path / 'data')
  records.convert_idx_dir(idx_dir, directory, validation_size=TINY_VALIDATION)
  return directory


@pytest.fixture(scope='session')
def shared_data_dir(tmp_path_factory):
  """data_dir's layout, built once per session, for tests that only read it (e.g. to share one training run)."""
  root = tmp_path_factory.mktemp('shared')
  synthetic.write_idx_dir(str(root / 'idx'))
  records.convert_idx_dir(str(root / 'idx'), str(root / 'data'), validation_size=TINY_VALIDATION)
  return str(root / 'data')


@pytest.fixture(scope='session')
def tiny_model(tmp_path_factory, shared_data_dir):
  """A model trained once per test session (mnist_tpu --mode=train, tiny_run.TINY_ARGS) on shared_data_dir.

  Returns (data_dir, model_dir). Treat both as read-only: pass your own --model_dir and this model as
  --checkpoint_path or --warm_start_from.
  """
  model_dir = str(tmp_path_factory.mktemp('tiny_model') / 'model')
  tiny_run.run(['--mode=train', '--data_dir=%s' % shared_data_dir, '--model_dir=%s' % model_dir])
  return shared_data_dir, model_dir
