"""TensorBoard scalars for training, written through TPUEstimator's host_call.

TPU rule 7 (summaries on the host): summary ops cannot run inside the TPU computation.
TPUEstimatorSpec.host_call ships tensors out of the device (outfeed) and calls a function on the
host CPU, which writes them with TF 2's summary API (`tf.compat.v2.summary`). With use_tpu=False
TPUEstimator calls the same function itself, so CPU and TPU share one code path.

Tags: `train/<name>` (train/loss, train/learning_rate), apart from an evaluation's (`accuracy`,
`loss`, `mean_loss` in <model_dir>/eval_<split>). Every training step is written, or every n-th of a
loop with --host_call_every_n_steps. Events are flushed every `flush_every_steps` steps and at the
end of every train() call; mnist_tpu.py flushes once per loop on a TPU (on gs:// every flush uploads
the events file again) and every few steps on the CPU (measured here: +150 MB peak memory with 100
pending events, nothing with 10).
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
