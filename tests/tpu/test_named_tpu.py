"""A named Cloud TPU (--tpu_name=NAME) is looked up by TensorFlow's own TPUClusterResolver, through the client
libraries setup.py's `tpu` extra installs, against a stand-in of the Cloud TPU API and the GCE metadata server on
127.0.0.1 (support/cloud_tpu_api.py). Each case runs the real program, or the real resolver, in a subprocess:
the libraries read their endpoints from the environment once, when imported.

What can go wrong ends in one line whose fix fits: a TPU the API does not know, an API out of reach, a TPU that is
not READY, and the client libraries missing (which TF 1.15 reports as an ImportError traceback and TF 2.15 as
"pip install cloud-tpu-client" followed by a fix about the TPU's state).
"""
import os
import subprocess
import sys

import pytest
import tensorflow.compat.v1 as tf

from support import programs
from support.cloud_tpu_api import TOKEN
from support.cloud_tpu_api import CloudTpuApi
from support.loopback import closed_port
from support.paths import REPO_ROOT

ZONE = 'us-central1-b'
PROJECT = 'stand-in-project'
# A TPU Node needs its directories on gs://; every case here stops before anything touches them.
NODE_ARGS = ['--mode=train', '--tpu_zone=%s' % ZONE, '--gcp_project=%s' % PROJECT,
             '--data_dir=gs://stand-in-bucket/mnist', '--model_dir=gs://stand-in-bucket/model']
RESOLVE = ('from estimator_tpu.runtime.errors import exit_on_user_error\n'
           'from estimator_tpu.tpu import cluster\n'
           'resolver = exit_on_user_error(cluster.resolve_tpu_cluster, %r, %r, %r)\n'
           'print(cluster.tpu_master_address(None, resolver))\n')


@pytest.fixture
def api():
  with CloudTpuApi(PROJECT, ZONE) as server:
    yield server


def run(args, environment, extra_path=None):
  env = dict(os.environ, **environment)
  env['PYTHONPATH'] = os.pathsep.join(([extra_path] if extra_path else []) + [REPO_ROOT])
  return subprocess.run([sys.executable] + args, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, universal_newlines=True, timeout=120)


def run_mnist_tpu(tpu_name, environment, extra_path=None):
  return run([programs.SCRIPT, '--tpu_name=%s' % tpu_name] + NODE_ARGS, environment, extra_path)


def test_a_named_tpu_resolves_to_its_worker_through_tensorflows_resolver(api):
  api.add_node('my-tpu', [('10.240.1.2', 8470)])
  result = run(['-c', RESOLVE % ('my-tpu', ZONE, PROJECT)], api.environment())
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout.strip().splitlines()[-1] == 'grpc://10.240.1.2:8470'
  node = '/v1/projects/%s/locations/%s/nodes/my-tpu' % (PROJECT, ZONE)
  asked = [path for path in api.requests if path.split('?')[0] == node]
  assert asked, api.requests
  # The request carried the token oauth2client fetched from the stand-in metadata server.
  assert api.authorizations[api.requests.index(asked[0])] == 'Bearer %s' % TOKEN


def test_mnist_tpu_connects_to_the_worker_the_api_names(api):
  port = closed_port()
  api.add_node('my-tpu', [('127.0.0.1', port)])
  result = run_mnist_tpu('my-tpu', api.environment())
  # The worker it probes is the one the API gave for the name: resolution worked, and nothing listens there.
  programs.assert_one_clear_error(result, 'the TPU worker grpc://127.0.0.1:%d is not reachable' % port)


def test_an_unknown_tpu_is_one_line_naming_it(api):
  result = run_mnist_tpu('no-such-tpu', api.environment())
  line = programs.assert_one_clear_error(result, "there is no TPU 'no-such-tpu' (zone %s, project %s)"
                                         % (ZONE, PROJECT), 'gcloud compute tpus list')
  assert 'READY' not in line
  # Nothing else a user must read: no token-fetch log, no warning from the API client's libraries (setup.py pins
  # a google-api-core that does not warn about Python versions at import).
  assert not [text for text in result.stderr.splitlines() if 'Warning' in text or 'access_token' in text]


def test_a_tpu_that_is_not_ready_is_one_line_with_its_state(api):
  api.add_node('my-tpu', [('127.0.0.1', 8470)], state='CREATING')
  programs.assert_one_clear_error(run_mnist_tpu('my-tpu', api.environment()), 'is not READY (state CREATING)')


def test_an_unreachable_tpu_api_is_one_line_in_seconds(api):
  environment = dict(api.environment(), TPU_API_DISCOVERY_URL='http://127.0.0.1:%d/{api}/{apiVersion}'
                     % closed_port())
  line = programs.assert_one_clear_error(run_mnist_tpu('my-tpu', environment),
                                         'the Cloud TPU API could not be reached', '--master=grpc://IP:8470')
  assert 'READY' not in line


def test_missing_client_libraries_name_the_install_not_the_tpu_state(api, tmp_path):
  # A googleapiclient that cannot be imported stands for a machine where the `tpu` extra was not installed.
  shadow = tmp_path / 'googleapiclient'
  shadow.mkdir()
  (shadow / '__init__.py').write_text("raise ImportError('No module named googleapiclient')\n")
  result = run_mnist_tpu('my-tpu', api.environment(), extra_path=str(tmp_path))
  line = programs.assert_one_clear_error(result, "pip install '.[tpu]'", 'client libraries are not installed')
  assert 'READY' not in line and 'cloud-tpu-client' not in result.stderr
  assert not api.requests  # stopped before asking anything


def test_zone_and_project_come_from_the_metadata_server_or_a_one_line_fix(api):
  """TF 2.15's client asks the metadata server it is pointed at (GCE_METADATA_HOST) for a zone and project not
  given; TF 1.15's asks metadata.google.internal only, which is not there off GCE: one line saying to pass them."""
  api.add_node('my-tpu', [('10.240.1.2', 8470)])
  result = run(['-c', RESOLVE % ('my-tpu', None, None)], api.environment())
  if tf.__version__.startswith('1.'):
    line = programs.assert_one_clear_error(result, 'the zone and project of', 'pass --tpu_zone=ZONE and '
                                           '--gcp_project=PROJECT')
    assert 'READY' not in line
  else:
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == 'grpc://10.240.1.2:8470'
