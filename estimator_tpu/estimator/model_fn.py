"""model_fn for the plain tf.estimator.Estimator (mnist.py): where the TPU port starts.

Read it next to estimator_tpu/tpu/model_fn.py. Same network (model.mnist_cnn), same loss, same metric_fn, same
optimiser and learning-rate schedule; every difference is a TPU rule, named in a comment. Nothing in here reads
global flags either.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.model import IMAGE_KEY

LEARNING_RATE_SUMMARY = 'learning_rate'


def model_fn_builder(learning_rate, decay_steps, decay_rate, schedule=model.EXPONENTIAL):
  """Returns an Estimator model_fn(features, labels, mode) with these optimisation settings."""

  # TPU rule (params): TPUEstimator's model_fn also takes `params`, where TPUEstimator puts 'use_tpu' and the
  # per-core 'batch_size'. A plain Estimator has nothing to put there, so this model_fn does without.
  def model_fn(features, labels, mode):
    """Builds the TRAIN, EVAL or PREDICT graph."""
    images = features[IMAGE_KEY] if isinstance(features, dict) else features
    logits = model.mnist_cnn(images, training=(mode == tf.estimator.ModeKeys.TRAIN))

    if mode == tf.estimator.ModeKeys.PREDICT:
      # TPU rule (spec): TPUEstimatorSpec instead of EstimatorSpec, because TPUEstimator rebuilds parts of the
      # spec (metrics, summaries, scaffold) outside the TPU computation and so needs them as functions.
      return tf.estimator.EstimatorSpec(mode=mode, predictions=model.predictions(logits))

    if mode == tf.estimator.ModeKeys.EVAL:
      # TPU rule (exact evaluation): no weights. Estimator reads the split to its end, short last batch included;
      # the TPU input pads the last batch with weight-0 rows, which the TPU model_fn leaves out of loss and metrics.
      loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
      # TPU rule (metrics on the host): here the metric ops are built right in the graph. On a TPU they cannot
      # run on the device, so the TPU model_fn hands `eval_metrics=(metric_fn, tensors)` to TPUEstimator instead.
      return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=model.metric_fn(labels, logits))

    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    rate = model.learning_rate_schedule(learning_rate, decay_steps, decay_rate, schedule)
    # TPU rule (gradient all-reduce): no CrossShardOptimizer. One device computes the whole batch's gradients;
    # on a TPU every core sees only its shard, and the TPU model_fn wraps the optimiser to combine the cores'.
    optimizer = tf.train.AdamOptimizer(rate)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    # TPU rule (summaries on the host): a summary op here would be placed inside the TPU computation, where it
    # cannot run; the TPU model_fn routes its summaries through `host_call`. (Estimator adds the 'loss' summary.)
    tf.summary.scalar(LEARNING_RATE_SUMMARY, rate)
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)

  return model_fn
