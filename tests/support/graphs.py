"""Graph-mode helpers: values the model's functions compute, read back in a session."""
import tensorflow.compat.v1 as tf

from estimator_tpu import model


def rates_at(steps, *schedule_args):
  """model.learning_rate_schedule evaluated at each global step."""
  with tf.Graph().as_default():
    global_step = tf.train.create_global_step()
    rate = model.learning_rate_schedule(*schedule_args)
    step = tf.placeholder(tf.int64, [])
    set_step = global_step.assign(step)
    with tf.Session() as session:
      rates = []
      for value in steps:
        session.run(set_step, {step: value})
        rates.append(session.run(rate))
      return rates
