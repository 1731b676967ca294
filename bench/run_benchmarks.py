"""Benchmarks the mnist_tpu training path on the local CPU and writes bench/results/tf-<version>.{json,md}.

  python -m bench.run_benchmarks [--data_dir=DIR]     # full run: tens of minutes on 2 cores
  python -m bench.run_benchmarks --smoke              # seconds, synthetic data (CI)
  bash bench/run_all.sh                               # full run under both TensorFlows, then summary.md

Phases (one process, in this order):
  accuracy    P4: train as mnist_tpu.py does, evaluate each checkpoint on the whole split, stop at
              --target_accuracy; then the process's peak RSS (nothing else has run yet).
  throughput  --rounds rounds, each timing: the 2048² matmul, the input pipeline, a plain tf.Session loop and the
              TPUEstimator path (the two loops in alternating order), so load drift on a shared machine affects
              every workload alike; P1-P3 are ratios of the totals over all rounds.

Every mnist_tpu.py flag is accepted with its usual default (--batch_size, --iterations, --learning_rate, ...),
so the measured path is the one users run. Only the local CPU is measured (--use_tpu defaults to false here).
"""
import datetime
import os
import shutil
import sys
import tempfile


import tensorflow.compat.v1 as tf
from absl import app
from absl import flags
from absl import logging

import mnist_tpu
from bench import bench_flags
from bench import estimator_loop
from bench import flops
from bench import machine
from bench import matmul
from bench import pipeline
from bench import report
from bench import session_loop
from bench import time_to_accuracy
from estimator_tpu import runner
from estimator_tpu.data import prepare
from estimator_tpu.data import records
from estimator_tpu.data import synthetic
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import input_fn as tpu_input
from flags import mnist_tpu as mnist_tpu_flags

FLAGS = flags.FLAGS
SMOKE_VALIDATION = 50  # validation images of the synthetic smoke data (data/synthetic.py writes 300 train)


def write_smoke_data(work_dir):
  """Tiny separable digits in the standard TFRecord layout (the test suite's generator)."""
  idx_dir, data_dir = os.path.join(work_dir, 'idx'), os.path.join(work_dir, 'data')
  synthetic.write_idx_dir(idx_dir)
  records.convert_idx_dir(idx_dir, data_dir, validation_size=SMOKE_VALIDATION)
  return data_dir


def build_estimator(model_dir):
  """mnist_tpu.py's training estimator, from the same flags."""
  return mnist_tpu.build_estimator(FLAGS, runner.Job(model_dir, None, None, None, runner.TRAIN))


