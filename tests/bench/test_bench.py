"""bench/run_benchmarks.py in --smoke mode (what CI runs): the JSON and markdown it writes are complete and
self-consistent; bench/kernels.py and bench/levers.py at tiny sizes. The full benchmark is not a test; see README
"Benchmarks"."""
import json
import os
import subprocess
import sys

import pytest
import tensorflow.compat.v1 as tf

from support.paths import REPO_ROOT
from estimator_tpu.data import records
from estimator_tpu.data import synthetic

SCRIPT = 'bench.run_benchmarks'  # run as python -m from REPO_ROOT
RATE_NAMES = ('estimator_examples_per_sec', 'session_examples_per_sec', 'pipeline_file_examples_per_sec',
              'pipeline_cached_examples_per_sec', 'matmul_flops_per_sec')


def run_bench(args, timeout=300, script=SCRIPT):
  return subprocess.run([sys.executable, '-m', script] + args, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)


def table_rows(stdout):
  """The data rows of the markdown table a script printed, as lists of cells."""
  lines = [line for line in stdout.splitlines() if line.startswith('| ') and not line.startswith('|---')]
  return [[cell.strip() for cell in line.strip('|').split('|')] for line in lines[1:]]


@pytest.fixture(scope='module')
def smoke(tmp_path_factory):
  """Runs the smoke benchmark once; returns (result dict, markdown text, stderr)."""
  output_dir = str(tmp_path_factory.mktemp('bench'))
  completed = run_bench(['--smoke', '--output_dir=%s' % output_dir])
  assert completed.returncode == 0, completed.stderr[-3000:]
  base = os.path.join(output_dir, 'tf-%s' % tf.__version__)
  with open(base + '.json') as f:
    result = json.load(f)
  with open(base + '.md') as f:
    markdown = f.read()
  return result, markdown, completed.stderr


def test_rates_are_positive_and_totals_of_the_rounds(smoke):
  result = smoke[0]
  assert result['smoke'] and result['machine']['tensorflow'] == tf.__version__
  assert result['machine']['cpus'] >= 1 and len(result['machine']['load_average_at_start']) == 3
  for clock in ('wall', 'cpu'):
    assert sorted(result['rates'][clock]) == sorted(RATE_NAMES)
    for kind, name in (('estimator', 'estimator_examples_per_sec'), ('matmul', 'matmul_flops_per_sec')):
      windows = [r[kind] for r in result['throughput']['rounds']]
      assert all(w['amount'] > 0 and w['wall'] > 0 and w['cpu'] > 0 for w in windows)
      expected = sum(w['amount'] for w in windows) / sum(w[clock] for w in windows)
      assert result['rates'][clock][name] == pytest.approx(expected)
  rounds = result['throughput']['rounds']
  assert len(rounds) == result['rounds']
  # Both loops timed the same number of steps of the same batch.
  assert rounds[0]['estimator']['amount'] == rounds[0]['session']['amount'] == (
      result['measure_steps'] * result['batch_size'])
  assert rounds[0]['matmul']['amount'] == 2.0 * result['matmul_size'] ** 3 * 3  # --smoke times 3 matmuls


def test_ratios_follow_from_the_rates(smoke):
  result = smoke[0]
  per_example = result['flops']['per_example']
  for clock in ('wall', 'cpu'):
    rates, ratios = result['rates'][clock], result['ratios'][clock]
    estimator = rates['estimator_examples_per_sec']
    assert ratios['p1_overhead'] == pytest.approx(estimator / rates['session_examples_per_sec'])
    slower_pipeline = min(rates['pipeline_file_examples_per_sec'], rates['pipeline_cached_examples_per_sec'])
    assert ratios['p2_pipeline'] == pytest.approx(slower_pipeline / estimator)
    assert ratios['p3_efficiency'] == pytest.approx(per_example * estimator / rates['matmul_flops_per_sec'])
  for name in ('p1_overhead', 'p2_pipeline', 'p3_efficiency'):
    check = result['targets'][name]
    assert check['value'] == pytest.approx(result['ratios']['wall'][name])
    threshold = float(check['target'].split()[1])
    assert check['met'] == (check['value'] >= threshold)


