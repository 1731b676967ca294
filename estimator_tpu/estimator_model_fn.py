"""model_fn for the plain tf.estimator.Estimator (mnist.py): the starting point of the TPU port.

Read it next to model_fn.py. Same network (model.mnist_cnn), same loss, same metric_fn, same optimiser and
learning-rate schedule; what differs is exactly what TPUEstimator needs, and each difference says which TPU rule
it is about. Nothing in here reads global flags either.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.model_fn import IMAGE_KEY
from estimator_tpu.model_fn import learning_rate_schedule
from estimator_tpu.model_fn import metric_fn

LEARNING_RATE_SUMMARY = 'learning_rate'


def model_fn_builder(learning_rate, decay_steps, decay_rate):
  """Returns an Estimator model_fn(features, labels, mode) with these optimisation settings."""

  # TPU rule (params): TPUEstimator's model_fn also takes `params`, where TPUEstimator puts 'use_tpu' and the
  # per-core 'batch_size'. A plain Estimator has nothing to put there, so this model_fn does without.
  def model_fn(features, labels, mode):
    """Builds the TRAIN, EVAL or PREDICT graph."""
    images = features[IMAGE_KEY] if isinstance(features, dict) else features
    logits = model.mnist_cnn(images, training=(mode == tf.estimator.ModeKeys.TRAIN))

    if mode == tf.estimator.ModeKeys.PREDICT:
      predictions = {
          'class_ids': tf.argmax(logits, axis=1, output_type=tf.int32),
          'probabilities': tf.nn.softmax(logits),
      }
      # TPU rule (spec): TPUEstimatorSpec instead of EstimatorSpec, because TPUEstimator rebuilds parts of the
      # spec (metrics, summaries, scaffold) outside the TPU computation and so needs them as functions.
      return tf.estimator.EstimatorSpec(mode=mode, predictions=predictions)

    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)

    if mode == tf.estimator.ModeKeys.EVAL:
      # TPU rule (metrics on the host): here the metric ops are built right in the graph. On a TPU they cannot
      # run on the device, so model_fn.py hands `eval_metrics=(metric_fn, tensors)` to TPUEstimator instead.
      return tf.estimator.EstimatorSpec(mode=mode, loss=loss, eval_metric_ops=metric_fn(labels, logits))

    rate = learning_rate_schedule(learning_rate, decay_steps, decay_rate)
    # TPU rule (summaries on the host): a summary op here would be placed inside the TPU computation, where it
    # cannot run; model_fn.py routes its summaries through `host_call`. (Estimator adds the 'loss' summary.)
    tf.summary.scalar(LEARNING_RATE_SUMMARY, rate)
    # TPU rule (gradient all-reduce): no CrossShardOptimizer. One device computes the whole batch's gradients;
    # on a TPU every core sees only its shard, and model_fn.py wraps the optimiser to sum across cores.
    optimizer = tf.train.AdamOptimizer(rate)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)

  return model_fn
