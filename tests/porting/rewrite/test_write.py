"""python -m estimator_tpu.port --write: the port made, and proven on every program it writes here.

Each folder of tests/porting/fixtures whose expected.json is a port manifest (it has `scan`), and the project's own
Estimator program (mnist.py + estimator_tpu/estimator), is ported and checked: (a) the copy parses and imports; (b)
the port report on it lists nothing required but the TODOs the port wrote, which are exactly the manifest's; and, on
the TensorFlows where the original runs, (c) it trains and evaluates under TPUEstimator(use_tpu=False), (d) on the
original's checkpoint it gives the original's metrics and, on the same batches, its per-step losses, (e) the
readiness check passes (estimator_tpu/porting/proof/verify.py says how). A fixture added with a manifest is proven
the same way.
"""
import json
import os
import subprocess
import sys

import pytest
import tensorflow.compat.v1 as tf

from support import tiny_run
from support import port_expectations
from support.paths import PORT_ENTRIES
from support.paths import PORT_FIXTURES
from support.paths import REPO_ROOT
from estimator_tpu.porting.rewrite import output
from estimator_tpu.porting.proof import verify
from estimator_tpu.porting.rewrite import port

TF_MAJOR = int(tf.__version__.split('.')[0])
ENTRIES = PORT_ENTRIES
MNIST_ARGS = ['--validation_size=50', '--batch_size=16', '--eval_batch_size=50', '--seed=1']
# The project's own Estimator program, as a manifest of its own (its base is the repository).
MNIST = {
    'scan': ['mnist.py', 'estimator_tpu/estimator'],
    'todos': [],
    'imports': [1, 2],
    'proof': {
        'tensorflow': [1, 2],
        'data': 'mnist_entries:write_data',
        'model_fn': 'estimator_tpu.estimator.model_fn:model_fn_builder(learning_rate=0.001, decay_steps=1000, '
                    'decay_rate=0.5)',
        'train_input_fn': "estimator_tpu.estimator.input_fn:train_input_fn_builder(data_dir='{data_dir}', "
                          'batch_size=16)',
        'eval_input_fn': "estimator_tpu.estimator.input_fn:eval_input_fn_builder(data_dir='{data_dir}', "
                         "split='test', batch_size=50)",
        'batch_size': 16,
        'eval_batch_size': 50,
    },
    # Training through mnist.py's own route (the tests below evaluate through it).
    'program': ['mnist.py', '--mode=train', '--data_dir={data_dir}', '--model_dir={data_dir}/model',
                '--train_steps=2'] + MNIST_ARGS,
}


def manifests():
  found = {'mnist (the project)': (REPO_ROOT, MNIST)}
  for name, manifest in sorted(port_expectations.manifests().items()):
    found[name] = (os.path.join(PORT_FIXTURES, name), manifest)
  return found


MANIFESTS = manifests()


def write_port(base, manifest, out_dir, monkeypatch):
  """The port of a manifest's program, written into out_dir as --write writes it; returns the Result."""
  monkeypatch.chdir(base)
  result = port(manifest['scan'])
  output.write(result, out_dir)
  return result


