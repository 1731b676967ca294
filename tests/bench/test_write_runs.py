"""bench/port_yardstick/write_runs.py: every program whose original ran says how to replay it; the changes and TODOs
it counts are those `--write` wrote; and the checkpoint evaluation tells a port that computes the same from one that
does not (a real Estimator program of our own, run in subprocesses; the real held-out programs are not here)."""
import collections
import json
import os
import re
import sys

import pytest

from support.paths import PORT_FIXTURES
from bench.port_yardstick import score
from bench.port_yardstick import write_runs

PLACEHOLDERS = dict(py='PY', prog='PROG', out='OUT', data='DATA', runs='RUNS')


def test_every_program_whose_original_ran_has_a_replay_with_known_placeholders():
  with open(score.PROGRAMS) as f:
    programs = json.load(f)
  ran = [p for p in programs if (p.get('run') or {}).get('original_ran')]
  assert len(ran) >= 10
  for program in ran:
    command = program['run']['replay'].format(**PLACEHOLDERS)  # KeyError on an unknown placeholder
    # a fresh output folder each run: {out}, a checkpoint folder of the copy, the program's temporary model_dir, or
    # a fixed one the replay removes first
    assert 'OUT' in command or 'checkpoint' in program['run'] or \
        program['run'].get('model_dir', '').startswith(('temporary', 'removed first')), program['name']
    if 'checkpoint' in program['run']:
      assert program['run']['checkpoint'].startswith(('{prog}/', '{out}')), program['name']


def test_the_counts_are_what_write_wrote(tmp_path):
  written = write_runs.port({'paths': ['.']}, os.path.join(PORT_FIXTURES, 'main_block'), str(tmp_path / 'port'),
                            sys.executable)
  assert written['exit'] == 1  # TODOs left: the report still requires them
  todos = collections.Counter()
  for root, _, files in os.walk(str(tmp_path / 'port')):
    for name in files:
      with open(os.path.join(root, name)) as f:
        todos.update(int(rule) for rule in re.findall(r'TODO\(tpu port, rule (\d+)\)', f.read()))
  assert written['todos'] == sum(todos.values()) >= 1
  assert written['todos_by_rule'] == write_runs.by_rule([rule for rule in todos.elements()])
  by_rule = dict(part.split(':') for part in written['changes_by_rule'].split(', '))
  assert written['changes'] == sum(int(n) for n in by_rule.values()) >= 1 and 'r1' in by_rule



def test_a_port_that_crashes_is_no_port_that_ran(tmp_path):
  """A traceback exits 1, as a port with TODOs does, but writes nothing: it is counted as the tool's crash (and the
  port is not replayed), never as a port whose run could pass for the original's."""
  crashing = tmp_path / 'python'
  crashing.write_text('#!/bin/sh\necho "Traceback (most recent call last):"\necho "ValueError: a bug"\nexit 1\n')
  crashing.chmod(0o755)
  written = write_runs.port({'paths': ['.']}, os.path.join(PORT_FIXTURES, 'main_block'), str(tmp_path / 'port'),
                            str(crashing))
  assert written['exit'] == 'crash' and written['changes'] == 0

PROGRAM = '''\
"""A regression trained with train_and_evaluate, standing in for a user's program."""
import sys
import numpy as np
import tensorflow.compat.v1 as tf

SCALE = 1.0


def data():
  x = (np.arange(32, dtype=np.float32) / 32.0).reshape(16, 2)
  return x, x.sum(axis=1, keepdims=True)


def train_input_fn():
  return tf.data.Dataset.from_tensor_slices(data()).repeat().batch(4)


def eval_input_fn():
  return tf.data.Dataset.from_tensor_slices(data()).batch(4)


def model_fn(features, labels, mode):
  w = tf.get_variable('w', [2, 1], initializer=tf.random_normal_initializer())
  prediction = tf.matmul(features, w) * SCALE
  loss = tf.reduce_mean(tf.square(prediction - labels))
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                    eval_metric_ops={'mse': tf.metrics.mean_squared_error(labels, prediction)})


tf.logging.set_verbosity(tf.logging.INFO)
estimator = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
tf.estimator.train_and_evaluate(estimator, tf.estimator.TrainSpec(train_input_fn, max_steps=3),
                                tf.estimator.EvalSpec(eval_input_fn, steps=None, throttle_secs=0))
'''


