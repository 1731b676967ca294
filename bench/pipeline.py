"""P2's numerator: the project's training input pipeline alone (TFRecord read, parse, batch), nothing else.

The training input_fn caches the serialized records after the first epoch, so the pipeline has two speeds:
the first epoch reads the file, later ones read memory. Both are measured; P2 uses the slower one.
"""
import tensorflow.compat.v1 as tf

from bench import timing


def batch_times(input_fn, batch_size, num_batches, config=None):
  """Pulls num_batches batches and returns the timing.Stamp at which each one arrived.

  The fetched op only groups the batch's tensors, so nothing is copied into Python: the pipeline does all its
  work (the whole element is produced by get_next) without a numpy conversion that training does not have.
  """
  with tf.Graph().as_default():
    dataset = input_fn({'batch_size': batch_size})
    next_batch = tf.group(*tf.nest.flatten(tf.data.make_one_shot_iterator(dataset).get_next()))
    with tf.Session(config=config) as sess:
      stamps = []
      for _ in range(num_batches):
        sess.run(next_batch)
        stamps.append(timing.now())
  return stamps


def pipeline_rates(input_fn, batch_size, examples_per_epoch, warmup_batches, config=None):
  """Returns {'file': timing.Window, 'cached': timing.Window}.

  'file' times the first epoch after warmup_batches (the shuffle buffer fill is start-up, as in training);
  'cached' times the whole second epoch, served from the cache.
  """
  epoch = examples_per_epoch // batch_size
  if epoch <= warmup_batches:
    raise ValueError('an epoch has %d batches, not more than the %d warm-up batches' % (epoch, warmup_batches))
  stamps = batch_times(input_fn, batch_size, 2 * epoch, config)
  return {
      'file': timing.window((epoch - warmup_batches) * batch_size, stamps[warmup_batches - 1], stamps[epoch - 1]),
      'cached': timing.window(epoch * batch_size, stamps[epoch - 1], stamps[2 * epoch - 1]),
  }
