"""The port report (python -m estimator_tpu.port): exact findings on fixtures of classic legacy shapes, on the
project's own Estimator program (the "before" of the port) and on its TPUEstimator program (nothing required).

Nothing here needs TensorFlow: the tool reads source only.
"""
import collections
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from support import port_expectations
from support.paths import PORT_FIXTURES
from support.paths import REPO_ROOT
from support.programs import run_main
from estimator_tpu.porting.report import ADVICE
from estimator_tpu.porting.report import REQUIRED
from estimator_tpu.porting.report import UNKNOWN
from estimator_tpu.porting.report import scan_paths
from estimator_tpu.porting.cli import main as port_main
from estimator_tpu.porting.report import codes

# --- The project's two programs, by role; the expectations below refer to the roles.
ESTIMATOR_PROGRAM = collections.OrderedDict([
    ('program', 'mnist.py'),
    ('model_fn', 'estimator_tpu/estimator/model_fn.py'),
    ('input_fn', 'estimator_tpu/estimator/input_fn.py'),
    # The same Estimator trained by a TF_CONFIG cluster; MIGRATION.md's rule 14 names both.
    ('cluster', 'tools/mnist_cluster.py'),
    ('distributed', 'estimator_tpu/distributed/training.py'),
])
TPU_PROGRAM = collections.OrderedDict([
    ('program', 'mnist_tpu.py'),
    ('tpu', 'estimator_tpu/tpu'),
    ('network', 'estimator_tpu/model.py'),
    ('runner', 'estimator_tpu/runner.py'),
    ('serving', 'estimator_tpu/serving.py'),
    ('data', 'estimator_tpu/data'),
    ('runtime', 'estimator_tpu/runtime'),
    ('flags', 'flags'),
])

FIXTURES = PORT_FIXTURES
MIGRATION_DOC = os.path.join(REPO_ROOT, 'docs', 'MIGRATION.md')

# (role, a snippet of the line the finding is on, rule, severity[, a snippet of the line below it that is meant]):
# lines are found by their code, so the expectations survive the files moving.
ESTIMATOR_EXPECTED = [
    ('program', 'config = tf.estimator.RunConfig(', 1, REQUIRED),
    ('program', 'config = tf.estimator.RunConfig(', 2, ADVICE),
    ('program', 'config = tf.estimator.RunConfig(', 8, ADVICE),
    ('program', 'return tf.estimator.Estimator(', 1, REQUIRED),
    ('program', 'return estimator.evaluate(input_fn, steps=fv.eval_steps', 9, REQUIRED),
    ('model_fn', 'def model_fn(features, labels, mode):', 3, REQUIRED),
    ('model_fn', 'return tf.estimator.EstimatorSpec(mode, predictions=', 5, REQUIRED),
    ('model_fn', 'return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=', 5, REQUIRED),  # EstimatorSpec
    ('model_fn', 'return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=', 5, REQUIRED),  # eval_metric_ops
    ('model_fn', "tf.summary.scalar('learning_rate', rate)", 7, REQUIRED),
    ('model_fn', 'train_op = optimizer.minimize(loss', 6, REQUIRED),
    ('model_fn', 'return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)', 5, ADVICE),  # TRAIN only
    # Each input_fn: no params, and the batch size of its builder; training and evaluation: no drop_remainder.
    ('input_fn', 'def train_input_fn_builder(', 3, REQUIRED, 'def input_fn():'),
    ('input_fn', 'dataset = dataset.batch(batch_size)', 3, REQUIRED),
    ('input_fn', 'dataset = dataset.batch(batch_size)', 4, REQUIRED),
    ('input_fn', 'def eval_input_fn_builder(', 3, REQUIRED, 'def input_fn():'),
    ('input_fn', 'dataset = records.read_dataset(path).batch(batch_size)', 3, REQUIRED),
    ('input_fn', 'dataset = records.read_dataset(path).batch(batch_size)', 4, REQUIRED),
    ('input_fn', 'def predict_input_fn_builder(', 3, REQUIRED, 'def input_fn():'),
    ('input_fn', 'dataset = records.read_dataset(path).take(num_examples).batch(batch_size)', 3, REQUIRED),
    # (distributed's `run_config = tf.estimator.RunConfig()` only reads TF_CONFIG back: no estimator gets it)
    ('distributed', 'eval_spec = tf.estimator.EvalSpec(', 9, REQUIRED),
    ('distributed', 'tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)', 14, ADVICE),
    # On a TPU, one process: train_and_evaluate would evaluate from inside training, resetting the TPU under it.
    ('distributed', 'tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)', 8, REQUIRED),
]


def as_tuples(report, root=None):
  """Sorted (path relative to root, line, rule, severity) of a report's findings."""
  return sorted((os.path.relpath(f.path, root) if root else f.path, f.line, f.rule, f.severity)
                for f in report.findings)


def line_of(path, snippet, below=None):
  """The line holding `snippet`, or with `below`, the first line under it that holds `below`."""
  with open(path) as f:
    texts = list(f)
  lines = [number for number, text in enumerate(texts, 1) if snippet in text]
  assert len(lines) == 1, 'snippet %r is on lines %s of %s' % (snippet, lines, path)
  if below is None:
    return lines[0]
  return next(number for number, text in enumerate(texts, 1) if number > lines[0] and below in text)


def program_paths(table):
  return [os.path.join(REPO_ROOT, path) for path in table.values()]


# --- The project's own programs ---------------------------------------------------------------------------------

def test_estimator_program_reports_exactly_its_migration_rows():
  report = scan_paths(program_paths(ESTIMATOR_PROGRAM))
  expected = sorted((ESTIMATOR_PROGRAM[role], line_of(os.path.join(REPO_ROOT, ESTIMATOR_PROGRAM[role]), snippet,
                                                       *below), rule, severity)
                     for role, snippet, rule, severity, *below in ESTIMATOR_EXPECTED)
  assert as_tuples(report, REPO_ROOT) == expected
  assert report.bad_inputs == [] and report.exit_status() == 1


def migration_step_rows():
  """{rule: (Estimator cell, TPUEstimator cell)} of MIGRATION.md's table of the TPU rules."""
  rows = {}
  with open(MIGRATION_DOC) as f:
    for line in f:
      cells = [cell.strip() for cell in line.split('|')]
      if len(cells) > 4 and cells[1].isdigit():
        rows[int(cells[1])] = (cells[3], cells[4])
  return rows


def rows_the_port_changes(rows):
  """Rules where the Estimator program has something the TPUEstimator one does differently: not '—' (nothing
  there), not 'As for Estimator' or 'The same', and no '..., unchanged' or 'needs no change' (the same code)."""
  return set(rule for rule, (estimator, tpu) in rows.items()
             if estimator != '—' and not tpu.startswith(('As for Estimator', 'The same'))
             and 'unchanged' not in tpu and 'needs no change' not in tpu)


def doc_name(path):
  """How MIGRATION.md names a file: without the package folder (`estimator/model_fn.py`, `mnist.py`)."""
  return path[len('estimator_tpu/'):] if path.startswith('estimator_tpu/') else path


def test_the_estimator_program_reports_exactly_the_rows_migration_md_lists():
  report = scan_paths(program_paths(ESTIMATOR_PROGRAM))
  rows = migration_step_rows()
  assert rows_the_port_changes(rows) == {1, 2, 3, 4, 5, 6, 7, 8, 9, 14}  # the doc parses
  reported = set(f.rule for f in report.findings)
  assert reported == rows_the_port_changes(rows)
  # A rule that names files of the Estimator program is reported in one of them (rule 14 names two).
  by_file = collections.defaultdict(set)
  for finding in report.findings:
    by_file[doc_name(os.path.relpath(finding.path, REPO_ROOT))].add(finding.rule)
  for row, (estimator, _) in rows.items():
    named = [doc_name(path) for path in ESTIMATOR_PROGRAM.values() if doc_name(path) in estimator]
    assert not named or any(row in by_file.get(name, ()) for name in named), (row, named)
  assert sorted(by_file) == ['distributed/training.py', 'estimator/input_fn.py', 'estimator/model_fn.py',
                             'mnist.py']


