"""The serving signature for export_saved_model: a batch of images, or serialized tf.Examples.

Both carry raw pixel values 0..255 like the training input; the model scales them itself (model.PIXEL_SCALE), so
clients never reproduce any preprocessing. The image shape is that of the data the model was trained on
(data/spec.py): [28, 28] for MNIST, [height, width, channels] for colour images.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu.data import records
from estimator_tpu.data import spec as data_spec
from estimator_tpu.model import IMAGE_KEY

IMAGES_INPUT = 'images'
EXAMPLES_INPUT = 'examples'


def receiver_fn(data_dir):
  """serving_input_receiver_fn for the images of data_dir (its dataset.json; MNIST's without one)."""
  spec = data_spec.read(data_dir)
  return lambda: serving_input_receiver_fn(spec)


def serving_input_receiver_fn(spec=data_spec.MNIST):
  """ServingInputReceiver: `images` float32 [batch] + spec.serving_shape (default signature; [batch, 28, 28] for
  MNIST), or `examples`.

  `examples` takes serialized tf.Example strings with `image_raw` (spec.num_pixels uint8 bytes, the TFRecord layout
  of records.py; no label needed).

  The images input is a placeholder_with_default over the parsed Examples, so feeding it bypasses the parsing and
  feeding `examples` fills it: both signatures run the same model graph.
  """
  serialized = tf.placeholder(tf.string, [None], name='serialized_examples')
  parsed = tf.io.parse_example(serialized, {'image_raw': records.FEATURE_SPEC['image_raw']})
  image_shape = spec.serving_shape
  decoded = tf.reshape(records.decode_images(parsed['image_raw'], -1, spec.num_pixels), [-1] + image_shape)
  images = tf.placeholder_with_default(decoded, [None] + image_shape, name=IMAGES_INPUT)
  return tf.estimator.export.ServingInputReceiver(
      features={IMAGE_KEY: images},
      receiver_tensors={IMAGES_INPUT: images},
      receiver_tensors_alternatives={EXAMPLES_INPUT: {EXAMPLES_INPUT: serialized}})
