"""Tries the CPU levers on the plain Session loop and prints a markdown table (examples/s per wall and CPU second).

  python -m bench.levers --data_dir=DIR                                  # threads, batch sizes, XLA, gradients
  TF_ENABLE_ONEDNN_OPTS=0 python -m bench.levers --data_dir=DIR --settings=default   # TF 2: oneDNN off
  TF_XLA_FLAGS=--tf_xla_cpu_global_jit python -m bench.levers --data_dir=DIR --settings=default,xla

Each setting trains the project's model_fn on its input_fn (session_loop.train_rate, start-up excluded) and times
the 2048² matmul with the same session config, so every line has its own P3, per wall second (the target's
definition) and per CPU second (the robust one on a shared machine). `cpu_gradients` trains the same network with
the gradient arrangements of bench/cpu_gradients.py. Environment levers (oneDNN, OpenMP, XLA's CPU JIT) must be
set before TensorFlow starts, hence on the command line. bench/results/levers/ holds a run of every lever.
"""
import contextlib
import os
import sys


import tensorflow.compat.v1 as tf
from absl import app
from absl import flags

from bench import cpu_gradients
from bench import flops
from bench import machine
from bench import matmul
from bench import session_loop
from estimator_tpu.tpu import input_fn as tpu_input
from estimator_tpu.tpu import model_fn as model_fn_lib
from flags import data as data_flags

FLAGS = flags.FLAGS
# The same network with the convolution and dense gradients rearranged onto TF 1.15's fast kernels.
CPU_GRADIENTS = cpu_gradients.rearranged_layers
# name: (batch size, intra-op threads, inter-op threads, XLA JIT, context the graph is built in)
SETTINGS = {
    'default': (128, 0, 0, False, contextlib.nullcontext),
    'intra2_inter1': (128, 2, 1, False, contextlib.nullcontext),
    'intra1_inter1': (128, 1, 1, False, contextlib.nullcontext),
    'batch64': (64, 0, 0, False, contextlib.nullcontext),
    'batch256': (256, 0, 0, False, contextlib.nullcontext),
    'batch512': (512, 0, 0, False, contextlib.nullcontext),
    'xla': (128, 0, 0, True, contextlib.nullcontext),
    'cpu_gradients': (128, 0, 0, False, CPU_GRADIENTS),
    'xla_cpu_gradients': (128, 0, 0, True, CPU_GRADIENTS),
}

LEVER_ENV = ('TF_ENABLE_ONEDNN_OPTS', 'TF_XLA_FLAGS')

flags.DEFINE_list('settings', sorted(SETTINGS), 'Settings to try, from: %s.' % ', '.join(sorted(SETTINGS)))
flags.DEFINE_integer('steps', 30, 'Timed steps per setting at batch 128 (scaled to keep examples equal).',
                     lower_bound=1)
flags.DEFINE_integer('repeats', 1, 'Passes over all settings (interleaved, against load drift).', lower_bound=1)


def session_config(intra, inter, xla):
  config = machine.session_config(intra, inter)
  if xla:
    # Compiles the graph with XLA; on CPU TensorFlow also needs TF_XLA_FLAGS=--tf_xla_cpu_global_jit.
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
  return config


def measure(name, train_flops, input_fn):
  batch, intra, inter, xla, graph_context = SETTINGS[name]
  config = session_config(intra, inter, xla)
  model_fn = model_fn_lib.model_fn_builder(learning_rate=1e-3, decay_steps=1000, decay_rate=0.5)
  with graph_context():
    train = session_loop.train_rate(model_fn, input_fn, batch, 10, max(10, FLAGS.steps * 128 // batch), config)
  ceiling = matmul.matmul_rate(2048, 5, config)
  model_rate = train_flops * train.amount
  return '| %s | %d | %.0f | %.0f | %.2f | %.1f | %.1f | %.3f | %.3f |' % (
      name, batch, train.amount / train.wall, train.amount / train.cpu, train.cpu / train.wall,
      model_rate / train.cpu / 1e9, ceiling.amount / ceiling.cpu / 1e9,
      (model_rate / train.wall) / (ceiling.amount / ceiling.wall),
      (model_rate / train.cpu) / (ceiling.amount / ceiling.cpu))


def main(argv):
  del argv
  unknown = set(FLAGS.settings) - set(SETTINGS)
  if unknown:
    sys.stderr.write('error: unknown --settings %s. Fix: pick from %s.\n' % (sorted(unknown), sorted(SETTINGS)))
    sys.exit(1)
  tf.logging.set_verbosity(tf.logging.ERROR)
  input_fn = tpu_input.train_input_fn_builder(FLAGS.data_dir)
  train_flops = flops.analytic_train_flops()[0]
  print('TensorFlow %s, load average %s; env: %s' % (tf.__version__, machine.load_average(), ' '.join(
      '%s=%s' % (k, v) for k, v in sorted(os.environ.items()) if k in LEVER_ENV or k.startswith(('KMP_', 'OMP_')))))
  print('| setting | batch | ex/s | ex/CPU-s | cores busy | model GFLOP/CPU-s | matmul GFLOP/CPU-s | P3 | '
        'P3 per CPU-s |')
  print('|---|---|---|---|---|---|---|---|---|')
  for _ in range(FLAGS.repeats):
    for name in FLAGS.settings:
      print(measure(name, train_flops, input_fn), flush=True)


if __name__ == '__main__':
  data_flags.define_data_flags()
  app.run(main)