def test_tpu_program_reports_nothing():
  report = scan_paths(program_paths(TPU_PROGRAM))
  assert report.findings == [] and report.bad_inputs == []
  assert report.exit_status() == 0
  assert len(report.files) > len(TPU_PROGRAM)  # the folders were searched


def test_mnist_py_alone_names_the_files_it_could_not_follow():
  """Scanned without its library, mnist.py's model_fn and input_fns are named with the files to add, and what is
  in mnist.py itself is still reported."""
  report = scan_paths([os.path.join(REPO_ROOT, 'mnist.py')])
  unknown = [(f.line, f.rule, f.message) for f in report.findings if f.severity == UNKNOWN]
  mnist_py = os.path.join(REPO_ROOT, 'mnist.py')
  assert [(line, rule) for line, rule, _ in unknown] == [
      (line_of(mnist_py, 'return tf.estimator.Estimator('), 5),
      (line_of(mnist_py, 'estimator.train(input_fn, max_steps'), 3),
      (line_of(mnist_py, 'return estimator.evaluate(input_fn'), 3),
      (line_of(mnist_py, 'return estimator.predict(input_fn'), 3)]
  assert ('`model_fn_lib.model_fn_builder` comes from estimator_tpu.estimator.model_fn '
          '(estimator_tpu/estimator/model_fn.py), which is not among the scanned files') in unknown[0][2]
  assert all('estimator_tpu/estimator/input_fn.py' in message for _, _, message in unknown[1:])
  assert sorted(set(f.rule for f in report.findings)) == [1, 2, 3, 5, 8, 9]


# --- Fixtures: the classic legacy shapes ------------------------------------------------------------------------

@pytest.mark.parametrize('fixture', port_expectations.names())
def test_fixture_findings_are_exactly_its_expectations(fixture):
  """Every finding on the fixture's folder, by file, line, code and severity, as its expected.json lists them;
  each code of the registry, with its rule, and every message says what to change."""
  folder = os.path.join(FIXTURES, fixture)
  report = scan_paths([folder])
  found = sorted((os.path.relpath(f.path, folder), f.line, f.code, f.severity) for f in report.findings)
  expected = port_expectations.findings(fixture)
  assert found == expected
  assert report.bad_inputs == []
  assert all(f.rule == codes.rule_of(f.code) for f in report.findings)
  assert all(' -> ' in f.message and '\n' not in f.message for f in report.findings), report.findings
  assert report.exit_status() == (1 if any(severity == REQUIRED for _, _, _, severity in expected) else 0)


def test_bert_optimizer_outside_the_scanned_files_cannot_be_told():
  report = scan_paths([os.path.join(FIXTURES, 'bert_like', 'run_classifier.py')])
  unknown = [f for f in report.findings if f.rule == 6]
  assert [(f.line, f.severity) for f in unknown] == [(78, UNKNOWN)]
  assert 'optimization.create_optimizer(...)' in unknown[0].message
  assert report.count(REQUIRED) == 0


def test_messages_say_what_is_there_and_what_to_change():
  report = scan_paths([os.path.join(FIXTURES, 'custom_estimator')])
  for finding in report.findings:
    assert ' -> ' in finding.message, finding  # what to change, cannot-tell findings included
  # train_input_fn batches with its batch_size argument, which the lambda at line 70 hands it: the lambda's change
  # (it takes params and hands params['batch_size'] on) is the one edit, and line 22 stays as it is
  assert not [f for f in report.findings if f.line == 22 and f.rule == 3]
  messages = [f.message for f in report.findings if f.line == 70 and f.rule == 3]
  assert messages == ["the lambda given as input_fn takes no `params` -> add a `params` argument and batch with "
                      "params['batch_size']: TPUEstimator refuses an input_fn without it."]


# --- Resolving names --------------------------------------------------------------------------------------------

def write(tmp_path, name, source):
  path = tmp_path / name
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text(textwrap.dedent(source))
  return str(path)


def rows_and_lines(report):
  return sorted((os.path.basename(f.path), f.line, f.rule, f.severity) for f in report.findings)


LEGACY_MODEL_FN = '''
def model_fn(features, labels, mode):
  loss = tf.reduce_mean(features)
  return Spec(mode, loss=loss)
'''


@pytest.mark.parametrize('imports,estimator,spec', [
    ('import tensorflow as tf', 'tf.estimator.Estimator', 'tf.estimator.EstimatorSpec'),
    ('import tensorflow as tf', 'tf.compat.v1.estimator.Estimator', 'tf.compat.v1.estimator.EstimatorSpec'),
    ('import tensorflow.compat.v1 as tf', 'tf.estimator.Estimator', 'tf.estimator.EstimatorSpec'),
    ('import tensorflow as tf\nfrom tensorflow import estimator as est', 'est.Estimator', 'est.EstimatorSpec'),
    ('import tensorflow as tf\nfrom tensorflow.estimator import Estimator, EstimatorSpec', 'Estimator',
     'EstimatorSpec'),
    ('import tensorflow as tf\nimport tensorflow_estimator as tfe', 'tfe.estimator.Estimator',
     'tfe.estimator.EstimatorSpec'),
])
def test_import_aliases_resolve_to_the_same_api(tmp_path, imports, estimator, spec):
  source = imports + '\nSpec = %s\n' % spec + LEGACY_MODEL_FN + '\nmodel = %s(model_fn=model_fn)\n' % estimator
  report = scan_paths([write(tmp_path, 'legacy.py', source)])
  rows = sorted(f.rule for f in report.findings if f.severity == REQUIRED)
  assert rows == [1, 3, 5], report.findings


def test_model_fn_found_through_partial_a_builder_a_parameter_and_another_module(tmp_path):
  write(tmp_path, 'pkg/__init__.py', '')
  write(tmp_path, 'pkg/models.py', '''
      import functools
      import tensorflow as tf

      def _model_fn(features, labels, mode, hidden):
        tf.summary.scalar('x', tf.reduce_mean(features))
        return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=tf.reduce_mean(features))

      def builder(hidden):
        return functools.partial(_model_fn, hidden=hidden)
      ''')
  write(tmp_path, 'pkg/main.py', '''
      import tensorflow as tf
      from pkg import models

      def build(model_fn, config):
        return tf.estimator.tpu.TPUEstimator(model_fn=model_fn, config=config, train_batch_size=8,
                                             eval_batch_size=8, predict_batch_size=8)

      def run(config):
        return build(models.builder(3), config)
      ''')
  report = scan_paths([str(tmp_path / 'pkg')])
  assert rows_and_lines(report) == [('models.py', 5, 3, REQUIRED),  # the partial leaves no params
                                    ('models.py', 6, 7, REQUIRED)]


def test_a_model_fn_that_cannot_be_found_is_named_not_guessed(tmp_path):
  path = write(tmp_path, 'main.py', '''
      import tensorflow as tf
      from somewhere_else import make_model_fn

      estimator = tf.estimator.tpu.TPUEstimator(model_fn=make_model_fn(), config=None, train_batch_size=8)
      ''')
  report = scan_paths([path])
  notes = [f for f in report.findings if f.severity == UNKNOWN]
  assert len(notes) == 1 and 'somewhere_else' in notes[0].message and notes[0].rule == 5


