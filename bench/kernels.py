"""Why P3 is missed on stock TF 1.15.5: the FLOP rate of each kernel a training step of the CNN runs, next to
the rearrangements of bench/cpu_gradients.py and the 2048² matmul ceiling. Prints a markdown table.

  python -m bench.kernels [--runs=20]

Shapes are those of a batch-128 step: the second convolution ([128, 14, 14, 32] * [5, 5, 32, 64], 'same') and
the first dense layer ([128, 3136] x [3136, 1024]); every row of a group does the same arithmetic.
"""


import tensorflow.compat.v1 as tf
from absl import app
from absl import flags

from bench import machine
from bench import matmul

flags.DEFINE_integer('runs', 20, 'Timed runs per kernel.', lower_bound=1)
FLAGS = flags.FLAGS

BATCH, SIDE, CHANNELS, FILTERS, KERNEL = 128, 14, 32, 64, 5
CONV_FLOPS = 2 * BATCH * SIDE * SIDE * KERNEL * KERNEL * CHANNELS * FILTERS
UNITS_IN, UNITS_OUT = 3136, 1024
DENSE_FLOPS = 2 * BATCH * UNITS_IN * UNITS_OUT
STRIDE_1 = [1, 1, 1, 1]
IMAGES = [BATCH, SIDE, SIDE, CHANNELS]
OUTPUTS = [BATCH, SIDE, SIDE, FILTERS]
PADDED_BATCH_AS_CHANNELS = [CHANNELS, SIDE + KERNEL - 1, SIDE + KERNEL - 1, BATCH]

# (group, kernel, build(*operands), operand shapes, FLOPs per run)
KERNELS = [
    ('conv forward', 'Conv2D', lambda x, w: tf.nn.conv2d(x, w, STRIDE_1, 'SAME'),
     [IMAGES, [KERNEL, KERNEL, CHANNELS, FILTERS]], CONV_FLOPS),
    ('conv input gradient', 'Conv2DBackpropInput (what tf.gradients uses)',
     lambda dy, w: tf.nn.conv2d_backprop_input(IMAGES, w, dy, STRIDE_1, 'SAME'),
     [OUTPUTS, [KERNEL, KERNEL, CHANNELS, FILTERS]], CONV_FLOPS),
    ('conv input gradient', "Conv2D with the flipped kernel (cpu_gradients)",
     lambda dy, w: tf.nn.conv2d(dy, w, STRIDE_1, 'SAME'), [OUTPUTS, [KERNEL, KERNEL, FILTERS, CHANNELS]],
     CONV_FLOPS),
    ('conv kernel gradient', 'Conv2DBackpropFilter (what tf.gradients uses)',
     lambda x, dy: tf.nn.conv2d_backprop_filter(x, [KERNEL, KERNEL, CHANNELS, FILTERS], dy, STRIDE_1, 'SAME'),
     [IMAGES, OUTPUTS], CONV_FLOPS),
    ('conv kernel gradient', "'valid' Conv2D, batch as channels (cpu_gradients)",
     lambda x, dy: tf.nn.conv2d(x, dy, STRIDE_1, 'VALID'),
     [PADDED_BATCH_AS_CHANNELS, [SIDE, SIDE, BATCH, FILTERS]], CONV_FLOPS),
    ('dense forward', 'MatMul', tf.matmul, [[BATCH, UNITS_IN], [UNITS_IN, UNITS_OUT]], DENSE_FLOPS),
    ('dense input gradient', 'MatMul transpose_b=True (what tf.gradients uses)',
     lambda dy, w: tf.matmul(dy, w, transpose_b=True), [[BATCH, UNITS_OUT], [UNITS_IN, UNITS_OUT]], DENSE_FLOPS),
    ('dense input gradient', '(W . dy^T)^T (cpu_gradients)',
     lambda dy, w: tf.transpose(tf.matmul(w, dy, transpose_b=True)), [[BATCH, UNITS_OUT], [UNITS_IN, UNITS_OUT]],
     DENSE_FLOPS),
    ('dense kernel gradient', 'MatMul transpose_a=True (what tf.gradients uses)',
     lambda x, dy: tf.matmul(x, dy, transpose_a=True), [[BATCH, UNITS_IN], [BATCH, UNITS_OUT]], DENSE_FLOPS),
    ('ceiling', '2048 x 2048 MatMul', tf.matmul, [[2048, 2048], [2048, 2048]], 2 * 2048 ** 3),
]


def main(argv):
  del argv
  tf.logging.set_verbosity(tf.logging.ERROR)
  config = machine.session_config()
  print('TensorFlow %s, %s, load average %s' % (tf.__version__, machine.cpu_model(), machine.load_average()))
  print('| step part | kernel | GFLOP/s | GFLOP/CPU-s |')
  print('|---|---|---|---|')
  for group, kernel, build, shapes, flops_per_run in KERNELS:
    window = matmul.op_rate(build, shapes, flops_per_run, FLAGS.runs, config)
    print('| %s | %s | %.0f | %.0f |' % (group, kernel, window.amount / window.wall / 1e9,
                                         window.amount / window.cpu / 1e9), flush=True)


if __name__ == '__main__':
  app.run(main)
