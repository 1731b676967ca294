"""Fixture for the port report (never run): a BERT-style optimizer module. create_optimizer builds the train_op
and wraps its optimizer in CrossShardOptimizer only when use_tpu is true."""
import tensorflow as tf


def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps, use_tpu):
  global_step = tf.train.get_or_create_global_step()
  learning_rate = tf.train.polynomial_decay(tf.constant(init_lr), global_step, num_train_steps, end_learning_rate=0.0)
  if num_warmup_steps:
    warmup_fraction = tf.cast(global_step, tf.float32) / float(num_warmup_steps)
    learning_rate = tf.where(global_step < num_warmup_steps, init_lr * warmup_fraction, learning_rate)

  optimizer = WeightDecayAdamOptimizer(learning_rate=learning_rate, weight_decay_rate=0.01)
  if use_tpu:
    optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)

  variables = tf.trainable_variables()
  grads = tf.gradients(loss, variables)
  grads, _ = tf.clip_by_global_norm(grads, clip_norm=1.0)
  train_op = optimizer.apply_gradients(zip(grads, variables), global_step=global_step)
  return tf.group(train_op, [global_step.assign(global_step + 1)])


class WeightDecayAdamOptimizer(tf.train.Optimizer):
  """Adam with decoupled weight decay (its update rule does not matter to the fixture)."""

  def __init__(self, learning_rate, weight_decay_rate=0.0, name='WeightDecayAdamOptimizer'):
    super(WeightDecayAdamOptimizer, self).__init__(False, name)
    self.learning_rate = learning_rate
    self.weight_decay_rate = weight_decay_rate

  def apply_gradients(self, grads_and_vars, global_step=None, name=None):
    updates = [param.assign_sub(self.learning_rate * (grad + self.weight_decay_rate * param))
               for grad, param in grads_and_vars if grad is not None]
    return tf.group(*updates, name=name)