def test_correct_tpu_estimator_code_has_nothing_required(tmp_path):
  path = write(tmp_path, 'good.py', '''
      import tensorflow.compat.v1 as tf

      def model_fn(features, labels, mode, params):
        logits = tf.layers.dense(features['x'], 10)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        optimizer = tf.train.AdamOptimizer(1e-3)
        optimizer = tf.tpu.CrossShardOptimizer(optimizer) if params['use_tpu'] else optimizer
        if not params['use_tpu']:
          tf.summary.scalar('loss', loss)  # only off the TPU
        train_op = optimizer.minimize(loss, tf.train.get_global_step())
        return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

      def input_fn(params):
        batch = params['batch_size']
        dataset = tf.data.Dataset.range(100).map(lambda i: ({'x': tf.zeros([4])}, tf.cast(i % 10, tf.int32)))
        return dataset.repeat().batch(batch, drop_remainder=True)

      def predict_input_fn(params):
        return tf.data.Dataset.range(10).map(lambda i: {'x': tf.zeros([4])}).batch(params['batch_size'])

      def main(master):
        config = tf.estimator.tpu.RunConfig(
            master=master, model_dir='gs://bucket/model',
            tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop=100, num_shards=8))
        estimator = tf.estimator.tpu.TPUEstimator(model_fn=model_fn, config=config, train_batch_size=64,
                                                  eval_batch_size=64, predict_batch_size=64)
        estimator.train(input_fn, max_steps=1000)
        estimator.evaluate(input_fn, steps=10)
        return list(estimator.predict(predict_input_fn))
      ''')
  report = scan_paths([path])
  assert report.findings == [] and report.exit_status() == 0


def test_numpy_input_fn_is_named_as_what_to_replace(tmp_path):
  path = write(tmp_path, 'numpy_input.py', '''
      import tensorflow as tf

      def train(estimator, x, y):
        input_fn = tf.estimator.inputs.numpy_input_fn({'x': x}, y, batch_size=32, shuffle=True)
        estimator.train(input_fn, max_steps=10)
      ''')
  findings = scan_paths([path]).findings
  # At the maker, where the user writes input_fn(params) instead: no params and its own batch size (one change:
  # the input_fn(params) batches with params['batch_size']), and num_epochs left at 1, whose dequeue_up_to gives a
  # batch dimension of None (numpy_io.py).
  assert [(f.line, f.rule, f.severity) for f in findings] == [(5, 3, REQUIRED), (5, 4, REQUIRED)]
  assert all('numpy_input_fn' in f.message for f in findings)
  assert 'batches at `32`' in findings[0].message
  assert 'num_epochs=1 (its default)' in findings[1].message


STEP_FLAGS = '''
    import tensorflow as tf
    from absl import flags
    flags.DEFINE_integer('train_steps', 1000, 'Total steps.')
    flags.DEFINE_integer('eval_steps', None, 'Batches to evaluate; None: all.')
    FLAGS = flags.FLAGS

    def input_fn(params):
      return tf.data.Dataset.range(8).batch(params['batch_size'], drop_remainder=True)

    def run(fv, estimator):
      estimator.train(input_fn, max_steps=fv.train_steps)
      estimator.evaluate(input_fn, steps=fv.eval_steps)
      estimator.evaluate(input_fn, steps=FLAGS.eval_batches)
      estimator.evaluate(input_fn, steps=num_batches(fv))
    '''


def test_step_counts_read_from_flags_take_the_flags_defaults(tmp_path):
  write(tmp_path, 'steps.py', STEP_FLAGS)
  report = scan_paths([str(tmp_path / 'steps.py')])
  assert [(f.line, f.rule, f.severity) for f in report.findings] == [(13, 9, REQUIRED), (14, 9, UNKNOWN)]
  assert '(`fv.eval_steps` is the flag --eval_steps, which defaults to None: %s:5)' % (
      tmp_path / 'steps.py') in report.findings[0].message
  assert '`FLAGS.eval_batches` is only known at run time' in report.findings[1].message


def test_flags_defined_in_an_imported_module_are_read_but_not_checked(tmp_path):
  write(tmp_path, 'app_flags.py', '''
      from absl import flags
      flags.DEFINE_integer('eval_steps', None, 'Batches to evaluate.')
      flags.DEFINE_string('data_dir', '/tmp/data', 'A local default: advice, were this file scanned.')
      ''')
  path = write(tmp_path, 'main.py', '''
      import app_flags
      import tensorflow as tf
      from absl import flags
      FLAGS = flags.FLAGS

      def input_fn(params):
        return tf.data.Dataset.range(8).batch(params['batch_size'], drop_remainder=True)

      def run(estimator):
        estimator.evaluate(input_fn, steps=FLAGS.eval_steps)
      ''')
  report = scan_paths([path])
  assert [(os.path.basename(f.path), f.line, f.rule, f.severity) for f in report.findings] == [
      ('main.py', 11, 9, REQUIRED)]
  assert 'app_flags.py:3)' in report.findings[0].message


def test_in_memory_data_converted_a_few_lines_up_has_a_dtype(tmp_path):
  path = write(tmp_path, 'predict.py', '''
      import numpy as np
      import tensorflow as tf

      def predict(estimator, images, batch_size):
        pixels = images.reshape(-1, 784).astype(np.float32)
        raw = images.reshape(-1, 784)

        def input_fn(params):
          return tf.data.Dataset.from_tensor_slices({'x': pixels}).batch(params['batch_size'])

        def raw_input_fn(params):
          return tf.data.Dataset.from_tensor_slices({'x': raw}).batch(params['batch_size'])

        estimator.predict(input_fn)
        return estimator.predict(raw_input_fn)
      ''')
  report = scan_paths([path])
  assert [(f.line, f.rule, f.severity) for f in report.findings] == [(13, 15, UNKNOWN)]


# --- The command line -------------------------------------------------------------------------------------------

def run_cli(args):
  return run_main(port_main, args)


def test_text_output_is_one_line_per_finding_and_a_summary():
  status, out, err = run_cli([os.path.join(FIXTURES, 'contrib_tpu')])
  lines = out.splitlines()
  assert status == 1 and err == ''
  assert len(lines) == len(port_expectations.findings('contrib_tpu')) + 1
  assert re.match(r'.*mnist_contrib\.py:35: \[required\] rule 18 \(XLA ops\): '
                  r'`tf\.py_func` inside model_fn', lines[7])
  assert lines[-1] == '1 file(s) checked: 4 required, 18 advice, 0 cannot tell statically.'


def test_json_output_for_tools():
  status, out, _ = run_cli(['--format=json', os.path.join(FIXTURES, 'bert_like')])
  document = json.loads(out)
  assert status == 0
  assert document['summary'] == {'files': 2, 'required': 0, 'advice': 11, 'cannot_tell': 0, 'unreadable': 0,
                                 'exit_status': 0}
  first = document['findings'][0]
  assert sorted(first) == ['anchor', 'code', 'fix', 'line', 'message', 'name', 'path', 'rule', 'severity', 'title']
  assert (os.path.basename(first['path']), first['line'], first['rule']) == ('optimization.py', 15, 19)
  # The code says what kind of finding it is; the anchor, the node it is at (column: characters, 0-based).
  assert first['code'] == 'contrib-name' and first['fix'].startswith('tf.tpu.CrossShardOptimizer')
  with open(os.path.join(FIXTURES, 'bert_like', 'optimization.py')) as f:
    line = f.read().splitlines()[14]
  assert first['anchor'] == {'line': 15, 'column': line.index('tf.contrib.tpu.CrossShardOptimizer'),
                             'kind': 'Attribute', 'name': 'tensorflow.contrib.tpu.CrossShardOptimizer'}
  assert set(f['severity'] for f in document['findings']) == {'advice'}
  assert all(f['rule'] == codes.rule_of(f['code']) for f in document['findings'])


