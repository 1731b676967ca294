"""model_fn and metric_fn for TPUEstimator.

`model_fn_builder` closes over the hyper-parameters (BERT's pattern), so nothing in here reads global flags and
the same function serves TPUEstimator on CPU, on TPU, and in tests.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu import summaries

IMAGE_KEY = 'image'
# Per-example weight feature: 1.0 for real examples, 0.0 for padding rows added to fill the last static batch.
WEIGHT_KEY = 'weight'


def metric_fn(labels, logits, weights=None):
  """Accuracy and mean cross-entropy; runs on the host CPU (TPUEstimatorSpec.eval_metrics).

  `weights` (optional, [batch] float) lets padded rows count zero, so evaluation over a padded split is exact.
  """
  predictions = tf.argmax(logits, axis=1, output_type=tf.int32)
  per_example_loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
  return {
      'accuracy': tf.metrics.accuracy(labels=labels, predictions=predictions, weights=weights),
      # 'loss' is taken: Estimator reports the mean of the per-batch losses under that name.
      'mean_loss': tf.metrics.mean(per_example_loss, weights=weights),
  }


def learning_rate_schedule(initial_rate, decay_steps, decay_rate):
  """Exponentially decayed learning rate, staircase-free, driven by the global step."""
  return tf.train.exponential_decay(
      initial_rate, tf.train.get_global_step(), decay_steps=decay_steps, decay_rate=decay_rate)


def model_fn_builder(learning_rate, decay_steps, decay_rate, summary_dir=None,
                     summary_flush_steps=summaries.DEFAULT_FLUSH_STEPS, network=model.mnist_cnn):
  """Returns a TPUEstimator model_fn(features, labels, mode, params) with these optimisation settings.

  `network(images, training)` returns the logits; it is the shared model.mnist_cnn unless a caller (the
  benchmark's levers) passes a variant of it.

  With `summary_dir` (normally the model_dir), training writes the loss and the learning rate of every step there
  for TensorBoard, through host_call (see summaries.py), flushing them every `summary_flush_steps` steps.
  """

  def model_fn(features, labels, mode, params):
    """Builds the TRAIN, EVAL or PREDICT graph; `params` comes from TPUEstimator (use_tpu, batch_size)."""
    # TPUEstimator sets params['use_tpu'] True only when the graph really runs on TPU cores.
    use_tpu = params.get('use_tpu', False)
    images = features[IMAGE_KEY] if isinstance(features, dict) else features
    logits = network(images, training=(mode == tf.estimator.ModeKeys.TRAIN))

    if mode == tf.estimator.ModeKeys.PREDICT:
      predictions = {
          'class_ids': tf.argmax(logits, axis=1, output_type=tf.int32),
          'probabilities': tf.nn.softmax(logits),
      }
      return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, predictions=predictions)

    if mode == tf.estimator.ModeKeys.EVAL:
      # Padding rows (weight 0) must not count in the loss either; the weighted mean is over real rows only.
      weights = features.get(WEIGHT_KEY, 1.0) if isinstance(features, dict) else 1.0
      loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits, weights=weights)
      # eval_metrics replaces Estimator's eval_metric_ops: metric ops cannot run on the TPU, so TPUEstimator
      # ships these batch-major tensors to the host and calls metric_fn there. Passing them by name (a dict)
      # lets the optional weights be left out: a list must match metric_fn's arity exactly.
      metric_args = {'labels': labels, 'logits': logits}
      if isinstance(features, dict) and WEIGHT_KEY in features:
        metric_args['weights'] = features[WEIGHT_KEY]
      return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, eval_metrics=(metric_fn, metric_args))

    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    global_step = tf.train.get_global_step()
    # The step this update starts from (0 for the first one), read before the update below increments it, so the
    # loss and learning rate written for step s are the ones of the update from s to s + 1. (TPUEstimator's global
    # step is a resource variable, so the read is a snapshot, not an alias of the buffer the update changes.)
    step = global_step.read_value()
    rate = learning_rate_schedule(learning_rate, decay_steps, decay_rate)
    optimizer = tf.train.AdamOptimizer(rate)
    if use_tpu:
      # Each TPU core computes gradients on its own shard of the batch; CrossShardOptimizer all-reduces them
      # (CrossReplicaSum) before applying. Off TPU that op has no kernel, hence the condition.
      optimizer = tf.tpu.CrossShardOptimizer(optimizer)
    with tf.control_dependencies([step]):
      train_op = optimizer.minimize(loss, global_step=global_step)
    host_call = None
    if summary_dir:
      host_call = summaries.host_call(summary_dir, step, {'loss': loss, 'learning_rate': rate},
                                      flush_every_steps=summary_flush_steps)
    return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, host_call=host_call)

  return model_fn
