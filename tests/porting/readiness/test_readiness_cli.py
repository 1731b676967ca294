"""`python -m estimator_tpu.readiness`: the TPU readiness check on code named on the command line.

The project's TPU model passes; its Estimator model_fn (the "before" of the port) fails on its signature and its
EstimatorSpec, one line each; a module that does not import, a name that is not there and a builder that raises
are one `error:` line with exit status 2. The user modules are written into tmp_path (each test its own names:
imported modules stay in sys.modules).
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from support.paths import PORT_FIXTURES
from support import tpu_topology
from support.paths import REPO_ROOT
from support.programs import check_lines
from support.programs import run_main
from estimator_tpu.porting import readiness
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import user_code
from estimator_tpu.porting.readiness.cli import main as readiness_main
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.runtime.errors import UserError

PROJECT_MODEL_FN = ('estimator_tpu.tpu.model_fn:model_fn_builder(learning_rate=0.001, decay_steps=1000, '
                    'decay_rate=0.5)')
ESTIMATOR_MODEL_FN = ('estimator_tpu.estimator.model_fn:model_fn_builder(learning_rate=0.001, decay_steps=1000, '
                      'decay_rate=0.5)')
SMALL_PLAN = ['--num_shards=2', '--batch_size=32']


def project_input_fn(data_dir):
  return "estimator_tpu.tpu.input_fn:train_input_fn_builder(data_dir=%r)" % data_dir


def run_cli(args):
  return run_main(readiness_main, args)


def write_module(tmp_path, name, source):
  path = tmp_path / (name + '.py')
  path.write_text(textwrap.dedent(source))
  return str(path)


# --- The project's code ------------------------------------------------------------------------------------------

def test_the_projects_tpu_model_is_ready(data_dir):
  status, out, err = run_cli(['--model_fn=' + PROJECT_MODEL_FN, '--input_fn=' + project_input_fn(data_dir)]
                             + SMALL_PLAN)
  assert status == 0 and err == ''
  assert check_lines(out) == [
      ('PASS', 'signatures'), ('PASS', 'topology'), ('PASS', 'train_input'), ('PASS', 'input_shapes'),
      ('PASS', 'input_batch'), ('PASS', 'input_dtypes'), ('PASS', 'xla_compile'), ('PASS', 'step_shapes'),
      ('PASS', 'step_dtypes'), ('PASS', 'precision'), ('PASS', 'step_summaries'), ('PASS', 'gradient_all_reduce'),
      ('PASS', 'global_step'), ('PASS', 'host_call'), ('SKIP', 'evaluate'), ('SKIP', 'eval_coverage'), ('SKIP', 'eval_step'),
      ('SKIP', 'predict'), ('SKIP', 'predict_step'), ('PASS', 'batch_split'), ('SKIP', 'checkpoint_cadence'),
      ('SKIP', 'cloud_storage'), ('SKIP', 'tpu_reachable')]
  assert out.splitlines()[-1] == 'TPU readiness: 15 passed, 0 failed, 8 skipped.'
  assert "PASS input_shapes (rule 4): static: features['image'] [16, 784], labels [16]." in out


def test_the_estimator_model_fn_fails_on_its_signature_and_its_training_step(data_dir):
  """The project's plain-Estimator model_fn returns an EstimatorSpec, which TPU training takes (tpu_estimator.py,
  _verify_estimator_spec: only training_chief_hooks are refused), so its training step is compiled and judged: the
  learning-rate summary the TPU drops and the gradients no CrossShardOptimizer combines."""
  status, out, err = run_cli(['--model_fn=' + ESTIMATOR_MODEL_FN, '--input_fn=' + project_input_fn(data_dir)]
                             + SMALL_PLAN)
  assert status == 1 and err == ''
  failed = [check for status, check in check_lines(out) if status == 'FAIL']
  assert failed == ['signatures', 'step_summaries', 'gradient_all_reduce'], out
  assert "FAIL step_summaries (rule 7): model_fn writes 1 summary in the TRAIN step ('learning_rate')" in out
  assert 'PASS xla_compile (rule 18): the TPU training step' in out and 'model_fn_spec' not in out


def test_evaluation_and_prediction_of_the_projects_model_are_checked_too(data_dir):
  """With --eval_input_fn and --predict_input_fn the evaluation and prediction steps are compiled, not skipped."""
  eval_input_fn = ('estimator_tpu.tpu.input_fn:eval_input_fn_builder(data_dir=%r, split="test", batch_size=10, '
                   'steps=11)' % data_dir)
  predict_input_fn = ('estimator_tpu.tpu.input_fn:predict_input_fn_builder(data_dir=%r, split="test", '
                      'num_examples=-1, batch_size=10)' % data_dir)
  status, out, err = run_cli(['--model_fn=' + PROJECT_MODEL_FN, '--input_fn=' + project_input_fn(data_dir),
                              '--eval_input_fn=' + eval_input_fn, '--predict_input_fn=' + predict_input_fn,
                              '--eval_batch_size=10', '--eval_steps=11', '--eval_examples=110', '--eval_padded']
                             + SMALL_PLAN)
  assert status == 0 and err == '', out + err
  found = dict((check, state) for state, check in check_lines(out))
  assert found['evaluate'] == found['eval_step'] == found['eval_coverage'] == 'PASS'
  assert found['predict'] == found['predict_step'] == 'PASS'
  assert 'the tensors that leave the TPU are batch-major: labels [5], logits [5, 10], weights [5]' in out
  assert 'class_ids [5], probabilities [5, 10]' in out


def test_an_eval_input_fn_needs_an_eval_batch_size(data_dir):
  status, out, err = run_cli(['--model_fn=' + PROJECT_MODEL_FN, '--input_fn=' + project_input_fn(data_dir),
                              '--eval_input_fn=' + project_input_fn(data_dir)] + SMALL_PLAN)
  assert (status, out) == (2, '')
  assert err == ('error: --eval_input_fn is given without --eval_batch_size. Fix: pass the global evaluation batch, '
                 'e.g. --eval_batch_size=1024.\n')


@pytest.mark.parametrize('flag', ['--help', '--helpfull', '--helpshort'])
def test_help_prints_the_flags_without_asking_for_model_fn(flag):
  status, out, err = run_cli([flag])
  assert (status, err) == (0, '')
  assert out.startswith('TPU readiness of your own TPUEstimator code')
  assert '--eval_input_fn' in out and '--predict_input_fn' in out and '--num_shards' in out


def test_the_estimator_input_fn_fails_on_params_and_static_shapes(data_dir):
  input_fn = ("estimator_tpu.estimator.input_fn:train_input_fn_builder(%r, 32)" % data_dir)
  status, out, _ = run_cli(['--model_fn=' + PROJECT_MODEL_FN, '--input_fn=' + input_fn] + SMALL_PLAN)
  assert status == 1
  assert [check for status, check in check_lines(out) if status == 'FAIL'] == ['signatures', 'input_shapes',
                                                                              'input_batch']
  assert 'FAIL signatures (rule 3): input_fn() takes no params' in out
  # its batch dimension is None, so the batch read tells the size it batches at (its own 32)
  assert "FAIL input_batch (rule 3): the first batch read has 32 rows, but params['batch_size'] is " in out
  assert "FAIL input_shapes (rule 4): features['image'] has shape [?, 784], labels has shape [?]" in out


# --- Code written like a user's --------------------------------------------------------------------------------

DIGITS = '''
    import numpy as np
    import tensorflow.compat.v1 as tf

    def input_fn(params):
      images = np.random.RandomState(0).rand(64, 784).astype(np.float32)
      labels = np.arange(64, dtype=np.int32) % 10
      dataset = tf.data.Dataset.from_tensor_slices(({'x': images}, labels))
      return dataset.repeat().batch(params['batch_size'], drop_remainder=True)
    '''

CLASSIFIER = '''
    import tensorflow.compat.v1 as tf

    def model_fn(features, labels, mode, params, config):
      assert config.tpu_config.num_shards == 2  # TPUEstimator's RunConfig, for a model_fn that asks for it
      logits = tf.layers.dense(features['x'], params['classes'])
      loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
      optimizer = tf.train.GradientDescentOptimizer(params.get('rate', 0.1))
      if params['use_tpu']:
        optimizer = tf.tpu.CrossShardOptimizer(optimizer)
      train_op = optimizer.minimize(loss, tf.train.get_global_step())
      return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    class Builders(object):
      @staticmethod
      def model_fn(rate):
        return lambda features, labels, mode, params, config: model_fn(features, labels, mode, dict(params, rate=rate),
                                                                       config)
    '''


def test_a_user_model_from_files_with_json_params_and_a_builder_method(tmp_path):
  inputs = write_module(tmp_path, 'user_digits', DIGITS)
  classifier = write_module(tmp_path, 'user_classifier', CLASSIFIER)
  for model_fn in (classifier + ':model_fn', classifier + ':Builders.model_fn(rate=0.05)'):
    status, out, err = run_cli(['--model_fn=' + model_fn, '--input_fn=%s:input_fn' % inputs,
                                '--params={"classes": 10}', '--num_shards=2', '--batch_size=16'])
    assert status == 0, out + err
    assert out.splitlines()[-1] == 'TPU readiness: 15 passed, 0 failed, 8 skipped.'


def run_module(args, env_path=()):
  """`python -m estimator_tpu.readiness ARGS` in a process of its own (for user code that defines global flags)."""
  env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO_ROOT] + list(env_path)))
  return subprocess.run([sys.executable, '-m', 'estimator_tpu.readiness'] + args, cwd=REPO_ROOT, env=env,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


def test_the_keras_fixture_fails_to_build_its_step_with_its_own_flags_parsed(tmp_path):
  """tests/porting/fixtures/keras_in_model_fn: a model_fn without params and with a Keras optimizer, reading FLAGS
  inside; --learning_rate is the fixture's own absl flag, so the step gets as far as the optimizer."""
  write_module(tmp_path, 'keras_digits', DIGITS)
  trainer = os.path.join(PORT_FIXTURES, 'keras_in_model_fn', 'trainer.py')
  result = run_module(['--model_fn=%s:model_fn' % trainer, '--input_fn=keras_digits:input_fn', '--num_shards=2',
                       '--batch_size=16', '--learning_rate=0.01'], [str(tmp_path)])
  assert result.returncode == 1, result.stderr[-3000:]
  assert [check for status, check in check_lines(result.stdout) if status == 'FAIL'] == ['signatures', 'xla_compile']
  assert ('FAIL xla_compile (rule 18): model_fn failed to build the TPU training step: ValueError: No gradients provided for '
          'any variable') in result.stdout
  unknown = run_module(['--model_fn=%s:model_fn' % trainer, '--input_fn=keras_digits:input_fn', '--learning_rat=1'],
                       [str(tmp_path)])
  assert unknown.returncode == 2 and 'Unknown command line flag \'learning_rat\'' in unknown.stderr