def test_a_missing_path_is_one_error_line_and_the_rest_is_still_checked(tmp_path):
  missing = str(tmp_path / 'nope.py')
  status, out, err = run_cli([missing, os.path.join(FIXTURES, 'keras_in_model_fn')])
  assert status == 2
  assert err == 'error: %s: no such file or folder. Fix: give the path of a Python file or a folder.\n' % missing
  assert 'trainer.py:25: [required]' in out and out.splitlines()[-1].endswith('1 unreadable.')


def test_an_unparsable_file_is_named_and_the_others_are_checked(tmp_path):
  write(tmp_path, 'broken.py', 'def broken(:\n  pass\n')
  write(tmp_path, 'ok.py', 'import tensorflow as tf\nest = tf.estimator.Estimator(model_fn=None)\n')
  status, out, err = run_cli([str(tmp_path)])
  assert status == 2  # bad input wins over the required finding in ok.py
  assert err.startswith('error: %s: does not parse as Python %d.%d (line 1' % (
      (os.path.join(str(tmp_path), 'broken.py'),) + sys.version_info[:2]))
  assert 'Fix: fix the syntax' in err
  assert 'ok.py:2: [required] rule 1' in out


PYTHON2 = """import tensorflow as tf

def model_fn(features, labels, mode):
  print "building", mode
  logits = tf.layers.dense(features['x'], 2)
  loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
  train_op = tf.train.AdamOptimizer().minimize(loss, tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

try:
  est = tf.estimator.Estimator(model_fn)
except ValueError, e:
  print e
"""


def test_python_2_source_is_read_at_its_own_lines(tmp_path):
  """A Python 2 program (print statements, `except X, e`) is read through lib2to3, line for line: its findings
  name the lines as written. --write refuses it in one line (tests/porting/rewrite/test_write_cli.py)."""
  write(tmp_path, 'legacy2.py', PYTHON2)
  status, out, err = run_cli([str(tmp_path / 'legacy2.py')])
  assert (status, err) == (1, '')
  assert 'legacy2.py:3: [required] rule 3 (params): model_fn() takes no `params`' in out
  assert 'legacy2.py:7: [required] rule 6 ' in out
  assert 'legacy2.py:11: [required] rule 1 ' in out


PYTHON2_TABS = ("import tensorflow as tf\n"
                "\n"
                "def model_fn(features, labels, mode):\n"
                "        logits = tf.layers.dense(features['x'], 2)\n"
                "\tloss = tf.losses.sparse_softmax_cross_entropy(labels, logits)\n"
                "        if mode == tf.estimator.ModeKeys.TRAIN:\n"
                "\t\tprint 'training'\n"
                "        train_op = tf.train.AdamOptimizer().minimize(loss, tf.train.get_global_step())\n"
                "\treturn tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)\n"
                "\n"
                "est = tf.estimator.Estimator(model_fn)\n")


def test_python_2_source_that_mixes_tabs_and_spaces_is_read_as_python_2_indents_it(tmp_path):
  """Python 2 counts a tab in the indentation as a move to the next multiple of 8 columns, so a body indented by a
  tab on one line and 8 spaces on the next runs there (and raises TabError in Python 3): read at its own lines."""
  with pytest.raises(SyntaxError):
    compile(PYTHON2_TABS.replace("print 'training'", "pass"), 'tabs.py', 'exec')
  write(tmp_path, 'tabs2.py', PYTHON2_TABS)
  status, out, err = run_cli([str(tmp_path / 'tabs2.py')])
  assert (status, err) == (1, '')
  assert 'tabs2.py:3: [required] rule 3 (params): model_fn() takes no `params`' in out
  assert 'tabs2.py:8: [required] rule 6 ' in out
  assert 'tabs2.py:11: [required] rule 1 ' in out


def test_python_2_source_whose_conversion_would_add_an_import_is_read_at_its_own_lines(tmp_path):
  """`reload(sys)` (the Python 2 idiom before sys.setdefaultencoding) and `reduce`: lib2to3's fixers for them add an
  import line, which would move every line after it; they are not needed to read the program."""
  text = ('import sys\nreload(sys)\n' + 'total = reduce(lambda a, b: a + b, [1, 2])\n' +
          PYTHON2.replace('import tensorflow as tf\n', 'import tensorflow as tf\nprint intern("x")\n'))
  write(tmp_path, 'reload2.py', text)
  status, out, err = run_cli([str(tmp_path / 'reload2.py')])
  assert (status, err) == (1, '')
  assert 'reload2.py:7: [required] rule 3 (params): model_fn() takes no `params`' in out
  assert 'reload2.py:11: [required] rule 6 ' in out
  assert 'reload2.py:15: [required] rule 1 ' in out


def test_exit_status_zero_when_nothing_is_required():
  status, _, _ = run_cli([os.path.join(FIXTURES, 'bert_like')])
  assert status == 0


