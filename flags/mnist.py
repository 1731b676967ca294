"""All flags of mnist.py (plain Estimator): the training and data groups of mnist_tpu.py, without the TPU ones,
and --distributed (flags/distributed.py) for training across the processes of a TF_CONFIG cluster.

TPU rule (where to run): mnist_tpu.py adds flags/tpu_cluster.py (--use_tpu, --tpu_name, --master, ...) and
flags/tpu_loop.py (--iterations, --num_shards) for TPUEstimator's RunConfig/TPUConfig; a plain Estimator runs
on the local devices, or on the machines TF_CONFIG names, and needs neither.
"""
from absl import flags

from flags import data
from flags import distributed
from flags import training
from flags import validators


def define_mnist_flags(fv=flags.FLAGS):
  training.define_training_flags(fv)
  data.define_data_flags(fv)
  distributed.define_distributed_flags(fv)
  validators.register_distributed_validators(fv)