# --- What stops the check before it runs: one line, exit status 2 ---------------------------------------------

def one_error(args):
  status, out, err = run_cli(args)
  assert status == 2 and out == ''
  assert err.count('\n') == 1 and err.startswith('error: ')
  return err.rstrip('\n')


def test_a_module_that_fails_to_import_is_one_line(tmp_path):
  broken = write_module(tmp_path, 'user_broken', 'import tensorflow_addons_that_is_not_installed\n')
  assert one_error(['--model_fn=%s:model_fn' % broken, '--input_fn=x:y']) == (
      "error: --model_fn: importing %s failed: ModuleNotFoundError: No module named "
      "'tensorflow_addons_that_is_not_installed' Fix: run from the folder that holds %s (or its package), put it on "
      "PYTHONPATH, install what it imports, or give the path of the .py file." % (broken, broken.split('.')[0]))


def test_a_module_that_raises_at_import_is_one_line(tmp_path):
  raising = write_module(tmp_path, 'user_raising', 'import sys\nopen(sys.argv[99])\n')
  assert one_error(['--model_fn=%s:model_fn' % raising, '--input_fn=x:y']) == (
      'error: --model_fn: importing %s failed: IndexError: list index out of range Fix: make `import %s` work on '
      'its own: code that runs at import (a main, flag parsing, data loading) belongs under `if __name__ == '
      '"__main__":`.' % (raising, raising))


