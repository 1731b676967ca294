"""P3's ceiling: the FLOP rate of a dense float32 matmul (2048 x 2048 by default) in TensorFlow on this CPU."""
import tensorflow.compat.v1 as tf

from bench import timing


def matmul_rate(size, runs, config=None):
  """Returns the timing.Window (amount: FLOPs) of `runs` timed [size, size] x [size, size] float32 products.

  Each product counts 2 * size**3 FLOPs (a multiply and an add per term).

  The operands are variables, so nothing is constant-folded; the fetch is the sum of the product (size**2 adds,
  a 1/size fraction of the work, left uncounted) so the 16 MiB result is not copied into Python.
  """
  with tf.Graph().as_default():
    a = tf.Variable(tf.random.normal([size, size], dtype=tf.float32))
    b = tf.Variable(tf.random.normal([size, size], dtype=tf.float32))
    product_sum = tf.reduce_sum(tf.matmul(a, b))
    with tf.Session(config=config) as sess:
      sess.run(tf.global_variables_initializer())
      sess.run(product_sum)  # untimed: first-run allocations and kernel selection
      start = timing.now()
      for _ in range(runs):
        sess.run(product_sum)
      end = timing.now()
  return timing.window(2.0 * size ** 3 * runs, start, end)
