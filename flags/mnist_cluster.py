"""All flags of tools/mnist_cluster.py: mnist.py's, and how the tasks of a TF_CONFIG cluster work together."""
from absl import flags

from flags import distributed
from flags import mnist
from flags import validators


def define_mnist_cluster_flags(fv=flags.FLAGS):
  mnist.define_mnist_flags(fv)
  distributed.define_distributed_flags(fv)
  validators.register_distributed_validators(fv)
