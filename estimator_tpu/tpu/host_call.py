"""TensorBoard scalars for training, written through TPUEstimator's host_call.

Summary ops cannot run inside the TPU computation (they have no XLA kernel).
TPUEstimatorSpec.host_call ships tensors out of the device every step (outfeed) and calls a function
on the host CPU, which writes them. With use_tpu=False, TPUEstimator calls the same function itself
in a session hook, so CPU and TPU share one code path.

Contrib-free: the host function used to be written with `tf.contrib.summary`; that became the TF2
summary API, `tf.compat.v2.summary` (a file writer resource plus summary ops, which TPUEstimator's
hooks initialise before the first step and flush at the end of every train() call).

Tags: `train/<name>` (train/loss, train/learning_rate), so that the curves of training are named for
what they are and stay apart from an evaluation's (`accuracy`, `loss`, `mean_loss` in
<model_dir>/eval_<split>).

Cadence: by default every training step is written. On TPU, host_call's tensors leave the device on
every step of every iterations_per_loop loop (the outfeed sits inside the training step; only the
host's flush waits for the loop boundary), or only on every n-th step of a loop with
TPUConfig(experimental_host_call_every_n_steps=n) (--host_call_every_n_steps;
tensorflow_estimator/python/estimator/tpu/tpu_estimator.py, _OutfeedHostCall). Events are buffered
and flushed every `flush_every_steps` steps, and at the end of every train() call. The right buffer
depends on the device (mnist_tpu.py chooses): on gs:// every flush uploads the events file again, so
a TPU run flushes once per loop; on CPU, events held in memory between the large per-step activation
buffers fragment the heap (measured here: +150 MB peak with 100 pending events, nothing with 10).
"""
import tensorflow.compat.v1 as tf
import tensorflow.compat.v2 as tf2  # the TF2 summary API, also present in TF 1.15

DEFAULT_FLUSH_STEPS = 100
TAG_PREFIX = 'train/'


def host_call_fn(summary_dir, max_queue):
  """Returns fn(step, **scalars) that writes each scalar at `step`, tagged TAG_PREFIX + its name;
  for TPUEstimatorSpec.host_call.

  Every tensor arrives with a leading dimension: one entry per TPU core (TPUEstimator concatenates
  the cores' outfeeds), one entry on CPU. The step is the same on all cores; per-core scalars (e.g.
  each core's loss over its equal share of the batch) are averaged into the global value.
  """

  def host_call(step, **scalars):
    with tf2.summary.create_file_writer(summary_dir, max_queue=max_queue).as_default():
      with tf2.summary.record_if(True):
        for name in sorted(scalars):
          tf2.summary.scalar(TAG_PREFIX + name, tf.reduce_mean(scalars[name]), step=step[0])
    return tf.summary.all_v2_summary_ops()

  return host_call


def host_call(summary_dir, step, scalars, flush_every_steps=DEFAULT_FLUSH_STEPS):
  """(fn, tensors) for TPUEstimatorSpec.host_call: writes the `scalars` dict of scalar tensors at
  int64 `step` into `summary_dir` (the model_dir), flushing every `flush_every_steps` steps; None
  without a summary_dir."""
  if not summary_dir:
    return None
  tensors = {name: tf.reshape(tf.cast(value, tf.float32), [1]) for name, value in scalars.items()}
  # host_call tensors need a leading (batch) dimension: scalars cannot be concatenated across cores.
  tensors['step'] = tf.reshape(tf.cast(step, tf.int64), [1])
  return host_call_fn(summary_dir, max_queue=flush_every_steps * len(scalars)), tensors