def test_the_checkpoint_evaluation_tells_a_changed_computation(tmp_path):
  source, changed = tmp_path / 'program', tmp_path / 'changed'
  source.mkdir()
  changed.mkdir()
  (source / 'train.py').write_text(PROGRAM)
  (changed / 'train.py').write_text(PROGRAM.replace('SCALE = 1.0', 'SCALE = 2.0'))
  program = {'run': {'replay': '{py} train.py {out}/model'}}
  hook = write_runs.write_hook(str(tmp_path / 'hook'))

  def run(name, ported=None, checkpoint_of=None):
    result = write_runs.replay(program, str(source), ported, str(tmp_path / name), str(tmp_path), str(tmp_path),
                               sys.executable, 300, hook=hook, checkpoint_of=checkpoint_of)
    assert result['exit'] == 0 and result['metrics'], open(result['log']).read()[-3000:]
    return result

  original = run('original')
  assert original['metrics'][-1][0] == 3
  same = run('same', checkpoint_of=str(tmp_path / 'original'))
  other = run('other', ported=str(changed), checkpoint_of=str(tmp_path / 'original'))
  # Neither trained: both evaluated the original's step-3 weights, the unchanged copy to the same numbers.
  assert same['metrics'][-1][0] == other['metrics'][-1][0] == 3 and len(same['metrics']) == 1
  assert write_runs.compare(original, same, tolerance=1e-4).startswith('SAME')
  assert write_runs.compare(original, other, tolerance=1e-4).startswith('DIFFER in loss, mse')
  assert not write_runs._restored_nothing(same)  # pylint: disable=protected-access


def test_a_port_that_differs_only_as_much_as_the_original_differs_from_itself_is_random(tmp_path):
  """An evaluation that draws at random (unseeded noise) differs between two runs of the same checkpoint: the
  original is evaluated a second time, and the row says RANDOM rather than DIFFER; a changed computation whose
  original evaluates the same twice stays DIFFER."""
  hook = write_runs.write_hook(str(tmp_path / 'hook'))

  def rows(text, ported_text):
    folder = tmp_path / ('case%d' % len(list(tmp_path.iterdir())))
    (folder / 'program').mkdir(parents=True)
    (folder / 'port').mkdir()
    (folder / 'program' / 'train.py').write_text(text)
    (folder / 'port' / 'train.py').write_text(ported_text)
    program = {'run': {'replay': '{py} train.py {out}/model'}}
    trained = write_runs.replay(program, str(folder / 'program'), None, str(folder / 'run-original'), str(tmp_path),
                                str(tmp_path), sys.executable, 300, hook=hook)
    assert trained['exit'] == 0, open(trained['log']).read()[-3000:]
    return write_runs.evaluate_checkpoint(
        lambda kind, source: write_runs.replay(program, str(folder / 'program'), source, str(folder / ('eval-' + kind)),
                                               str(tmp_path), str(tmp_path), sys.executable, 300, hook=hook,
                                               checkpoint_of=str(folder / 'run-original')),
        str(folder / 'port'))

  noisy = PROGRAM.replace('* SCALE', '* SCALE + tf.random_uniform([])')
  random = rows(noisy, noisy)
  assert random['checkpoint_compare'].startswith("RANDOM (the original's own two evaluations differ too, in loss, mse)")
  assert random['original_eval_again']['metrics'][-1][0] == 3
  changed = rows(PROGRAM, PROGRAM.replace('SCALE = 1.0', 'SCALE = 2.0'))
  assert changed['checkpoint_compare'].startswith('DIFFER in loss, mse'), changed['checkpoint_compare']
  assert changed['original_eval_again']['metrics'][-1][0] == 3
  same = rows(PROGRAM, PROGRAM)
  assert same['checkpoint_compare'].startswith('SAME') and 'original_eval_again' not in same


def test_an_evaluation_at_step_0_restored_no_checkpoint():
  """A replay whose checkpoints live in a temporary folder leaves nothing to copy: its 'evaluation of the original's
  checkpoint' is of fresh random weights, which the row says instead of a DIFFER between two random models."""
  fresh = {'metrics': [(0, {'loss': 1.4, 'global_step': 0.0})]}
  assert write_runs._restored_nothing(fresh)  # pylint: disable=protected-access
  assert not write_runs._restored_nothing({'metrics': []})  # pylint: disable=protected-access


