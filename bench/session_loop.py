"""The baseline of P1: a plain tf.Session loop training the very same graph the TPUEstimator path trains.

It calls the project's own model_fn (so the CNN, loss, Adam and learning-rate schedule are identical) on the
project's own input_fn dataset, and runs the train op in a loop -- no Estimator, no hooks, no checkpoints.
"""
import tensorflow.compat.v1 as tf

from bench import timing


def build_train_graph(model_fn, input_fn, batch_size):
  """Returns (train_op, loss) of model_fn in TRAIN mode on input_fn's batches, in the default graph."""
  tf.train.get_or_create_global_step()
  params = {'batch_size': batch_size, 'use_tpu': False}
  features, labels = tf.data.make_one_shot_iterator(input_fn(params)).get_next()
  spec = model_fn(features, labels, tf.estimator.ModeKeys.TRAIN, params)
  return spec.train_op, spec.loss


def train_rate(model_fn, input_fn, batch_size, warmup_steps, measure_steps, config=None):
  """Trains warmup_steps + measure_steps steps; returns the timing.Window of the last measure_steps.

  Like the TPUEstimator measurement, the clock starts when step `warmup_steps` has finished, so graph
  construction, initialisation and the first steps are excluded from both loops in the same way.
  """
  with tf.Graph().as_default():
    train_op, loss = build_train_graph(model_fn, input_fn, batch_size)
    with tf.Session(config=config) as sess:
      sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
      for _ in range(warmup_steps):
        sess.run([train_op, loss])
      start = timing.now()
      for _ in range(measure_steps):
        sess.run([train_op, loss])
      end = timing.now()
  return timing.window(measure_steps * batch_size, start, end)
