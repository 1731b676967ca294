"""All flags of mnist.py (plain Estimator): the training and data groups of mnist_tpu.py, without the TPU ones.

TPU rule (where to run): mnist_tpu.py adds flags/tpu_cluster.py (--use_tpu, --tpu_name, --master, ...) and
flags/tpu_loop.py (--iterations, --num_shards) for TPUEstimator's RunConfig/TPUConfig; a plain Estimator runs
on the local devices and needs neither.
"""
from absl import flags

from flags import data
from flags import training


def define_mnist_flags(fv=flags.FLAGS):
  training.define_training_flags(fv)
  data.define_data_flags(fv)