def test_the_judge_runs_the_program_s_own_command_under_readiness_run(tmp_path):
  assert write_runs.judge_commands('{py} {data}/make_data.py {out}/d && {py} -m trainer.task --x 1') == [
      '{py} {data}/make_data.py {out}/d && {py} -m estimator_tpu.readiness --run -- -m trainer.task --x 1']
  source = tmp_path / 'program'
  source.mkdir()
  (source / 'train.py').write_text(PROGRAM)
  program = {'run': {'replay': '{py} train.py {out}/model'}}
  judged = write_runs.judged(program, str(source), None, str(tmp_path / 'judge'), str(tmp_path), str(tmp_path),
                             sys.executable, 300)
  # The unported program: a plain Estimator and an EstimatorSpec, each a FAIL line; it still ran to its end.
  assert judged['exit'] == 1 and judged['failed'] >= 1 and judged['passed'] >= 1, open(judged['log']).read()[-3000:]
  assert 'estimator' in judged['failed_checks'], judged


def test_a_ported_file_replaces_a_file_the_program_links_in_from_outside_its_folder(tmp_path):
  """held-out-20's tensorflow/workshops program links its model files in from a notebooks folder outside the
  program's: the copy keeps the links (dangling there), and the port's file replaces the link instead of writing
  through it (FileNotFoundError)."""
  source, ported, outside = tmp_path / 'program', tmp_path / 'ported', tmp_path / 'notebooks'
  for folder in (source, ported, outside):
    folder.mkdir()
  (outside / 'model.py').write_text('VALUE = 1\n')
  os.symlink(os.path.join('..', 'notebooks', 'model.py'), str(source / 'model.py'))
  (source / 'train.py').write_text('import model\nprint("value", model.VALUE)\n')
  (ported / 'model.py').write_text('VALUE = 2\n')
  program = {'run': {'replay': '{py} train.py'}}
  result = write_runs.replay(program, str(source), str(ported), str(tmp_path / 'run'), str(tmp_path),
                             str(tmp_path), sys.executable, 60)
  log = open(result['log']).read()
  assert result['exit'] == 0 and 'value 2' in log, log[-2000:]
  assert (outside / 'model.py').read_text() == 'VALUE = 1\n'


CONTRIB_LEARN_PROGRAM = '''\
"""A contrib.learn premade regressor fitted on arrays, its evaluation logged above INFO."""
import sys
import numpy as np
import tensorflow as tf
from tensorflow.contrib import learn

tf.logging.set_verbosity(tf.logging.WARN)
x = (np.arange(32, dtype=np.float32) / 32.0).reshape(16, 2)
regressor = learn.LinearRegressor(feature_columns=[tf.contrib.layers.real_valued_column('', dimension=2)],
                                  model_dir=sys.argv[1])
regressor.fit(x=x, y=x.sum(axis=1), steps=3, batch_size=4)
regressor.evaluate(x=x, y=x.sum(axis=1), steps=1, batch_size=4)
'''


def test_an_evaluation_a_program_logs_above_info_is_read_through_the_replay_hook(tmp_path):
  """A program that keeps TensorFlow's logging at WARN never shows the 'Saving dict for global step' line the
  metrics are read from: through the replay hook each evaluation still prints it, the same values as at INFO,
  for Estimator and (TF 1.15) contrib.learn's Estimator; without the hook, none."""
  hook = write_runs.write_hook(str(tmp_path / 'hook'))
  programs = {'estimator': PROGRAM.replace('tf.logging.set_verbosity(tf.logging.INFO)',
                                           'tf.logging.set_verbosity(tf.logging.WARN)'),
              'logged_at_info': PROGRAM}
  if sys.version_info < (3, 8):  # TF 1.15: tf.contrib
    programs['contrib_learn'] = CONTRIB_LEARN_PROGRAM
  results = {}
  for name, text in programs.items():
    source = tmp_path / name
    source.mkdir()
    (source / 'train.py').write_text(text)
    program = {'run': {'replay': '{py} train.py {out}/model'}}
    for hooked in (False, True):
      result = write_runs.replay(program, str(source), None, str(tmp_path / ('%s-%s' % (name, hooked))),
                                 str(tmp_path), str(tmp_path), sys.executable, 300, hook=hook if hooked else None)
      assert result['exit'] == 0, open(result['log']).read()[-3000:]
      results[name, hooked] = result['metrics']
  assert results['estimator', False] == []
  (step, values), = results['estimator', True]
  assert step == 3 and {'loss', 'mse', 'global_step'} <= set(values)
  # At INFO TensorFlow's own line is there, and the hook adds no second one.
  assert len(results['logged_at_info', True]) == len(results['logged_at_info', False]) == 1
  assert sorted(results['logged_at_info', True][0][1]) == sorted(values)
  if 'contrib_learn' in programs:
    assert results['contrib_learn', False] == []
    (step, values), = results['contrib_learn', True]
    assert step == 3 and 'loss' in values