def test_a_folder_whose_own_module_shadows_what_tensorflow_imports_is_one_line(tmp_path):
  """A program folder's own tensorboard.py (held-out-20's captcha program) hides TensorBoard from TensorFlow's import
  when the check runs from there (`python -m` puts the folder first on sys.path): one line naming the file."""
  (tmp_path / 'tensorboard.py').write_text('import tensorflow as tf\nscope = tf.variable_scope\n')
  (tmp_path / 'train.py').write_text('import tensorflow as tf\n')
  env = dict(os.environ, PYTHONPATH=REPO_ROOT)
  result = subprocess.run([sys.executable, '-m', 'estimator_tpu.readiness', '--run', '--', 'train.py'],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
  assert result.returncode == 2 and result.stdout == '' and 'Traceback' not in result.stderr, result.stderr[-3000:]
  [line] = [line for line in result.stderr.splitlines() if line.startswith('error: ')]
  assert line.startswith('error: TensorFlow failed to import: tensorboard.py in this folder shadows the installed '
                         'package of that name') and line.endswith('or rename tensorboard.py.')


def test_an_unknown_dotted_module_is_one_line():
  assert one_error(['--model_fn=no_such_package.models:model_fn', '--input_fn=x:y']).startswith(
      "error: --model_fn: importing no_such_package.models failed: ModuleNotFoundError: No module named "
      "'no_such_package'")


def test_a_missing_name_lists_the_names_that_look_like_one(tmp_path):
  module = write_module(tmp_path, 'user_names', DIGITS)
  assert one_error(['--model_fn=%s:input_fn' % module, '--input_fn=%s:train_input_fn' % module]) == (
      'error: --input_fn: %s has no train_input_fn. Fix: name a function defined in %s (functions with "input" in '
      'their name: input_fn).' % (module, module))


def test_a_builder_that_raises_is_one_line(tmp_path):
  module = write_module(tmp_path, 'user_builder', CLASSIFIER)
  error = one_error(['--model_fn=%s:Builders.model_fn(speed=2)' % module, '--input_fn=%s:model_fn' % module])
  assert error.startswith('error: --model_fn: Builders.model_fn(speed=2) raised TypeError: ')
  # Python 3.7 says model_fn(), 3.11 Builders.model_fn().
  assert error.endswith("model_fn() got an unexpected keyword argument 'speed' Fix: pass the arguments "
                        'Builders.model_fn takes (as literals).')


@pytest.mark.parametrize('args, words', [
    ([], 'Flag --model_fn must have a value other than None; flag --input_fn=None'),
    (['--model_fn=x', '--input_fn=y:z'], "--model_fn='x' does not name a function"),
    (['--model_fn=m:f(x=open("/etc/passwd"))', '--input_fn=y:z'], '--model_fn: arguments must be literals'),
    (['--model_fn=m:f(**{"a": 1})', '--input_fn=y:z'], '--model_fn: **kwargs cannot be given here'),
    (['--model_fn=m:f()()', '--input_fn=y:z'], 'only a name (or Class.name) can come before the arguments'),
    (['--model_fn=m:f', '--input_fn=y:z', '--params=[1]'], '--params is JSON but not an object'),
    (['--model_fn=m:f', '--input_fn=y:z', '--tpu_name=a', '--master=grpc://1.2.3.4:8470'],
     '--tpu_name and --master both say where the TPU is'),
    (['--model_fn=m:f', '--input_fn=y:z', '--num_shards=0'], 'num_shards'),
])
def test_bad_flags_are_one_line_before_anything_is_imported(args, words):
  assert words in one_error(args)


def test_help_lists_the_plan_flags():
  status, out, _ = run_cli(['--help'])
  assert status == 0
  for flag in ('--model_fn', '--input_fn', '--params', '--num_shards', '--batch_size', '--eval_batch_size',
               '--iterations', '--save_checkpoints_steps', '--model_dir', '--data_dir', '--tpu_name', '--master'):
    assert flag in out


def test_python_dash_m_prints_one_error_line_and_exits_2(tmp_path):
  broken = write_module(tmp_path, 'user_syntax', 'def model_fn(:\n')
  result = run_module(['--model_fn=%s:model_fn' % broken, '--input_fn=%s:input_fn' % broken])
  assert result.returncode == 2 and result.stdout == ''
  errors = [line for line in result.stderr.splitlines() if line.startswith('error: ')]
  assert errors == ['error: --model_fn: importing %s failed: SyntaxError: invalid syntax (user_syntax.py, line 1) '
                    'Fix: fix the syntax (Python 2 code must be converted to Python 3 first).' % broken]
  assert 'Traceback' not in result.stderr


# --- Pieces ------------------------------------------------------------------------------------------------------

def test_builder_calls_are_read_as_literals_only():
  spec = user_code.parse_spec('model_fn', "pkg.models:Model.builder(3, 'a', hidden=[64, 32], rate=1e-3, on=None)")
  assert (spec.module, spec.name, spec.call, spec.args, spec.kwargs) == (
      'pkg.models', 'Model.builder', True, (3, 'a'), {'hidden': [64, 32], 'rate': 1e-3, 'on': None})
  plain = user_code.parse_spec('input_fn', 'trainer.py:input_fn')
  assert (plain.module, plain.name, plain.call) == ('trainer.py', 'input_fn', False)
  with pytest.raises(UserError):
    user_code.parse_spec('model_fn', 'm:f(x=__import__("os").system("true"))')


def test_cores_that_do_not_fill_hosts_are_a_failed_topology_check(data_dir):
  status, out, err = run_cli(['--model_fn=' + PROJECT_MODEL_FN, '--input_fn=' + project_input_fn(data_dir),
                              '--num_shards=12', '--batch_size=24'])
  assert status == 1 and err == ''
  assert [line for line in out.splitlines() if line.startswith('FAIL')] == [
      'FAIL topology (rule 14): 12 cores do not fill hosts of 8 cores. Fix: pass the core count of a real slice '
      '(--num_shards=8, 32, 128, ...) or name it with --tpu_type.']


@pytest.mark.parametrize('chief_hooks', [False, True])
def test_an_estimator_spec_trains_unless_it_has_chief_hooks_in_the_library_too(chief_hooks):
  """readiness.check_tpu_readiness itself (the API mnist_tpu.py --mode=check_tpu uses) follows TensorFlow on row 5:
  TPU training takes an EstimatorSpec's loss and train_op, so its step is compiled (and its missing
  CrossShardOptimizer found); with training_chief_hooks TPUEstimator refuses it, one failed check."""

  def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    hooks = [tf.train.StepCounterHook(every_n_steps=1, output_dir='unused')] if chief_hooks else None
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, training_chief_hooks=hooks)

  def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices((np.zeros([8, 4], np.float32), np.zeros([8], np.int32)))
    return dataset.repeat().batch(params['batch_size'], drop_remainder=True)

  checks = readiness.check_tpu_readiness(model_fn, input_fn, tpu_topology.plan(num_shards=2, train_batch_size=8))
  by_name = dict((check.name, check) for check in checks)
  failed = [check.name for check in checks if check.status == check_results.FAIL]
  if chief_hooks:
    assert failed == ['model_fn_spec']
    assert by_name['model_fn_spec'].line().startswith('FAIL model_fn_spec (rule 5): model_fn returned a '
                                                      'tf.estimator.EstimatorSpec with training_chief_hooks')
    assert all(by_name[name].status == check_results.SKIP for name in readiness.STEP_CHECKS)
  else:
    assert failed == ['gradient_all_reduce'] and by_name['xla_compile'].status == check_results.PASS