def test_python_dash_m_runs_without_tensorflow_installed_or_imported(tmp_path):
  path = write(tmp_path, 'legacy.py', 'import tensorflow as tf\nest = tf.estimator.Estimator(model_fn=None)\n')
  # -S -I style isolation is not needed: the tool must simply never import what it reads.
  result = subprocess.run([sys.executable, '-c', 'import sys; from estimator_tpu.porting.cli import main; '
                           'status = main([%r]); assert "tensorflow" not in sys.modules; sys.exit(status)' % path],
                          cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
  assert result.returncode == 1, result.stderr
  assert 'legacy.py:2: [required] rule 1' in result.stdout


def test_bad_arguments_exit_2():
  with pytest.raises(SystemExit) as exit_info:
    run_cli(['--format=xml', 'x.py'])
  assert exit_info.value.code == 2


# --- Robustness on code never seen ------------------------------------------------------------------------------

ODD_CODE = '''
import functools, tensorflow as tf
from . import sibling
from .. import cousin
from tensorflow import *

def recursive_builder():
  return recursive_builder()

model_fn = recursive_builder()
loop_a = lambda: loop_b
loop_b = loop_a

class Trainer(object):
  input_fn = staticmethod(lambda params: None)

  @property
  def estimator(self):
    return tf.estimator.Estimator(model_fn=self.model_fn, params=dict(**{}))

  def model_fn(self, features, labels, mode, params, *args, **kwargs):
    opt = self.make_optimizer()
    return opt.minimize(*args)

  def run(self, **kwargs):
    self.estimator.train(self.input_fn, **kwargs)
    self.estimator.evaluate(input_fn=lambda *a: a[0])
    tf.estimator.Estimator(model_fn=recursive_builder(), config=tf.estimator.RunConfig(**kwargs))
    tf.estimator.Estimator(*[model_fn])
    return [x async for x in y] if False else None

async def async_input_fn(params):
  global something
  return (await something).batch()

def decorated(fn):
  return functools.wraps(fn)(lambda *a, **k: fn(*a, **k))

@decorated
def wrapped_model_fn(features, labels, mode, params=None):
  nonlocal_free = [tf.where(c) for c in features]
  return tf.estimator.EstimatorSpec(mode)[0][1:2]

est = tf.estimator.Estimator(model_fn=wrapped_model_fn)
est.train(input_fn=functools.partial(functools.partial(async_input_fn)), steps=None, max_steps=None)
x: int = 3
del x
'''


def test_odd_code_never_crashes_the_scan(tmp_path):
  write(tmp_path, 'pkg/__init__.py', '')
  write(tmp_path, 'pkg/sub/__init__.py', '')
  path = write(tmp_path, 'pkg/sub/odd.py', ODD_CODE)
  report = scan_paths([str(tmp_path)])
  assert report.bad_inputs == []
  assert not [f for f in report.findings if 'could not analyse' in f.message]
  lines = set((f.line, f.rule) for f in report.findings if f.path == path)
  assert (45, 9) in lines  # train() with neither steps nor max_steps
  assert (42, 5) in lines  # EstimatorSpec in a decorated model_fn
  assert (23, 6) in lines  # self.model_fn resolved to the method: its optimizer cannot be told


def test_tensorflow_estimators_own_source_scans_without_a_crash():
  """The largest body of Estimator code at hand: every construct in it must be handled or named."""
  import tensorflow_estimator  # noqa: F401 -- only to find the installed package's folder
  folder = os.path.dirname(tensorflow_estimator.__file__)
  report = scan_paths([os.path.join(folder, 'python', 'estimator', sub) for sub in ('tpu', 'canned', 'export')])
  assert report.bad_inputs == [] and len(report.files) > 40
  assert not [f for f in report.findings if 'could not analyse' in f.message]


# --- One construct at a time ------------------------------------------------------------------------------------

TPU_ESTIMATOR = ('tf.estimator.tpu.TPUEstimator(model_fn, config=config, train_batch_size=8, eval_batch_size=8, '
                 'predict_batch_size=8)')
CASES = {
    'estimator_subclass': ('''
        import tensorflow as tf

        class MyEstimator(tf.estimator.Estimator):
          def __init__(self, config=None):
            super(MyEstimator, self).__init__(model_fn=self._model_fn, config=config)

          def _model_fn(self, features, labels, mode, params):
            return tf.estimator.EstimatorSpec(mode, loss=tf.reduce_mean(features))
        ''', [(6, 1, REQUIRED), (9, 5, REQUIRED)]),  # rule 1 at the base's constructor call (super().__init__)
    'premade_and_keras_estimators': ('''
        import tensorflow as tf
        a = tf.estimator.DNNClassifier(hidden_units=[10], feature_columns=[])
        b = tf.contrib.learn.LinearRegressor(feature_columns=[])
        c = tf.keras.estimator.model_to_estimator(keras_model=None)
        ''', [(3, 1, REQUIRED), (4, 1, REQUIRED), (4, 19, ADVICE), (5, 1, REQUIRED)]),
    'train_and_evaluate_specs': ('''
        import tensorflow as tf
        def run(estimator, train_input_fn, eval_input_fn):
          train_spec = tf.estimator.TrainSpec(train_input_fn)
          eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=None)
          tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
        ''', [(4, 3, UNKNOWN), (4, 9, REQUIRED), (5, 3, UNKNOWN), (5, 9, REQUIRED),
              (6, 8, REQUIRED)]),  # no cluster: no rule 14, but evaluation from inside training (rule 8)
    'run_config_with_master_and_cluster': ('''
        import tensorflow as tf
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=['my-tpu'])
        config = tf.estimator.tpu.RunConfig(master='grpc://10.0.0.2:8470', cluster=resolver,
                                            tpu_config=tf.estimator.tpu.TPUConfig(num_shards=8))
        ''', [(4, 2, REQUIRED), (4, 8, ADVICE)]),
    'model_fn_ops': ('''
        import tensorflow as tf
        def model_fn(features, labels, mode, params):
          x = tf.cast(features['x'], tf.float64)
          words = tf.strings.split(features['text'])
          kept = tf.where(x > 0, x, tf.zeros_like(x))  # three arguments: static
          ids, _ = tf.unique(labels)
          y = tf.numpy_function(lambda v: v, [x], tf.float32)
          return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=tf.reduce_sum(kept),
                                                   training_hooks=[tf.train.StopAtStepHook(10)])
        estimator = %s
        ''' % TPU_ESTIMATOR, [(4, 15, REQUIRED), (5, 15, REQUIRED), (7, 4, REQUIRED),
                              (8, 18, REQUIRED), (9, 8, ADVICE)]),
    'map_and_batch_and_queues': ('''
        import tensorflow as tf
        def input_fn(params):
          d = tf.data.TFRecordDataset('data/train.tfrecord')
          d = d.apply(tf.data.experimental.map_and_batch(lambda r: r, params['batch_size']))
          images, labels = tf.train.shuffle_batch([d], batch_size=32, capacity=100, min_after_dequeue=10)
          return d
        def main(estimator):
          estimator.train(input_fn, steps=10)
        ''', [(4, 17, ADVICE), (5, 4, REQUIRED), (6, 3, REQUIRED),  # shuffle_batch's 32 is not params'
              (6, 4, ADVICE)]),
    'flags_in_functions': ('''
        import tensorflow as tf
        from absl import flags
        FLAGS = flags.FLAGS
        def model_fn(features, labels, mode, params):
          return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=tf.reduce_sum(features) * FLAGS.scale)
        def input_fn(params):
          size = FLAGS.batch_size
          return tf.data.Dataset.range(FLAGS.limit).batch(size, drop_remainder=True)
        def main(config):
          estimator = %s
          estimator.train(input_fn, max_steps=FLAGS.steps)
        ''' % TPU_ESTIMATOR, [(6, 3, ADVICE), (9, 3, ADVICE), (9, 3, REQUIRED),  # line 8: the batch size
                              (12, 9, UNKNOWN)]),  # max_steps=FLAGS.steps: no DEFINE_integer('steps') to read
    'classifier_that_is_not_an_estimator': ('''
        def fit_and_score(classifier, x_train, y_train, x_test):
          classifier.fit(x_train, y_train)
          return classifier.predict(x_test), classifier.evaluate(x_test)
        ''', []),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_one_construct_at_a_time(tmp_path, case):
  source, expected = CASES[case]
  report = scan_paths([write(tmp_path, case + '.py', source)])
  assert sorted((f.line, f.rule, f.severity) for f in report.findings) == sorted(expected), report.findings


FLAGS_PARAMS = '''
    import tensorflow as tf
    from absl import flags
    flags.DEFINE_integer('%s', 32, 'Examples per batch.')
    flags.DEFINE_float('learning_rate', 0.1, 'Step size.')
    FLAGS = flags.FLAGS

    def input_fn(params):
      return tf.data.Dataset.range(64).batch(params['batch_size'], drop_remainder=True)

    def run(model_fn):
      params = FLAGS.flag_values_dict()
      estimator = tf.estimator.tpu.TPUEstimator(model_fn, params=params, train_batch_size=32)
      estimator.train(input_fn, max_steps=10)
    '''


def test_params_of_every_flag_hold_the_reserved_batch_size_when_a_flag_is_named_so(tmp_path):
  # FLAGS.flag_values_dict() is a dict of every flag defined: with --batch_size, TPUEstimator's ValueError.
  findings = [f for f in scan_paths([write(tmp_path, 'flags_params.py', FLAGS_PARAMS % 'batch_size')]).findings
              if f.rule == 3]
  assert [(f.line, f.code) for f in findings] == [(12, 'params-reserved-key')]
  assert 'FLAGS.flag_values_dict' in findings[0].message and "params.pop('batch_size')" in findings[0].message
  renamed = scan_paths([write(tmp_path, 'renamed.py', FLAGS_PARAMS % 'global_batch_size')]).findings
  assert [f for f in renamed if f.rule == 3] == []


def test_params_of_every_argparse_option_hold_the_reserved_batch_size(tmp_path):
  path = write(tmp_path, 'namespace_dict.py', '''
      import argparse
      import tensorflow as tf

      def main(model_fn, input_fn):
        parser = argparse.ArgumentParser()
        parser.add_argument('--batch-size', type=int, default=32)
        args = parser.parse_args()
        estimator = tf.estimator.tpu.TPUEstimator(model_fn, params=vars(args), train_batch_size=32)
        estimator.train(input_fn, max_steps=10)
      ''')
  findings = [f for f in scan_paths([path]).findings if f.code == 'params-reserved-key']
  assert [f.line for f in findings] == [9]  # --batch-size is args.batch_size, a key of vars(args)


def test_args_dict_handed_through_a_function_holds_the_reserved_batch_size(tmp_path):
  # params = init_params(args.__dict__), a function that adds to the dict and returns it (held-out-4's GloVe).
  path = write(tmp_path, 'namespace_attr.py', '''
      import argparse
      import tensorflow as tf

      def init_params(params):
        params['job_dir'] = params['job_dir'] + '_1'
        return params

      def main(model_fn, input_fn):
        parser = argparse.ArgumentParser()
        parser.add_argument('--batch-size', type=int, default=32)
        parser.add_argument('--job-dir', default='/tmp/job')
        params = init_params(parser.parse_args().__dict__)
        estimator = tf.estimator.Estimator(model_fn, params=params)
        estimator.train(input_fn, max_steps=10)
      ''')
  findings = [f for f in scan_paths([path]).findings if f.code == 'params-reserved-key']
  assert [f.line for f in findings] == [13]  # the __dict__ of the parsed options


def test_optimize_loss_given_an_optimizer_name_by_the_builder_s_caller_builds_a_plain_optimizer(tmp_path):
  path = write(tmp_path, 'builder_optimizer.py', '''
      import tensorflow as tf

      def get_model_fn(optimizer='SGD'):
        def model_fn(features, labels, mode, params):
          loss = tf.reduce_mean(tf.layers.dense(features, 1))
          train_op = tf.contrib.layers.optimize_loss(loss, tf.train.get_global_step(), 0.1, optimizer=optimizer,
                                                     summaries=[])
          return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)
        return model_fn

      estimator = tf.estimator.tpu.TPUEstimator(get_model_fn(optimizer='Adam'), train_batch_size=8)
      ''')
  rule_6 = [(f.line, f.code, f.severity) for f in scan_paths([path]).findings if f.rule == 6]
  assert rule_6 == [(7, 'optimizer-not-cross-shard', REQUIRED)]  # 'Adam': optimize_loss builds it, unwrapped


def test_optimize_loss_given_an_optimizer_class_builds_a_plain_optimizer(tmp_path):
  """optimize_loss(optimizer=tf.train.AdamOptimizer): the class, uncalled; optimize_loss instantiates it
  (optimizers.py: a subclass of Optimizer is called with the learning rate), with no CrossShardOptimizer."""
  path = write(tmp_path, 'optimizer_class.py', '''
      import tensorflow as tf

      def model_fn(features, labels, mode, params):
        loss = tf.reduce_mean(tf.layers.dense(features, 1))
        train_op = tf.contrib.layers.optimize_loss(loss=loss, global_step=tf.train.get_global_step(),
                                                   optimizer=tf.train.AdamOptimizer, learning_rate=0.1,
                                                   summaries=[])
        return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

      estimator = tf.estimator.tpu.TPUEstimator(model_fn, train_batch_size=8)
      ''')
  rule_6 = [(f.line, f.code, f.severity) for f in scan_paths([path]).findings if f.rule == 6]
  assert rule_6 == [(6, 'optimizer-not-cross-shard', REQUIRED)]


def test_contrib_learn_model_fn_ops_is_a_spec_tpu_evaluation_refuses(tmp_path):
  path = write(tmp_path, 'model_fn_ops.py', '''
      import tensorflow as tf

      def model_fn(features, labels, mode, params):
        logits = tf.layers.dense(features, 2)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
        return tf.contrib.learn.ModelFnOps(mode, loss=loss, eval_metric_ops={'accuracy': accuracy})

      estimator = tf.estimator.tpu.TPUEstimator(model_fn, train_batch_size=8, eval_batch_size=8)
      ''')
  codes = [(f.line, f.code) for f in scan_paths([path]).findings if f.rule == 5]
  assert codes == [(8, 'estimator-spec'), (8, 'eval-metric-ops')]


def test_a_train_spec_s_max_steps_from_an_option_without_default_is_none(tmp_path):
  source = '''
      import argparse
      import tensorflow as tf

      def run(args, estimator, input_fn):
        train_spec = tf.estimator.TrainSpec(input_fn, max_steps=args['train_steps'])
        eval_spec = tf.estimator.EvalSpec(input_fn, steps=10)
        tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

      parser = argparse.ArgumentParser()
      parser.add_argument('--train_steps', type=int%s)
      run(vars(parser.parse_args()), None, None)
      '''
  def rule_9(required_flag):
    path = write(tmp_path, 'spec_steps.py', source % (', required=True' if required_flag else ''))
    return [(f.line, f.code) for f in scan_paths([path]).findings if f.rule == 9]
  assert rule_9(False) == [(6, 'train-spec-without-max-steps')]  # args['train_steps'] is None unless given
  assert rule_9(True) == []  # required=True: always given


def test_an_experiment_s_steps_handed_on_through_kwargs_are_what_its_maker_is_called_with(tmp_path):
  """Cloud ML Engine's template: generate_experiment_fn(**experiment_args) returns a function that builds the
  Experiment with **experiment_args; the steps are the keywords of the maker's call, here options without a default
  (None: training unbounded, evaluation to the end of the input), found at the Experiment."""
  source = '''
      import argparse
      import tensorflow as tf
      from tensorflow.contrib.learn import learn_runner

      def generate_experiment_fn(**experiment_args):
        def _experiment_fn(run_config, hparams):
          estimator = tf.contrib.learn.Estimator(model_fn=None, config=run_config)
          return tf.contrib.learn.Experiment(estimator, train_input_fn=None, eval_input_fn=None,
                                             **experiment_args)
        return _experiment_fn

      parser = argparse.ArgumentParser()
      parser.add_argument('--train-steps', type=int%s)
      parser.add_argument('--eval-steps', type=int, default=%s)
      args = parser.parse_args()
      learn_runner.run(generate_experiment_fn(min_eval_frequency=1, train_steps=args.train_steps,
                                              eval_steps=args.eval_steps),
                       run_config=tf.contrib.learn.RunConfig())
      '''
  def rule_9(train_default, eval_default):
    path = write(tmp_path, 'experiment_kwargs.py', source % (train_default, eval_default))
    return [(f.line, f.code) for f in scan_paths([path]).findings if f.rule == 9]
  assert rule_9('', 'None') == [(9, 'experiment-without-train-steps')]  # one change per call, both counts
  assert rule_9(', default=1000', '100') == []
  assert rule_9(', required=True', 'None') == [(9, 'experiment-eval-steps-none')]
  without = write(tmp_path, 'experiment_unseen.py', (source % ('', 'None')).replace(
      'generate_experiment_fn(min_eval_frequency=1,', 'generate_experiment_fn(**extra, min_eval_frequency=1,'))
  assert [f for f in scan_paths([without]).findings if f.rule == 9] == []  # the maker's own call hides its keywords


def test_a_model_fn_parameter_wrapped_only_in_a_branch_is_still_the_caller_s_model_fn(tmp_path):
  """`if multi_gpu: model_fn = replicate_model_fn(model_fn)` (TF's official resnet loop): the estimator gets the
  caller's model_fn or the wrapped one, both the same function, whose spec and optimizer are checked (the read
  inside the wrapping call is the parameter too, not the assignment it is part of)."""
  path = write(tmp_path, 'wrapped_loop.py', '''
      import tensorflow as tf

      def model_fn(features, labels, mode, params):
        logits = tf.layers.dense(features, 2)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.train.AdamOptimizer().minimize(loss, global_step=tf.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

      def main(flags, model_function, input_fn):
        if flags.multi_gpu:
          model_function = tf.contrib.estimator.replicate_model_fn(model_function)
        estimator = tf.estimator.Estimator(model_fn=model_function, config=tf.estimator.RunConfig())
        estimator.train(input_fn, max_steps=10)
        estimator.evaluate(input_fn, steps=10)

      main(None, model_fn, None)
      ''')
  findings = scan_paths([path]).findings
  assert [(f.line, f.rule) for f in findings if f.rule in (5, 6) and f.severity == 'required'] == [(7, 6), (8, 5)]
  assert not [f for f in findings if f.severity == 'cannot tell statically' and f.rule == 5]


def test_a_model_instance_called_in_model_fn_runs_its_class_s_call_method(tmp_path):
  """`model = model_class(...)` then `model(features, training)` (official/resnet's pattern, here with the class
  handed in by the caller and __call__ inherited from a base): what __call__ builds is inside model_fn."""
  path = write(tmp_path, 'model_class.py', '''
      import tensorflow as tf

      class Model(object):
        def __init__(self, units):
          self.units = units

        def __call__(self, inputs, training):
          tf.summary.histogram('inputs', inputs)
          return tf.layers.dense(inputs, self.units)

      class SmallModel(Model):
        pass

      def model_fn(features, labels, mode, params, model_class):
        model = model_class(2)
        logits = model(features, mode == tf.estimator.ModeKeys.TRAIN)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss)

      def small_model_fn(features, labels, mode, params):
        return model_fn(features, labels, mode, params, SmallModel)

      estimator = tf.estimator.tpu.TPUEstimator(small_model_fn, config=tf.estimator.tpu.RunConfig(),
                                                train_batch_size=8, eval_batch_size=8)
      estimator.evaluate(lambda params: None, steps=1)
      ''')
  assert [(f.line, f.rule) for f in scan_paths([path]).findings if f.rule == 7] == [(9, 7)]


@pytest.mark.parametrize('on_tpu, off_tpu', [
    ('tpu_name is not None', 'tpu_name is None'),
    ("params['tpu_name'] != ''", "params['tpu_name'] == ''"),
    ("device == 'tpu'", "device != 'tpu'")])
def test_a_comparison_naming_the_tpu_chooses_the_program_s_own_cpu_branch(tmp_path, on_tpu, off_tpu):
  """An already-ported program that keeps a plain Estimator, RunConfig and EstimatorSpec where no TPU is named
  (`if tpu_name is not None: TPUEstimator ... else: Estimator ...`, google-research's task_adaptation) needs no
  change: the comparison tells its CPU branch, both ways round; a comparison that names no TPU tells nothing."""
  source = '''
      import tensorflow as tf

      def model_fn(features, labels, mode, params):
        tpu_name, device = params['tpu_name'], params['device']
        loss = tf.reduce_mean(tf.layers.dense(features, 1))
        if %s:
          return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss)
        else:
          return tf.estimator.EstimatorSpec(mode, loss=loss)

      def build(tpu_name, device, params):
        if %s:
          return tf.estimator.Estimator(model_fn, params=params, config=tf.estimator.RunConfig())
        else:
            return tf.estimator.tpu.TPUEstimator(model_fn, params=params, train_batch_size=8, eval_batch_size=8,
                                               config=tf.estimator.tpu.RunConfig())

      FLAGS = tf.flags.FLAGS
      build(FLAGS.tpu_name, FLAGS.device, {}).evaluate(lambda params: None, steps=1)
      '''
  path = write(tmp_path, 'tpu_named.py', source % (on_tpu, off_tpu))
  assert [f for f in scan_paths([path]).findings if f.severity == 'required'] == []
  unclear = write(tmp_path, 'tpu_unnamed.py', source % ('loss is not None', 'device is None'))
  assert sorted((f.line, f.rule) for f in scan_paths([unclear]).findings if f.severity == 'required' and
                f.rule in (1, 5)) == [(10, 5), (14, 1)]


def test_contrib_learn_s_generator_input_fn_is_a_queue_maker_and_a_spec_s_keywords_may_come_in_a_dict(tmp_path):
  """generator_input_fn (contrib.learn's learn_io) makes an input_fn() without params batching at its own size, as
  numpy_input_fn does: one change at the call. `EstimatorSpec(**specs)`, specs a dict(...) with eval_metric_ops
  in the evaluation branch: the spec's two changes, and the train_op the dict holds is the one checked."""
  path = write(tmp_path, 'generator_specs.py', '''
      import tensorflow as tf
      from tensorflow.contrib.learn.python.learn.learn_io.generator_io import generator_input_fn

      def model_fn(features, labels, mode, params):
        logits = tf.layers.dense(features['x'], 2)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        if mode == tf.estimator.ModeKeys.TRAIN:
          train_op = tf.train.AdamOptimizer().minimize(loss, global_step=tf.train.get_global_step())
          specs = dict(mode=mode, loss=loss, train_op=train_op)
        else:
          specs = dict(mode=mode, loss=loss,
                       eval_metric_ops={'acc': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})
        return tf.estimator.EstimatorSpec(**specs)

      def examples():
        for i in range(100):
          yield {'x': [float(i)], 'y': i % 2}

      estimator = tf.estimator.Estimator(model_fn)
      estimator.train(generator_input_fn(examples, target_key='y', batch_size=16, num_epochs=None), max_steps=10)
      estimator.evaluate(generator_input_fn(examples, target_key='y', batch_size=16), steps=2)
      ''')
  found = [(f.line, f.rule, f.code) for f in scan_paths([path]).findings if f.severity == 'required']
  assert (9, 6, 'optimizer-not-cross-shard') in found
  assert [(line, code) for line, rule, code in found if rule == 5] == [(14, 'estimator-spec'), (14, 'eval-metric-ops')]
  assert [(line, code) for line, rule, code in found if rule == 3] == [
      (21, 'input-fn-from-queue-maker'), (22, 'input-fn-from-queue-maker')]
  assert (22, 4, 'queue-input') in found  # num_epochs left at 1: dequeue_up_to


def test_queue_batching_through_a_dict_and_params_updated_from_defaults(tmp_path):
  """tf.train.batch(**batch_args), batch_args holding allow_smaller_final_batch=True: a short last batch (rule 4
  at each batching call). The prediction input returns the queue's tensors: the change is placed at the batching
  call prediction reads (the one that keeps order), not at the return. `params.update(DEFAULT_PARAMS)`: the
  defaults' batch_size is a reserved key, and its 25 does not divide over 8 cores."""
  path = write(tmp_path, 'queue_defaults.py', '''
      import numpy as np
      import tensorflow as tf

      DEFAULT_PARAMS = {'batch_size': 25, 'units': 4}

      def generic_input_fn(data, shuffle, batch_size):
        limited = tf.train.limit_epochs(tf.constant(data), num_epochs=1)
        batch_args = {'tensors': [limited], 'batch_size': batch_size, 'enqueue_many': True,
                      'allow_smaller_final_batch': True, 'capacity': 100}
        if shuffle:
          batch_args['min_after_dequeue'] = 10
          (images,) = tf.train.shuffle_batch(**batch_args)
        else:
          (images,) = tf.train.batch(**batch_args)
        return {'x': images}, None

      def model_fn(features, labels, mode, params):
        predictions = tf.layers.dense(features['x'], params['units'])
        return tf.estimator.tpu.TPUEstimatorSpec(mode, predictions={'y': predictions})

      def run(data):
        params = {}
        params.update(DEFAULT_PARAMS)
        estimator = tf.estimator.tpu.TPUEstimator(model_fn, params=params, train_batch_size=8, predict_batch_size=8,
                                                  config=tf.estimator.tpu.RunConfig())
        estimator.train(lambda params: generic_input_fn(data, True, params['batch_size']), max_steps=1)
        list(estimator.predict(lambda params: generic_input_fn(data, False, params['batch_size'])))

      run(np.zeros([80, 3], np.float32))
      ''')
  found = [(f.line, f.rule, f.code) for f in scan_paths([path]).findings if f.severity == 'required']
  assert (5, 3, 'params-reserved-key') in found and (5, 16, 'batch-not-divisible') in found
  assert [(line, code) for line, rule, code in found if rule == 3 and line != 5] == [(15, 'input-fn-returns-tensors')]
  assert [line for line, rule, _ in found if rule == 4] == [13]  # training shuffles; prediction pads its own


def test_an_optimizer_class_picked_from_a_dict_of_tf_optimizers_is_a_plain_optimizer(tmp_path):
  """`optimizers = {'adam': tf.train.AdamOptimizer, 'sgd': ...}` then `optimizers[params['optimizer']](lr)`: a plain
  TF optimizer whatever the key, so each minimize of one statement is its own rule-6 change."""
  path = write(tmp_path, 'optimizer_dict.py', '''
      import tensorflow as tf

      def model_fn(features, labels, mode, params):
        loss_a = tf.reduce_mean(tf.layers.dense(features, 1, name='a'))
        loss_b = tf.reduce_mean(tf.layers.dense(features, 1, name='b'))
        optimizers = {'adam': tf.train.AdamOptimizer, 'sgd': tf.train.GradientDescentOptimizer}
        first = optimizers[params['optimizer']](0.1)
        second = optimizers['sgd'](0.1)
        train_op = tf.group(first.minimize(loss_a, global_step=tf.train.get_global_step()), second.minimize(loss_b))
        return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss_a + loss_b, train_op=train_op)

      estimator = tf.estimator.tpu.TPUEstimator(model_fn, params={'optimizer': 'adam'}, train_batch_size=8,
                                                config=tf.estimator.tpu.RunConfig())
      estimator.train(lambda params: None, max_steps=1)
      ''')
  findings = [(f.line, f.rule, f.severity) for f in scan_paths([path]).findings if f.rule == 6]
  assert findings == [(10, 6, 'required'), (10, 6, 'required')]


def test_a_parameter_read_in_its_own_reassignment_is_what_the_caller_passed(tmp_path):
  """`def clean(df): ... df = df.dropna(); return df`: the df read in that statement is the caller's frame (read
  by pd.read_csv without dtype=: float64 columns), not the assignment it is part of; and a size taken from a
  tensor's shape (`np.array(t).shape`, a shape helper of the program's own) is static on a TPU, whatever the
  tensor the caller passed is computed from."""
  path = write(tmp_path, 'reassigned.py', '''
      import numpy as np
      import pandas as pd
      import tensorflow as tf

      def clean(df):
        df['total'] = pd.to_numeric(df['total'], errors='coerce')
        df = df.dropna()
        return df

      def shape_of(tensor):
        if isinstance(tensor, np.ndarray):
          shape = np.array(tensor).shape
        else:
          shape = tensor.shape.as_list()
        return shape

      def gather(sequence, positions):
        batch, length = shape_of(sequence)
        if len(shape_of(sequence)) == 2:
          sequence = tf.expand_dims(sequence, -1)
        shift = tf.expand_dims(length * tf.range(batch), -1)
        return tf.gather(tf.reshape(sequence, [-1, 1]), tf.reshape(positions + shift, [-1]))

      def model_fn(features, labels, mode, params):
        weights = tf.reduce_sum(features['x'], axis=1, keepdims=True) * tf.ones([1, 4])
        picked = gather(weights, tf.zeros([8, 2], tf.int32))
        loss = tf.reduce_mean(picked)
        return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss)

      frame = clean(pd.read_csv('data.csv'))
      estimator = tf.estimator.tpu.TPUEstimator(model_fn, train_batch_size=8, config=tf.estimator.tpu.RunConfig())
      estimator.train(tf.estimator.inputs.pandas_input_fn(frame, batch_size=8, num_epochs=None), max_steps=1)
      ''')
  found = [(f.line, f.rule, f.code) for f in scan_paths([path]).findings if f.severity == 'required']
  assert (33, 15, 'in-memory-dtype') in found
  assert [entry for entry in found if entry[1] == 4 and entry[0] < 30] == []


def test_a_decode_bound_left_at_a_parameter_s_none_default_by_a_caller_is_no_bound(tmp_path):
  """`def decode(..., maximum_length=None)` hands maximum_iterations=maximum_length to dynamic_decode; the training
  call leaves it out, so that decode has no bound XLA can compile ("maximum_iterations is required for XLA
  compilation"); where every call passes a number, nothing."""
  source = '''
      import tensorflow as tf
      from tensorflow.contrib import seq2seq

      def decode(cell, helper, state, maximum_length=None):
        decoder = seq2seq.BasicDecoder(cell=cell, helper=helper, initial_state=state)
        return seq2seq.dynamic_decode(decoder=decoder, maximum_iterations=maximum_length)

      def model_fn(features, labels, mode, params):
        cell = tf.nn.rnn_cell.GRUCell(8)
        helper = seq2seq.TrainingHelper(features, tf.fill([8], 5))
        outputs = decode(cell, helper, cell.zero_state(8, tf.float32)%s)
        loss = tf.reduce_mean(outputs[0].rnn_output)
        return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss)

      estimator = tf.estimator.tpu.TPUEstimator(model_fn, train_batch_size=8, config=tf.estimator.tpu.RunConfig())
      estimator.train(lambda params: None, max_steps=1)
      '''
  def rule_18(bound):
    path = write(tmp_path, 'decode_bound.py', source % bound)
    return [(f.line, f.code) for f in scan_paths([path]).findings if f.rule == 18]
  assert rule_18('') == [(7, 'decode-without-maximum-iterations')]
  assert rule_18(', maximum_length=5') == []


def test_keras_datasets_are_uint8_and_pixels_over_255_are_float64(tmp_path):
  # NumPy: uint8 / 255.0 is float64 (checked in both venvs); the read that reaches numpy_input_fn is the last one.
  path = write(tmp_path, 'keras_data.py', '''
      import numpy as np
      import tensorflow as tf

      def train(estimator):
        (images, labels), _ = tf.keras.datasets.mnist.load_data()
        images = np.reshape(images, (-1, 784)) / 255.0
        input_fn = tf.estimator.inputs.numpy_input_fn({'x': images}, labels, batch_size=32, num_epochs=None)
        estimator.train(input_fn, max_steps=10)
      ''')
  dtypes = sorted(f.message.split(' holds ')[0] + ' ' + f.message.split(' holds ')[1].split(' ')[0]
                  for f in scan_paths([path]).findings if f.rule == 15)
  assert dtypes == ['`x` float64', '`y` uint8']


DECORATED_MODEL_FN = '''import functools
import tensorflow as tf


def scoped(fn):
  @functools.wraps(fn)
  def inner(*args):
    return fn(*args)
  return inner


@scoped
@functools.lru_cache(
    maxsize=None)
def model_fn(features, labels, mode):
  loss = tf.reduce_sum(features)
  return tf.estimator.EstimatorSpec(mode, loss=loss)


tf.estimator.Estimator(model_fn).train(lambda: None, steps=10)
'''


def test_a_finding_at_a_decorated_def_names_the_def_line_on_every_python(tmp_path):
  """Python 3.7's ast puts a decorated def at its first decorator, 3.8+'s at `def`: the report places a change to
  the def (here: model_fn takes no params, rule 3) at the `def` line under both TensorFlows' Pythons."""
  path = write(tmp_path, 'decorated.py', DECORATED_MODEL_FN)
  report = scan_paths([path])
  rule_3 = [f.line for f in report.findings if f.rule == 3 and 'params' in f.message and f.severity == 'required']
  assert 15 in rule_3 and not set(rule_3) & {12, 13, 14}
