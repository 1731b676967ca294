"""model_fn builders for the networks of model.py: the graph of one mode, TRAIN, EVAL or PREDICT.

estimator/model_fn.py is the plain Estimator's (mnist.py), tpu/model_fn.py TPUEstimator's
(mnist_tpu.py). `diff` the two: each difference carries a numbered TPU rule: estimator_tpu/rules.py,
docs/MIGRATION.md.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model

MODE = tf.estimator.ModeKeys


def model_fn_builder(learning_rate, decay_steps, decay_rate, schedule=model.EXPONENTIAL,
                     network=model.mnist_cnn):
  """Returns model_fn with these optimisation settings (model.learning_rate_schedule) for `network`
  (model.network: the CNN on MNIST by default); it reads no flags."""

  # TPU rule 3 (params): a plain Estimator has nothing to put in params, so model_fn takes none.
  def model_fn(features, labels, mode):
    logits = network(features[model.IMAGE_KEY], training=(mode == MODE.TRAIN))
    if mode == MODE.PREDICT:
      # TPU rule 5 (TPUEstimatorSpec): a plain EstimatorSpec.
      return tf.estimator.EstimatorSpec(mode, predictions=model.predictions(logits))

    # TPU rule 9 (steps): no padding rows and no weights: the last evaluation batch is short
    # instead.
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == MODE.EVAL:
      # TPU rule 5 (TPUEstimatorSpec): the metric ops are built right here, in the model's graph.
      metric_ops = model.metric_fn(labels, logits)
      return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metric_ops)

    rate = model.learning_rate_schedule(learning_rate, decay_steps, decay_rate, schedule)
    optimizer = tf.train.AdamOptimizer(rate)
    # TPU rule 6 (gradient all-reduce): one device computes the gradients of the whole batch.
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    # TPU rule 7 (summaries on the host): a summary op inside model_fn (Estimator adds the loss's).
    tf.summary.scalar('learning_rate', rate)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

  return model_fn