def test_the_plan_flags_mean_what_mnist_tpu_py_flags_mean():
  """Defined again in estimator_tpu (flags/ is not installed): the same names and the same TPU defaults."""
  from absl import flags
  from estimator_tpu.porting.readiness import cli
  from flags import mnist_tpu as mnist_tpu_flags
  from estimator_tpu.tpu import accelerator_types

  ours, theirs = flags.FlagValues(), flags.FlagValues()
  cli.define_flags(ours)
  mnist_tpu_flags.define_flags(theirs)
  shared = ['num_shards', 'iterations', 'batch_size', 'eval_batch_size', 'save_checkpoints_steps', 'model_dir',
            'data_dir', 'eval_steps', 'tpu_name', 'tpu_zone', 'gcp_project', 'master']
  assert all(name in theirs for name in shared)
  # mnist_tpu.py leaves --num_shards to the TPU (None: TPUEstimator counts its cores) and its check plans a v2-8/v3-8
  # without it; this check has no TPU either, so it plans those 8 cores by default.
  assert theirs['num_shards'].default is None
  assert ours['num_shards'].default == accelerator_types.DEFAULT_CORES_PER_HOST
  assert ours['iterations'].default == theirs['iterations'].default
  assert ours['batch_size'].default == batch_sizes.effective_batch_size(theirs['batch_size'].default, use_tpu=True)
  assert all(ours[name].default is None for name in ('model_dir', 'tpu_name', 'tpu_zone', 'gcp_project', 'master'))