def entries_env(tree):
  """The environment a ported program runs in: its folder, the fixtures' entry points, the repository."""
  return dict(os.environ, PYTHONPATH=os.pathsep.join([tree, ENTRIES, REPO_ROOT] + [
      p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))


def python(code, cwd, env, timeout=600):
  return subprocess.run([sys.executable, '-c', code], cwd=cwd, env=env, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)


def module_names(base, manifest):
  names = []
  for path in manifest['scan']:
    files = [path] if path.endswith('.py') else [os.path.join(path, n) for n in sorted(os.listdir(
        os.path.join(base, path))) if n.endswith('.py')]
    for relative in files:
      module = os.path.splitext(relative)[0].replace(os.sep, '.')
      names.append(module[:-len('.__init__')] if module.endswith('.__init__') else module)
  return names


@pytest.mark.parametrize('name', sorted(MANIFESTS))
def test_the_port_leaves_exactly_its_todos_and_the_report_requires_nothing_else(name, tmp_path, monkeypatch):
  base, manifest = MANIFESTS[name]
  out = str(tmp_path / 'ported')
  result = write_port(base, manifest, out, monkeypatch)
  assert result.changed and verify.check_parses(out) is None  # (a) every ported file parses
  check = verify.check_report(manifest['scan'], out, base)  # (b)
  assert check.status == verify.PASS, check.line()
  todos = sorted((os.path.basename(path), rule) for path, _, rule, _ in output.todo_lines(result))
  assert todos == sorted(tuple(t) for t in manifest['todos'])
  summary = output.summary(result, out)
  assert summary.count('TODO(tpu port, rule') == len(todos)
  for f in result.files:  # the inputs are never touched
    with open(os.path.join(base, f.relative), encoding=f.encoding, newline='') as handle:
      assert handle.read() == f.original


@pytest.mark.parametrize('name', sorted(set(os.listdir(PORT_FIXTURES)) - set(MANIFESTS)))
def test_a_fixture_without_a_manifest_is_one_the_port_has_nothing_to_do_in(name, monkeypatch):
  """Every fixture folder has a manifest (and is proven by the tests here) unless the port report requires
  nothing there (bound_method_input and predict_branch_export are TPUEstimator programs already): then the port
  changes nothing."""
  monkeypatch.chdir(os.path.join(PORT_FIXTURES, name))
  result = port(sorted(n for n in os.listdir('.') if n.endswith('.py')))
  assert not result.changed and not result.todos


@pytest.mark.parametrize('name', sorted(n for n, (_, m) in MANIFESTS.items()
                                         if not m['proof'].get('model_fn') and not m.get('runs')))
def test_ported_files_that_cannot_run_here_still_import(name, tmp_path, monkeypatch):
  """(a) for the programs the proof cannot run (manifest: why_not): their ported modules import."""
  base, manifest = MANIFESTS[name]
  if TF_MAJOR not in manifest['imports']:
    pytest.skip('the port imports on TensorFlow %s only: %s' % (manifest['imports'], manifest['proof']['why_not']))
  out = str(tmp_path / 'ported')
  write_port(base, manifest, out, monkeypatch)
  imported = python('import %s' % ', '.join(module_names(base, manifest)), out, entries_env(out))
  assert imported.returncode == 0, imported.stderr[-2000:]


@pytest.mark.parametrize('name', sorted(n for n, (_, m) in MANIFESTS.items() if m.get('runs')))
def test_the_ported_program_runs_as_its_own_scripts(name, tmp_path, monkeypatch):
  """(a) and (c) where the proof's entry points do not apply (manifest: why_not): the ported program, in a copy of
  its folder, runs as its own scripts do (`python SCRIPT.py`, in order) and trains under TPUEstimator on the CPU."""
  base, manifest = MANIFESTS[name]
  if TF_MAJOR not in manifest['imports']:
    pytest.skip('the port imports on TensorFlow %s only: %s' % (manifest['imports'], manifest['proof']['why_not']))
  out, tree = str(tmp_path / 'ported'), str(tmp_path / 'tree')
  result = write_port(base, manifest, out, monkeypatch)
  assert any('.TPUEstimator(' in f.ported and '.TPUEstimator(' not in f.original for f in result.files)
  verify.overlay(base, out, tree)
  ran = python('import runpy, sys\nfor script in %r:\n  sys.argv = [script]\n  runpy.run_path(script, run_name="__main__")'
               % manifest['runs'], tree, entries_env(tree))
  assert ran.returncode == 0, ran.stderr[-3000:]


@pytest.mark.parametrize('name', sorted(n for n, (_, m) in MANIFESTS.items() if m['proof'].get('model_fn')))
def test_the_port_trains_and_gives_the_originals_metrics_and_losses(name, tmp_path, monkeypatch):
  """(c), (d) and (e), by --verify's own checks, and the ported program's own command (c)."""
  base, manifest = MANIFESTS[name]
  proof = manifest['proof']
  if TF_MAJOR not in proof['tensorflow']:
    pytest.skip('TensorFlow %d: %s' % (TF_MAJOR, proof['why_not']))
  out = str(tmp_path / 'ported')
  write_port(base, manifest, out, monkeypatch)
  monkeypatch.setenv('PYTHONPATH', os.pathsep.join([ENTRIES, os.environ.get('PYTHONPATH', '')]))
  request = dict((key, proof.get(key)) for key in ('model_fn', 'train_input_fn', 'eval_input_fn', 'data',
                                                   'readiness_model_fn', 'readiness_eval_input_fn'))
  request.update(params=proof.get('params', {}), batch_size=proof['batch_size'], eval_batch_size=proof['eval_batch_size'],
                 train_steps=2, continue_steps=2, seed=1, data_dir=None, readiness_args=[])
  checks = verify.run(manifest['scan'], out, request, base)
  assert [c.status for c in checks] == [verify.PASS] * len(verify.CHECKS), '\n'.join(c.line() for c in checks)
  if manifest.get('program'):
    tree = str(tmp_path / 'tree')
    verify.overlay(base, out, tree)
    data_dir = str(tmp_path / 'data')
    os.makedirs(data_dir)
    script, args = manifest['program'][0], [a.replace('{data_dir}', data_dir) for a in manifest['program'][1:]]
    module, function = proof['data'].split(':')
    ran = python('import runpy, sys, %s; %s.%s(%r); sys.argv = [%r] + %r; runpy.run_path(%r, run_name="__main__")'
                 % (module, module, function, data_dir, script, args, os.path.join(tree, script)), data_dir,
                 entries_env(tree))
    assert ran.returncode == 0, ran.stderr[-3000:]


# --- The project ports itself ----------------------------------------------------------------------------------

EVALUATE_ON = '''
import json, sys
from absl import flags
import mnist
from estimator_tpu import runner
from flags import mnist as program_flags
fv = flags.FlagValues()
program_flags.define_flags(fv)
fv(['mnist.py'] + sys.argv[1:])
metrics, counted = runner.run(fv, mnist.ROUTE)
print(json.dumps(dict(counted=counted, **dict((k, float(v)) for k, v in metrics.items()))))
'''


def test_the_ported_mnist_evaluates_to_mnist_tpus_metrics_on_its_checkpoint(tiny_model, tmp_path, monkeypatch):
  """--write on mnist.py and estimator_tpu/estimator gives a program that evaluates a checkpoint of mnist_tpu.py
  to mnist_tpu.py's own metrics, every test image counted once."""
  data_dir, model_dir = tiny_model
  expected, counted = tiny_run.run(['--mode=evaluate', '--data_dir=%s' % data_dir,
                                    '--model_dir=%s' % (tmp_path / 'tpu'), '--checkpoint_path=%s' % model_dir])
  out, tree = str(tmp_path / 'ported'), str(tmp_path / 'tree')
  write_port(REPO_ROOT, MNIST, out, monkeypatch)
  verify.overlay(REPO_ROOT, out, tree)
  script = os.path.join(str(tmp_path), 'evaluate_on.py')
  with open(script, 'w') as f:
    f.write(EVALUATE_ON)
  ran = subprocess.run([sys.executable, script, '--mode=evaluate', '--data_dir=%s' % data_dir,
                        '--model_dir=%s' % (tmp_path / 'port'), '--checkpoint_path=%s' % model_dir,
                        '--eval_batch_size=%d' % tiny_run.parse(tiny_run.TINY_ARGS).eval_batch_size],
                       cwd=tree, env=entries_env(tree), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=600)
  assert ran.returncode == 0, ran.stderr[-3000:]
  ported = json.loads(ran.stdout.strip().splitlines()[-1])
  assert ported.pop('counted') == counted == 110  # conftest.py's test split, every image once
  assert sorted(ported) == sorted(expected)
  for key, value in expected.items():
    assert abs(ported[key] - float(value)) <= 1e-5 * max(1.0, abs(float(value))), (key, ported[key], value)