def test_an_estimator_without_model_dir_is_evaluated_on_the_original_s_checkpoint(tmp_path):
  """An Estimator given no model_dir trains in a new temporary folder each run: through the replay hook it is the
  replay's output folder's temporary_model_dirs/0, so the eval-only run of a copy restores the original's step 3
  (not fresh weights at step 0)."""
  source = tmp_path / 'program'
  source.mkdir()
  (source / 'train.py').write_text(PROGRAM.replace('tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])',
                                                   'tf.estimator.Estimator(model_fn)'))
  program = {'run': {'replay': '{py} train.py'}}
  hook = write_runs.write_hook(str(tmp_path / 'hook'))

  def run(name, checkpoint_of=None):
    result = write_runs.replay(program, str(source), None, str(tmp_path / name), str(tmp_path), str(tmp_path),
                               sys.executable, 300, hook=hook, checkpoint_of=checkpoint_of)
    assert result['exit'] == 0 and result['metrics'], open(result['log']).read()[-3000:]
    return result

  original = run('original')
  assert os.path.isdir(str(tmp_path / 'original' / 'out' / write_runs.TEMPORARY_MODEL_DIRS / '0'))
  again = run('again', checkpoint_of=str(tmp_path / 'original'))
  assert again['metrics'][-1][0] == 3 and not write_runs._restored_nothing(again)  # pylint: disable=protected-access
  assert write_runs.compare(original, again, tolerance=1e-4).startswith('SAME')


def test_a_replay_of_two_programs_is_judged_at_each_and_a_data_script_is_left_out(tmp_path):
  source = tmp_path / 'program'
  source.mkdir()
  (source / 'prepare.py').write_text('print("no estimator here")\n')
  (source / 'train.py').write_text(PROGRAM)
  (source / 'again.py').write_text(PROGRAM)
  replay = '{py} prepare.py && {py} train.py {out}/model && {py} again.py {out}/model2'
  assert len(write_runs.judge_commands(replay)) == 3
  judged = write_runs.judged({'run': {'replay': replay}}, str(source), None, str(tmp_path / 'judge'), str(tmp_path),
                             str(tmp_path), sys.executable, 600)
  # prepare.py builds no estimator (exit 2 under the judge): left out; train.py and again.py each judged.
  assert len(judged['logs']) == 2, judged
  single = write_runs.judged({'run': {'replay': '{py} train.py {out}/model'}}, str(source), None,
                             str(tmp_path / 'one'), str(tmp_path), str(tmp_path), sys.executable, 600)
  assert judged['exit'] == 1 and judged['failed'] == 2 * single['failed'], open(judged['log']).read()[-3000:]
  assert judged['passed'] == 2 * single['passed']


EXPERIMENT_PROGRAM = '''\
"""A contrib.learn Experiment that evaluates only as it saves checkpoints (checkpoint_and_export=True)."""
import sys
import numpy as np
import tensorflow as tf
from tensorflow.contrib import learn

x = (np.arange(32, dtype=np.float32) / 32.0).reshape(16, 2)
input_fn = lambda: ({'': tf.constant(x)}, tf.constant(x.sum(axis=1)))
regressor = learn.LinearRegressor(feature_columns=[tf.contrib.layers.real_valued_column('', dimension=2)],
                                  config=learn.RunConfig(model_dir=sys.argv[1], save_checkpoints_steps=3))
learn.Experiment(regressor, input_fn, input_fn, train_steps=3, eval_steps=1,
                 checkpoint_and_export=True).train_and_evaluate()
'''


