"""--model: which network of estimator_tpu/model.py a program trains, for the images and classes of --data_dir."""
from absl import flags

from estimator_tpu import model
from estimator_tpu.data import spec as data_spec


def define_network_flag(fv=flags.FLAGS):
  flags.DEFINE_enum('model', model.CNN, model.NETWORKS, 'The network: cnn (the mnist_tpu CNN), dense (flatten, '
                    'dense 128, dense classes) or vgg16 (Keras\' VGG16, weights=None; images of 32x32 or more). '
                    'Its input shape and classes are those of --data_dir (its dataset.json; MNIST without one).',
                    flag_values=fv)


def network_args(fv):
  """The model_fn builders' `network` argument: --model for the data in --data_dir."""
  return {'network': model.network(fv.model, data_spec.read(fv.data_dir))}