def run_accuracy_phase(data_dir, batch_size, model_dir):
  records.require_split(data_dir, 'train')
  eval_path = records.require_split(data_dir, FLAGS.eval_split)
  num_eval = records.count_examples(eval_path)
  if num_eval % FLAGS.eval_batch_size:
    raise UserError('%d %s images are not a multiple of --eval_batch_size=%d, so evaluation would skip the last '
                    '%d.' % (num_eval, FLAGS.eval_split, FLAGS.eval_batch_size, num_eval % FLAGS.eval_batch_size),
                    'pick an --eval_batch_size that divides %d (e.g. 1000 for MNIST).' % num_eval)
  FLAGS.save_checkpoints_steps = FLAGS.eval_every_steps  # the accuracy phase evaluates each checkpoint
  estimator = build_estimator(model_dir)
  logging.info('Accuracy phase: until %.2f%% on %d %s images, evaluated every %d steps.',
               100 * FLAGS.target_accuracy, num_eval, FLAGS.eval_split, FLAGS.eval_every_steps)
  result = time_to_accuracy.time_to_accuracy(
      estimator, tpu_input.train_input_fn_builder(data_dir),
      tpu_input.eval_input_fn_builder(data_dir, FLAGS.eval_split, FLAGS.eval_batch_size,
                                      num_eval // FLAGS.eval_batch_size),
      eval_steps=num_eval // FLAGS.eval_batch_size, max_steps=FLAGS.train_steps,
      target=FLAGS.target_accuracy, max_seconds=60.0 * FLAGS.max_minutes)
  result.update({
      'eval_split': FLAGS.eval_split,
      # Every batch is full and together they cover the split, so the accuracy is over all of it: exact.
      'eval_examples': num_eval,
      'recipe': {name: FLAGS[name].value for name in (
          'learning_rate', 'lr_schedule', 'lr_decay_steps', 'lr_decay_rate', 'train_steps', 'eval_every_steps',
          'iterations', 'eval_batch_size')},
      'batch_size': batch_size,
      'peak_rss_mib': machine.peak_rss_mib(),
      'load_average_at_end': machine.load_average(),
  })
  return result


def measure_round(index, estimator, model_fn, train_input_fn, batch_size, examples_per_epoch, config):
  """Returns {kind: timing.Window} timing every workload once; the training loops swap order every round."""
  measured = {'matmul': matmul.matmul_rate(FLAGS.matmul_size, FLAGS.matmul_runs, config)}
  pipeline_rates = pipeline.pipeline_rates(train_input_fn, batch_size, examples_per_epoch,
                                           FLAGS.pipeline_warmup_batches, config)
  measured['pipeline_file'], measured['pipeline_cached'] = pipeline_rates['file'], pipeline_rates['cached']
  loops = [
      ('session', lambda: session_loop.train_rate(model_fn, train_input_fn, batch_size, FLAGS.warmup_steps,
                                                  FLAGS.measure_steps, config)),
      ('estimator', lambda: estimator_loop.train_rate(estimator, train_input_fn, batch_size, FLAGS.warmup_steps,
                                                      FLAGS.measure_steps)),
  ]
  for name, measure in (loops if index % 2 == 0 else loops[::-1]):
    measured[name] = measure()
  logging.info('Round %d: %s', index + 1, ', '.join(
      '%s %.4g/s (%.4g/CPU-s)' % (kind, w.amount / w.wall, w.amount / w.cpu) for kind, w in sorted(measured.items())))
  return measured


def run_throughput_phase(data_dir, batch_size, model_dir):
  train_path = records.require_split(data_dir, 'train')
  examples_per_epoch = records.count_examples(train_path)
  config = machine.session_config(FLAGS.intra_op_threads, FLAGS.inter_op_threads)
  model_fn = mnist_tpu.build_model_fn(FLAGS, None)
  train_input_fn = tpu_input.train_input_fn_builder(data_dir)
  # The real training path, TensorBoard host_call summaries included; the plain loop runs only the train op.
  estimator = build_estimator(model_dir)
  rounds = [measure_round(index, estimator, model_fn, train_input_fn, batch_size, examples_per_epoch, config)
            for index in range(FLAGS.rounds)]
  train_flops = flops.train_flops(model_fn, batch_size)
  rates = report.throughput_rates(rounds)
  return {
      'rates': rates,
      'ratios': report.all_ratios(rates, train_flops['per_example']),
      'rounds': [{kind: window._asdict() for kind, window in measured.items()} for measured in rounds],
      'flops': train_flops,
      'load_average_at_end': machine.load_average(),
  }


def run(work_dir):
  if FLAGS.use_tpu:
    raise UserError('the benchmarks measure the local CPU.', "drop --use_tpu (or pass --use_tpu=false --master='').")
  if FLAGS.smoke and not FLAGS['data_dir'].present:
    data_dir = write_smoke_data(work_dir)
  else:
    data_dir = FLAGS.data_dir
    # As mnist_tpu.py does: fetch and convert MNIST on first use.
    prepare.ensure_data(data_dir, FLAGS.source_dir, FLAGS.download_timeout, FLAGS.validation_size)
  batch_sizes.resolve(FLAGS, use_tpu=False)
  batch_size = FLAGS.batch_size
  model_base = FLAGS.model_dir or os.path.join(work_dir, 'models')
  result = {
      'date': datetime.datetime.now().strftime('%Y-%m-%d %H:%M'),
      'command': ' '.join(['python', '-m', 'bench.run_benchmarks'] + sys.argv[1:]),
      'smoke': FLAGS.smoke,
      'machine': machine.describe(),
      'data_dir': data_dir,
      'batch_size': batch_size,
      'iterations': FLAGS.iterations,
      'warmup_steps': FLAGS.warmup_steps,
      'measure_steps': FLAGS.measure_steps,
      'rounds': FLAGS.rounds,
      'matmul_size': FLAGS.matmul_size,
      'session_threads': {'intra_op': FLAGS.intra_op_threads, 'inter_op': FLAGS.inter_op_threads},
  }
  target_values = {}
  if 'accuracy' in FLAGS.phases:
    result['accuracy'] = run_accuracy_phase(data_dir, batch_size, os.path.join(model_base, 'accuracy'))
    accuracy = result['accuracy']
    target_values['p4_minutes'] = accuracy['training_seconds'] / 60.0 if accuracy['reached'] else None
  if 'throughput' in FLAGS.phases:
    throughput = run_throughput_phase(data_dir, batch_size, os.path.join(model_base, 'throughput'))
    result['throughput'] = {k: throughput[k] for k in ('rounds', 'load_average_at_end')}
    result.update({k: throughput[k] for k in ('rates', 'ratios', 'flops')})
    target_values.update({k: v for k, v in throughput['ratios']['wall'].items() if k in report.TARGETS})
  result['targets'] = report.target_checks(target_values)
  path = report.write_result(result, FLAGS.output_dir)
  logging.info('Wrote %s\n%s', path, report.markdown(result))


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  if FLAGS.smoke:
    bench_flags.apply_smoke_values()
  tf.logging.set_verbosity(tf.logging.WARN)  # the Estimator's per-step INFO lines would bury the results
  work_dir = tempfile.mkdtemp(prefix='estimator_tpu_bench-')
  try:
    run(work_dir)
  except UserError as e:
    sys.stderr.write('error: %s\n' % e)
    sys.exit(1)
  finally:
    shutil.rmtree(work_dir, ignore_errors=True)


def define_flags():
  mnist_tpu_flags.define_flags()
  bench_flags.define_bench_flags()
  FLAGS.set_default('use_tpu', False)
  FLAGS.set_default('master', '')
  FLAGS.set_default('eval_batch_size', batch_sizes.LOCAL_EVAL_BATCH_SIZE)  # the local CPU's default


if __name__ == '__main__':
  define_flags()
  app.run(main)