def test_flop_count_agrees_with_the_profiler(smoke):
  flops = smoke[0]['flops']
  breakdown = flops['analytic_breakdown']
  assert sorted(breakdown) == ['conv1', 'conv2', 'dense1', 'logits']
  assert breakdown['conv1']['input_grad'] == 0  # the image needs no gradient
  assert breakdown['conv2']['forward'] == breakdown['conv2']['weight_grad'] == breakdown['conv2']['input_grad'] > 0
  assert flops['per_example'] == sum(sum(parts.values()) for parts in breakdown.values())
  # The profiler counts the first layer's (pruned) input gradient and some element-wise work on top.
  explained = flops['per_example'] + flops['profiler_pruned_first_layer_input_grad']
  assert flops['profiler_per_example'] == pytest.approx(explained, rel=0.01)
  assert flops['profiler_by_op_type']['Conv2D'] == pytest.approx(
      breakdown['conv1']['forward'] + breakdown['conv2']['forward'])


def test_time_to_accuracy_is_the_first_evaluation_at_the_target(smoke):
  result = smoke[0]
  accuracy = result['accuracy']
  assert accuracy['eval_split'] == 'test' and accuracy['eval_examples'] == 110  # synthetic test split, all of it
  evaluations = accuracy['evaluations']
  steps = [e['step'] for e in evaluations]
  assert steps and all(step % accuracy['recipe']['eval_every_steps'] == 0 for step in steps)
  assert steps == sorted(set(steps))
  times = [e['training_seconds'] for e in evaluations]
  assert times == sorted(times) and times[0] > 0
  above = [e for e in evaluations if e['accuracy'] >= accuracy['target']]
  assert accuracy['reached'] == bool(above)
  if above:
    assert accuracy['stopped_by'] == 'target' and evaluations[-1] is not None
    assert (accuracy['steps'], accuracy['training_seconds']) == (above[0]['step'], above[0]['training_seconds'])
    assert above[0] == evaluations[-1]  # training stopped there
    assert result['targets']['p4_minutes']['value'] == pytest.approx(accuracy['training_seconds'] / 60.0)
  assert accuracy['peak_rss_mib'] > 100  # TensorFlow alone takes more


def test_markdown_table_shows_every_metric(smoke):
  result, markdown, _ = smoke
  assert 'TensorFlow %s' % tf.__version__ in markdown
  for label in ('P1 TPUEstimator path', 'P2 input pipeline', 'P3 model FLOP/s', 'P4 time to 90.0%', 'Peak RSS'):
    assert label in markdown
  assert '%.3f' % result['ratios']['wall']['p1_overhead'] in markdown
  assert 'Command: `python -m bench.run_benchmarks --smoke' in markdown


def test_eval_batch_that_skips_images_is_a_user_error(tmp_path):
  completed = run_bench(['--smoke', '--phases=accuracy', '--eval_batch_size=20', '--output_dir=%s' % tmp_path])
  assert completed.returncode == 1
  assert completed.stderr.count('error: 110 test images are not a multiple of --eval_batch_size=20') == 1
  assert 'Traceback' not in completed.stderr
  assert os.listdir(str(tmp_path)) == []


def test_tpu_is_refused(tmp_path):
  completed = run_bench(['--smoke', '--use_tpu', '--master=grpc://127.0.0.1:8470', '--data_dir=gs://b/data',
                         '--model_dir=gs://b/model', '--output_dir=%s' % tmp_path])
  assert completed.returncode == 1
  assert 'error: the benchmarks measure the local CPU.' in completed.stderr
  assert 'Traceback' not in completed.stderr
  assert os.listdir(str(tmp_path)) == []


def test_summary_table_has_one_column_per_run(smoke):
  from bench import summarize  # pylint: disable=g-import-not-at-top  (needs REPO_ROOT on sys.path: conftest)
  result = smoke[0]
  table = summarize.summary_markdown([result, result])
  header = table.splitlines()[0]
  assert header.count('TF %s' % tf.__version__) == 2
  p1_row = next(line for line in table.splitlines() if line.startswith('| P1 '))
  verdict = 'met' if result['targets']['p1_overhead']['met'] else '**missed**'
  assert p1_row.count('%.3f %s' % (result['ratios']['wall']['p1_overhead'], verdict)) == 2


