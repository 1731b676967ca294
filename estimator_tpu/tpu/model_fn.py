"""model_fn builders for the networks of model.py: the graph of one mode, TRAIN, EVAL or PREDICT.

estimator/model_fn.py is the plain Estimator's (mnist.py), tpu/model_fn.py TPUEstimator's
(mnist_tpu.py). `diff` the two: each difference carries a numbered TPU rule: estimator_tpu/rules.py,
docs/MIGRATION.md.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model
# TPU rule 7 (summaries on the host): host_call writes TensorBoard's summaries on the host.
from estimator_tpu.tpu import host_call as host_call_lib

MODE = tf.estimator.ModeKeys


# TPU rule 7 (summaries on the host): host_call writes them into summary_dir (the model_dir).
def model_fn_builder(learning_rate, decay_steps, decay_rate, schedule=model.EXPONENTIAL,
                     summary_dir=None, summary_flush_steps=host_call_lib.DEFAULT_FLUSH_STEPS,
                     # TPU rule 20 (bfloat16): `precision` BFLOAT16 computes in bfloat16.
                     precision=model.FLOAT32,
                     network=model.mnist_cnn):
  """Returns model_fn with these optimisation settings (model.learning_rate_schedule) for `network`
  (model.network: the CNN on MNIST by default); it reads no flags."""

  # TPU rule 3 (params): TPUEstimator passes params['use_tpu'], true only when the graph really runs
  # on TPU cores, and params['batch_size'], the per-core batch on a TPU.
  def model_fn(features, labels, mode, params):
    # TPU rule 20 (bfloat16): float32 variables and logits, the network in `precision`.
    logits = network(features[model.IMAGE_KEY], training=(mode == MODE.TRAIN),
                     precision=precision)
    if mode == MODE.PREDICT:
      # TPU rule 5 (TPUEstimatorSpec): TPUEstimator rebuilds parts of the spec on the host.
      return tf.estimator.tpu.TPUEstimatorSpec(mode, predictions=model.predictions(logits))

    # TPU rule 9 (steps): rows that pad the last evaluation batch to full size come with weight 0
    # (tpu/input_fn.py): they count in neither the loss nor the metrics.
    weights = model.example_weights(features)
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits, **weights)
    if mode == MODE.EVAL:
      # TPU rule 5 (TPUEstimatorSpec): metric ops cannot run on the TPU; TPUEstimator ships these
      # batch-major tensors to the host and calls metric_fn there.
      metric_tensors = dict(labels=labels, logits=logits, **weights)
      return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss,
                                               eval_metrics=(model.metric_fn, metric_tensors))

    # TPU rule 7 (summaries on the host): the step this update starts from, read before the update
    # increments it, labels what host_call writes for the update.
    step = tf.train.get_global_step().read_value()
    rate = model.learning_rate_schedule(learning_rate, decay_steps, decay_rate, schedule)
    optimizer = tf.train.AdamOptimizer(rate)
    # TPU rule 6 (gradient all-reduce): each core has its shard's gradients; CrossShardOptimizer
    # averages them over the cores (CrossReplicaSum). It has no kernel off the TPU, hence the test.
    if params.get('use_tpu'):
      optimizer = tf.tpu.CrossShardOptimizer(optimizer)
    with tf.control_dependencies([step]):
      train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    # TPU rule 7 (summaries on the host): summary ops cannot run on the TPU; host_call sends these
    # tensors to the host, where its function writes them.
    host_call = host_call_lib.host_call(summary_dir, step, {'loss': loss, 'learning_rate': rate},
                                        summary_flush_steps)
    return tf.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                             host_call=host_call)

  return model_fn
