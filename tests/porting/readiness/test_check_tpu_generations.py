"""--mode=check_tpu on every Cloud TPU generation, both routes: a verdict for each, never a crash.

v2, v3 and v4 slices offer TensorFlow with the StreamExecutor runtime, and the TPUEstimator route passes there;
v5e (v5litepod-N), v5p and v6e offer it only with PJRT, so mnist_tpu.py's check is one FAIL line naming the Keras
route, whose own check (TF 2.x) passes on them. In process, on the tests' tiny digits.
"""
import pytest
import tensorflow.compat.v1 as tf

import mnist_tpu
from estimator_tpu.porting.readiness import route_check
from support import programs

IS_TF2 = int(tf.__version__.split('.')[0]) >= 2
# Global batches every slice below splits (1 to 32 cores); 110 test examples in 4 padded batches of 32.
PLAN = ['--mode=check_tpu', '--batch_size=64', '--eval_batch_size=32', '--iterations=10',
        '--save_checkpoints_steps=20']


def check_tpu(capsys, define, check, args):
  """(exit status, output) of a program's check, run in this process on the flags PLAN + args."""
  fv = programs.parse_flags(define, PLAN + args)
  status = check(fv)
  return status, capsys.readouterr().out


def check_estimator_route(capsys, args):
  return check_tpu(capsys, programs.mnist_tpu_flags.define_flags,
                   lambda fv: route_check.check_route(fv, mnist_tpu.ROUTE), args)


@pytest.mark.parametrize('tpu_type', ['v2-8', 'v3-32', 'v4-8'])
def test_tpu_estimator_passes_on_the_stream_executor_generations(capsys, shared_data_dir, tpu_type):
  status, out = check_estimator_route(capsys, ['--tpu_type=%s' % tpu_type, '--data_dir=%s' % shared_data_dir])
  found = programs.check_statuses(out)
  assert status == 0, out
  assert 'TPUEstimator needs StreamExecutor: create the TPU VM with the -se version' in out
  assert found['tpu_runtime'] == found['topology'] == found['xla_compile'] == 'PASS'
  assert found['eval_step'] == found['predict_step'] == 'PASS'


@pytest.mark.parametrize('tpu_type', ['v5litepod-8', 'v5p-8', 'v6e-8', 'v6e-16'])
def test_tpu_estimator_fails_on_the_pjrt_generations_with_the_keras_fix(capsys, shared_data_dir, tpu_type):
  status, out = check_estimator_route(capsys, ['--tpu_type=%s' % tpu_type, '--data_dir=%s' % shared_data_dir])
  lines = out.splitlines()
  assert status == 1
  assert lines[0].startswith('FAIL tpu_runtime (rule 2): %s is a ' % tpu_type)
  assert 'only with the PJRT runtime' in lines[0] and 'tensorflow/tensorflow#90807' in lines[0]
  assert 'Fix: run the Keras route on it: `python mnist_keras.py --mode=check_tpu --tpu_type=%s' % tpu_type \
      in lines[0]
  assert lines[1:] == ['TPU readiness: 0 passed, 1 failed, 0 skipped.']


@pytest.mark.skipif(not IS_TF2, reason='mnist_keras.py is the TF 2.x route; TF %s' % tf.__version__)
@pytest.mark.parametrize('tpu_type, replicas', [('v5litepod-8', 8), ('v5p-8', 4), ('v6e-16', 16)])
def test_the_keras_route_passes_on_the_pjrt_generations(capsys, shared_data_dir, tpu_type, replicas):
  import mnist_keras  # pylint: disable=g-import-not-at-top  (TF 2 only)
  from flags import mnist_keras as mnist_keras_flags  # pylint: disable=g-import-not-at-top
  status, out = check_tpu(capsys, mnist_keras_flags.define_flags, mnist_keras.check_tpu,
                          ['--tpu_type=%s' % tpu_type, '--data_dir=%s' % shared_data_dir])
  found = programs.check_statuses(out)
  assert status == 0, out
  assert 'TPUStrategy would run %d replicas' % replicas in out
  assert [name for name, state in found.items() if state != 'PASS'] == ['cloud_storage', 'tpu_reachable']
  assert {'tpu_runtime', 'keras_train_step', 'keras_eval_step', 'keras_predict_step', 'strategy_scope',
          'keras_layers', 'keras_checkpoint', 'summary_cadence', 'precision'} <= set(found)
