"""The one reading of a program (estimator_tpu/porting/program) that the report checks and the rewrite ports: its
facts (the estimators and what they are given, the batch sites and where their sizes come from), each with an
anchor, and the registry of finding codes."""
import ast
import glob
import os
import re
import textwrap

import pytest

from support.paths import REPO_ROOT
from estimator_tpu import rules
from estimator_tpu.porting.program import anchors
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import inputs
from estimator_tpu.porting.program import reading
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import uses as uses_lib
from estimator_tpu.porting.report import codes
from estimator_tpu.porting.report import scan

PROGRAM = '''\
import tensorflow as tf

BATCH = 32


def model_fn(features, labels, mode, params):
  return tf.estimator.EstimatorSpec(mode, loss=tf.reduce_mean(features))


def make_input_fn(batch_size, training):
  def input_fn(params):
    dataset = tf.data.Dataset.from_tensors(([1.0], [1]))
    return dataset.batch(batch_size, drop_remainder=training)
  return input_fn


def eval_input_fn():
  return tf.data.Dataset.from_tensors(([1.0], [1])).batch(BATCH)


estimator = tf.estimator.Estimator(model_fn, params={'hidden': 8})
estimator.train(make_input_fn(BATCH, True), max_steps=10)
estimator.evaluate(eval_input_fn)
'''


def read(tmp_path, source=PROGRAM, name='program.py'):
  path = tmp_path / name
  path.write_text(textwrap.dedent(source))
  program, bad = reading.read([str(path)])
  assert bad == []
  return program


BRANCHING_INPUT = '''\
import tensorflow as tf

EVAL = tf.estimator.ModeKeys.EVAL


def input_fn(is_training, files, batch_size=None, mode=tf.estimator.ModeKeys.TRAIN):
  dataset = tf.data.TFRecordDataset(files)
  if TEST:
    dataset = dataset.batch(batch_size)
  else:
    dataset = dataset.batch(32)
  return dataset


estimator = tf.estimator.Estimator(lambda features, labels, mode: None)
estimator.train(lambda: input_fn(TRAIN_ARGS), steps=1)
estimator.evaluate(lambda: input_fn(EVAL_ARGS))
'''


@pytest.mark.parametrize('test, train_args, eval_args, train_batches, eval_batches', [
    ('is_training', "True, 'f', batch_size=64", "False, 'f'", ['batch_size'], ['32']),
    ('not is_training', "True, 'f', 64", "is_training=False, files='f'", ['32'], ['batch_size']),
    ("mode == 'train'", "None, 'f', 64, 'train'", "None, 'f', mode='eval'", ['batch_size'], ['32']),
    ('mode == tf.estimator.ModeKeys.TRAIN', "None, 'f', 64", "None, 'f', mode=tf.estimator.ModeKeys.EVAL",
     ['batch_size'], ['32']),
    ('mode != tf.estimator.ModeKeys.EVAL', "None, 'f', 64", "None, 'f', mode='eval'", ['batch_size'], ['32']),
    # what the calls do not fix keeps both branches: a name handed on, a test on something else
    ('is_training', "True, 'f', batch_size=64", "EVAL, 'f'", ['batch_size'], ['batch_size', '32']),
    ('mode == EVAL', "None, 'f', 64, 'eval'", "None, 'f', mode='eval'", ['batch_size', '32'], ['batch_size', '32']),
    ('EVAL', "True, 'f', 64", "False, 'f'", ['batch_size', '32'], ['batch_size', '32']),
])
def test_a_branch_the_input_function_s_call_never_takes_batches_nothing_for_it(
    tmp_path, test, train_args, eval_args, train_batches, eval_batches):
  source = BRANCHING_INPUT.replace('TRAIN_ARGS', train_args).replace('EVAL_ARGS', eval_args)
  program = read(tmp_path, source.replace('if TEST:', 'if %s:' % test))
  uses = uses_lib.read_uses(program)

  def batches(use):
    return [syntax.render(site.size) for site in inputs.read_input_fn(program, use.targets[0]).batches]

  assert [batches(use) for use in uses.input_fns] == [train_batches, eval_batches]


def test_a_parameter_the_input_function_reassigns_is_no_branch_its_call_fixes(tmp_path):
  source = BRANCHING_INPUT.replace('TRAIN_ARGS', "True, 'f', 64").replace('EVAL_ARGS', "False, 'f'")
  program = read(tmp_path, source.replace('  if TEST:', '  is_training = not is_training\n  if is_training:'))
  uses = uses_lib.read_uses(program)
  assert [[syntax.render(site.size) for site in inputs.read_input_fn(program, use.targets[0]).batches]
          for use in uses.input_fns] == [['batch_size', '32'], ['batch_size', '32']]

def test_the_estimators_and_what_they_are_given(tmp_path):
  program = read(tmp_path)
  uses = uses_lib.read_uses(program)
  [site] = uses.index.sites.values()
  assert (site.kind, site.canonical, sorted(site.modes)) == ('estimator', 'tensorflow.estimator.Estimator',
                                                              ['evaluate', 'train'])
  assert [t.node.name for t in uses.model_fns_of(site)] == ['model_fn']
  assert sorted(uses.params[id(site.call)].entries) == ['hidden']
  assert [(u.mode, [t.node.name for t in u.targets], u.sites) for u in uses.input_fns] == [
      ('train', ['input_fn'], [site]), ('evaluate', ['eval_input_fn'], [site])]
  # Each fact is anchored: file, line, column, kind and name of its node.
  assert site.anchor[1:] == (21, len('estimator = '), 'Call', 'tensorflow.estimator.Estimator')
  assert [u.anchor.line for u in uses.input_fns] == [22, 23]
  assert uses.model_fn_arguments[0].anchor.name == 'program.model_fn'