def test_kernels_script_rates_every_kernel():
  from bench import kernels  # pylint: disable=g-import-not-at-top
  completed = run_bench(['--runs=1'], script='bench.kernels')
  assert completed.returncode == 0, completed.stderr[-3000:]
  rows = table_rows(completed.stdout)
  assert [(row[0], row[1]) for row in rows] == [(group, kernel) for group, kernel, _, _, _ in kernels.KERNELS]
  assert all(float(row[2]) > 0 and float(row[3]) > 0 for row in rows)


def test_levers_script_trains_the_chosen_settings(tmp_path):
  data_dir = str(tmp_path / 'data')
  synthetic.write_idx_dir(str(tmp_path / 'idx'))
  records.convert_idx_dir(str(tmp_path / 'idx'), data_dir, validation_size=50)
  levers_script = 'bench.levers'
  completed = run_bench(['--data_dir=%s' % data_dir, '--settings=default,cpu_gradients', '--steps=2'],
                        script=levers_script)
  assert completed.returncode == 0, completed.stderr[-3000:]
  rows = table_rows(completed.stdout)
  assert [row[0] for row in rows] == ['default', 'cpu_gradients']
  for _, batch, examples, examples_per_cpu, _, model_rate, matmul_rate, _, p3_per_cpu in rows:
    assert batch == '128' and float(examples) > 0 and float(examples_per_cpu) > 0
    assert float(p3_per_cpu) == pytest.approx(float(model_rate) / float(matmul_rate), abs=0.01)
  unknown = run_bench(['--data_dir=%s' % data_dir, '--settings=turbo'], script=levers_script)
  assert unknown.returncode == 1
  assert "error: unknown --settings ['turbo']" in unknown.stderr and 'Traceback' not in unknown.stderr


def test_default_runs_tabulates_seeded_runs_of_the_seed_command(tmp_path, shared_data_dir):
  output_dir = tmp_path / 'out'
  completed = run_bench(['--data_dir=%s' % shared_data_dir, '--runs=2', '--first_seed=7',
                         '--output_dir=%s' % output_dir,
                         '--extra_args=--train_steps=12,--batch_size=16,--eval_batch_size=10,--iterations=6'],
                        script='bench.default_runs')
  assert completed.returncode == 0, completed.stderr[-3000:]
  name = 'default-runs-tf-%s' % tf.__version__
  with open(str(output_dir / (name + '.json'))) as f:
    result = json.load(f)
  assert [run['seed'] for run in result['runs']] == [7, 8]
  assert all(run['global_step'] == 12 and run['examples'] == 110 and 0 <= run['accuracy'] <= 1
             for run in result['runs'])
  markdown = (output_dir / (name + '.md')).read_text()
  assert sum(line.startswith('|') for line in markdown.splitlines()) == 2 + 2  # header, separator, a row per run
  assert 'runs at or above 99.4%%: %d of 2.' % sum(run['accuracy'] >= 0.994 for run in result['runs']) in markdown


@pytest.mark.parametrize('program', ['mnist_tpu', 'mnist_keras'])
def test_default_runs_with_the_tpu_defaults_on_this_cpu(tmp_path, shared_data_dir, program):
  if program == 'mnist_keras' and tf.__version__.startswith('1.'):
    pytest.skip('mnist_keras.py is the TF 2.x route; TF %s' % tf.__version__)
  output_dir = tmp_path / 'out'
  completed = run_bench(['--data_dir=%s' % shared_data_dir, '--runs=1', '--program=%s' % program, '--defaults=tpu',
                         '--label=bfloat16', '--output_dir=%s' % output_dir,
                         '--extra_args=--train_steps=2,--iterations=1,--precision=bfloat16'],
                        script='bench.default_runs')
  assert completed.returncode == 0, completed.stderr[-3000:]
  name = '%s-tpu-defaults-bfloat16-tf-%s' % (program, tf.__version__)
  with open(str(output_dir / (name + '.json'))) as f:
    result = json.load(f)
  assert [(run['global_step'], run['examples']) for run in result['runs']] == [(2, 110)]
  # The defaults of a TPU run, given explicitly to a run on this CPU, before the extra flags.
  assert ' --batch_size=1024 --eval_batch_size=1024 ' in result['run_command']
  assert result['run_command'].startswith('python %s.py --use_tpu=false' % program)
  assert result['run_command'].endswith('--precision=bfloat16')
