"""model_fn for TPUEstimator (mnist_tpu.py): where the TPU port arrives.

Read it next to estimator_tpu/estimator/model_fn.py. Same network (model.mnist_cnn), same loss, same metric_fn, same
optimiser and learning-rate schedule; every difference is a TPU rule, named in a comment. Nothing in here reads
global flags, so the same function serves TPUEstimator on CPU, on TPU, and in tests.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.model import IMAGE_KEY
from estimator_tpu.model import WEIGHT_KEY
from estimator_tpu.tpu import host_call as host_call_lib


def model_fn_builder(learning_rate, decay_steps, decay_rate, schedule=model.EXPONENTIAL, summary_dir=None,
                     summary_flush_steps=host_call_lib.DEFAULT_FLUSH_STEPS):
  """Returns a TPUEstimator model_fn(features, labels, mode, params) with these optimisation settings.

  With `summary_dir` (normally the model_dir), training writes the loss and the learning rate of every step there
  for TensorBoard, through host_call (see host_call.py), flushing them every `summary_flush_steps` steps.
  """

  def model_fn(features, labels, mode, params):
    """Builds the TRAIN, EVAL or PREDICT graph."""
    # TPU rule (params): TPUEstimator passes params['use_tpu'] -- True only when the graph really runs on TPU
    # cores -- and the per-core params['batch_size'].
    use_tpu = params.get('use_tpu', False)
    images = features[IMAGE_KEY] if isinstance(features, dict) else features
    logits = model.mnist_cnn(images, training=(mode == tf.estimator.ModeKeys.TRAIN))

    if mode == tf.estimator.ModeKeys.PREDICT:
      # TPU rule (spec): TPUEstimatorSpec, whose metrics and summaries are functions TPUEstimator calls on the host.
      return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, predictions=model.predictions(logits))

    if mode == tf.estimator.ModeKeys.EVAL:
      # TPU rule (exact evaluation): every batch is full, the last one padded with weight-0 rows (tpu/input_fn.py);
      # they must count in neither loss nor metrics: the weighted mean is over real rows only.
      weights = features.get(WEIGHT_KEY, 1.0) if isinstance(features, dict) else 1.0
      loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits, weights=weights)
      # TPU rule (metrics on the host): eval_metrics replaces eval_metric_ops; metric ops cannot run on the TPU, so
      # TPUEstimator ships these batch-major tensors to the host and calls metric_fn there. Passing them by name (a
      # dict) lets the optional weights be left out: a list must match metric_fn's arity exactly.
      metric_args = {'labels': labels, 'logits': logits}
      if isinstance(features, dict) and WEIGHT_KEY in features:
        metric_args['weights'] = features[WEIGHT_KEY]
      return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, eval_metrics=(model.metric_fn, metric_args))

    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    global_step = tf.train.get_global_step()
    # The step this update starts from (0 for the first one), read before the update below increments it, so the
    # loss and learning rate written for step s are the ones of the update from s to s + 1. (TPUEstimator's global
    # step is a resource variable, so the read is a snapshot, not an alias of the buffer the update changes.)
    step = global_step.read_value()
    rate = model.learning_rate_schedule(learning_rate, decay_steps, decay_rate, schedule)
    optimizer = tf.train.AdamOptimizer(rate)
    if use_tpu:
      # TPU rule (gradient all-reduce): each TPU core computes gradients on its own shard of the batch;
      # CrossShardOptimizer combines them across the cores (CrossReplicaSum) before applying. Its default
      # reduction, MEAN, first scales each core's loss by 1/num_shards, so the update follows the mean gradient over
      # the global batch and the learning rate keeps its meaning at that batch (tensorflow/python/tpu/
      # tpu_optimizer.py). Off TPU CrossReplicaSum has no kernel, hence the condition.
      optimizer = tf.tpu.CrossShardOptimizer(optimizer)
    with tf.control_dependencies([step]):
      train_op = optimizer.minimize(loss, global_step=global_step)
    # TPU rule (summaries on the host): the loss and learning rate leave the device every step, or every
    # TPUConfig.experimental_host_call_every_n_steps (host_call.py). On TPU, the `loss` Estimator logs and returns
    # is core 0's (tpu_estimator.py: outputs_from_all_shards=False); host_call writes the mean over the cores.
    host_call = None
    if summary_dir:
      host_call = host_call_lib.host_call(summary_dir, step, {'loss': loss, 'learning_rate': rate},
                                          flush_every_steps=summary_flush_steps)
    return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, host_call=host_call)

  return model_fn