def test_batch_sites_say_where_their_size_comes_from_and_whether_they_drop(tmp_path):
  program = read(tmp_path)
  uses = uses_lib.read_uses(program)
  train, evaluate = [u.targets[0] for u in uses.input_fns]
  [built] = inputs.read_input_fn(program, train).batches
  # The builder's argument BATCH reaches input_fn as the closure's batch_size; drop_remainder=training is True.
  assert (built.origin.kind, built.origin.node.id, built.origin.owner.name, built.drops) == (
      'parameter', 'batch_size', 'make_input_fn', True)
  assert (built.anchor.line, built.anchor.kind) == (13, 'Call')
  [plain] = inputs.read_input_fn(program, evaluate).batches
  assert (plain.origin.kind, plain.origin.node.id, plain.drops, plain.from_params) == (
      'module value', 'BATCH', False, False)
  assert inputs.read_input_fn(program, train) is inputs.read_input_fn(program, train)  # read once


def test_an_anchor_counts_characters_where_ast_counts_bytes(tmp_path):
  program = read(tmp_path, 'import tensorflow as tf\nlabel = "ééé"; est = tf.estimator.Estimator(model_fn=None)\n')
  [module] = program.modules
  call = [node for node in reading.ast.walk(module.tree) if isinstance(node, reading.ast.Call)][0]
  assert call.col_offset == len('label = "ééé"; est = '.encode('utf-8'))
  assert anchors.anchor(program, module, call) == anchors.Anchor(
      module.path, 2, len('label = "ééé"; est = '), 'Call', 'tensorflow.estimator.Estimator')


def test_a_callable_through_a_partial_keeps_what_it_binds(tmp_path):
  program = read(tmp_path, '''\
      import functools

      def input_fn(data_dir, params):
        return data_dir

      bound = functools.partial(input_fn, '/data')
      ''')
  [module] = program.modules
  value = module.assignments['bound'][0]
  [target] = program.callables.resolve(module, None, value)
  assert isinstance(target, callables.Fn) and (target.node.name, target.bound_positional) == ('input_fn', 1)


def report_sources():
  return sorted(glob.glob(os.path.join(REPO_ROOT, 'estimator_tpu', 'porting', 'report', '*.py')))


def test_every_code_is_registered_with_a_rule_and_every_registered_code_is_made():
  made = set()
  for path in report_sources():
    if path.endswith('codes.py'):
      continue
    with open(path) as f:
      text = f.read()
    made.update(re.findall(r"\.(?:required|advice|unknown|_required_if_fed)\(\s*[\w.]+,\s*[\w.\[\]]+,\s*'([a-z0-9-]+)'", text))
    made.update(re.findall(r"\.add\(\s*[\w.]+,\s*[\w.]+,\s*'([a-z0-9-]+)'", text))
  assert made == set(codes.BY_CODE), (made - set(codes.BY_CODE), set(codes.BY_CODE) - made)
  assert all(code.rule in rules.BY_NUMBER and code.about for code in codes.CODES)
  assert len(codes.CODES) == len(codes.BY_CODE)  # no code twice


def test_a_call_on_what_a_call_returns_through_a_local_alias_is_read_without_a_crash(tmp_path):
  """`dataset = tf.data.Dataset` in a def, then `dataset.list_files(pattern).map(...)`: the flag reading looked the
  local alias up for a function written as no dotted name (held-out-21's guesslang: a TypeError, reported as code the
  report could not analyse)."""
  source = PROGRAM.replace("def eval_input_fn():\n", "def eval_input_fn():\n"
                           "  dataset = tf.data.Dataset\n"
                           "  files = dataset.list_files('*.txt', shuffle=True).map(tf.io.read_file)\n")
  path = tmp_path / 'program.py'
  path.write_text(source)
  report = scan.scan([str(path)])
  assert [f.code for f in report.findings if f.code == 'not-analysed'] == []
  assert any(f.code != 'not-analysed' for f in report.findings)


LOCAL_ALIASES = '''\
import tensorflow as tf


def columns(names, twice):
  vocabulary = tf.feature_column.categorical_column_with_vocabulary_list
  indicator = vocabulary
  made = [vocabulary(name, ['a', 'b']) for name in names]
  again = tf.feature_column.indicator_column
  again = tf.feature_column.embedding_column
  loop = loop.attr
  return made, indicator, again(made[0], 4), loop, twice.x
'''


def test_a_local_bound_once_to_a_dotted_name_of_an_import_is_an_alias(tmp_path):
  """`vocabulary = tf.feature_column.categorical_column_with_vocabulary_list` in a function is that API (also a
  name bound to such a name); a local bound twice, one bound to itself, or a parameter is not."""
  program = read(tmp_path, LOCAL_ALIASES)
  module = program.modules[0]
  fn = module.top_level['columns']
  names = {}
  for node in ast.walk(fn):
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names:
      names[node.id] = program.canonical(module, fn, node)
  assert names['vocabulary'] == names['indicator'] == \
      'tensorflow.feature_column.categorical_column_with_vocabulary_list'
  assert names['again'] is None and names['loop'] is None and names['twice'] is None
  assert names['tf'] == 'tensorflow'