@pytest.mark.skipif(sys.version_info >= (3, 8), reason='contrib.learn is TF 1.x only (TF 2.15 has no tf.contrib)')
def test_an_experiment_that_evaluates_at_its_checkpoints_evaluates_a_copied_checkpoint_once(tmp_path):
  source = tmp_path / 'program'
  source.mkdir()
  (source / 'train.py').write_text(EXPERIMENT_PROGRAM)
  program = {'run': {'replay': '{py} train.py {out}/model'}}
  hook = write_runs.write_hook(str(tmp_path / 'hook'))
  runs = {}
  for name, checkpoint_of in (('original', None), ('again', str(tmp_path / 'original'))):
    result = write_runs.replay(program, str(source), None, str(tmp_path / name), str(tmp_path), str(tmp_path),
                               sys.executable, 300, hook=hook, checkpoint_of=checkpoint_of)
    assert result['exit'] == 0, open(result['log']).read()[-3000:]
    runs[name] = result
  assert runs['original']['metrics'][-1][0] == 3
  # The copy is at step 3 already: no training, so no checkpoint saved; it evaluates once all the same.
  assert [step for step, _ in runs['again']['metrics']] == [3]
  assert write_runs.compare(runs['original'], runs['again'], tolerance=1e-4).startswith('SAME')


def test_a_comparison_of_text_values_or_of_the_step_alone_says_what_it_compared():
  """A metric logged as text (a confusion matrix's first row, as BERT-NER's evaluation prints it) is compared as it
  reads; a run that logs only its global step compared nothing, which is not SAME (held-out-26's --write notes)."""
  matrix = lambda row: {'metrics': [(3, {'global_step': 3.0, 'confusion_matrix': row})]}
  assert write_runs.compare(matrix('[[4 0'), matrix('[[4 0'), tolerance=1e-4).startswith('SAME')
  assert write_runs.compare(matrix('[[4 0'), matrix('[[3 1'), tolerance=1e-4).startswith('DIFFER in confusion_matrix')
  step = {'metrics': [(3, {'global_step': 3.0})]}
  assert write_runs.compare(step, step, tolerance=1e-4).startswith('NOTHING COMPARED')


def test_the_judge_replays_the_program_with_its_tpu_flags_where_they_are_recorded(tmp_path):
  """run.judge_replay (a control's TPU flags, such as --use_tpu=True) is what the judge runs, where the replay of the
  CPU run would judge the CPU path of a model_fn that reads use_tpu from the program's flags."""
  source = tmp_path / 'program'
  source.mkdir()
  (source / 'train.py').write_text(PROGRAM)
  program = {'run': {'replay': '{py} train.py {out}/model', 'judge_replay': '{py} train.py {out}/tpu_flags'}}
  judged = write_runs.judged(program, str(source), None, str(tmp_path / 'judge'), str(tmp_path), str(tmp_path),
                             sys.executable, 300)
  first = open(judged['log']).readline()
  assert 'estimator_tpu.readiness --run -- train.py' in first and first.rstrip().endswith('/tpu_flags'), first


def test_a_matrix_logged_over_several_lines_is_read_whole():
  """Estimator logs an array metric as NumPy prints it, one row a line: every row is read and compared, not the first
  alone (held-out-27's --write notes: a 5 x 5 confusion matrix said SAME on its first row)."""
  log = ('INFO:tensorflow:Saving dict for global step 7: accuracy = 0.5, confusion_matrix = [[4 0 1]\n'
         ' [0 %d 0]\n [1 0 2]], global_step = 7, loss = 0.25\nINFO:tensorflow:Loss for final step: 0.25\n')
  [(step, one)] = write_runs.parse_metrics(log % 3)
  assert step == 7 and one['confusion_matrix'] == '[[4 0 1] [0 3 0] [1 0 2]]' and one['loss'] == 0.25, one
  original, port = {'metrics': write_runs.parse_metrics(log % 3)}, {'metrics': write_runs.parse_metrics(log % 2)}
  assert write_runs.compare(original, port, tolerance=1e-4).startswith('DIFFER in confusion_matrix')


def test_a_program_with_nothing_to_port_is_its_own_port(tmp_path):
  """--write on an already-ported program (a control) exits 0, says "Nothing to port" and writes nothing: the port
  is the program as it is, copied to the port's folder to be replayed and judged (held-out-28's ELECTRA control had
  been counted as a crash of the tool)."""
  from support.paths import REPO_ROOT
  written = write_runs.port({'paths': ['mnist_tpu.py']}, REPO_ROOT, str(tmp_path / 'port'), sys.executable)
  assert written['exit'] == 0 and written['changes'] == 0 and written['todos'] == 0, written['output']
  assert write_runs.NOTHING_TO_PORT in written['output']
  with open(os.path.join(REPO_ROOT, 'mnist_tpu.py')) as original, open(str(tmp_path / 'port' / 'mnist_tpu.py')) as f:
    assert f.read() == original.read()
