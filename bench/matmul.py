"""P3's ceiling: the FLOP rate of a dense float32 matmul (2048 x 2048 by default) in TensorFlow on this CPU; and
the timing of any single op on random operands, which bench/kernels.py uses to compare kernels with it."""
import tensorflow.compat.v1 as tf

from bench import timing


def op_rate(build, operand_shapes, flops_per_run, runs, config=None):
  """Returns the timing.Window (amount: FLOPs) of `runs` timed runs of build(*operands).

  The operands are float32 variables of `operand_shapes`, so nothing is constant-folded; the fetch is the sum of
  the result (a small fraction of the work, left uncounted) so the result is not copied into Python.
  """
  with tf.Graph().as_default():
    operands = [tf.Variable(tf.random.normal(shape, dtype=tf.float32)) for shape in operand_shapes]
    result_sum = tf.reduce_sum(build(*operands))
    with tf.Session(config=config) as sess:
      sess.run(tf.global_variables_initializer())
      sess.run(result_sum)  # untimed: first-run allocations and kernel selection
      start = timing.now()
      for _ in range(runs):
        sess.run(result_sum)
      end = timing.now()
  return timing.window(float(flops_per_run) * runs, start, end)


def matmul_rate(size, runs, config=None):
  """Returns the timing.Window (amount: FLOPs) of `runs` timed [size, size] x [size, size] float32 products.

  Each product counts 2 * size**3 FLOPs (a multiply and an add per term).
  """
  return op_rate(tf.matmul, [[size, size], [size, size]], 2.0 * size ** 3, runs, config)
