"""All flags of mnist.py (plain Estimator): the training, data and mode groups of mnist_tpu.py,
without the TPU ones.

TPU rule 1 (TPUEstimator): mnist_tpu.py adds flags/tpu_cluster.py (--use_tpu, --tpu_name, --master,
...) and flags/tpu_loop.py (--iterations, --num_shards) for TPUEstimator's RunConfig/TPUConfig, and
--mode=check_tpu; a plain Estimator runs on the local devices and needs none of them.
"""
from absl import flags

from flags import data
from flags import logs
from flags import modes
from flags import network
from flags import seed
from flags import training
from flags import validators


def define_flags(fv=flags.FLAGS):
  training.define_training_flags(fv)
  # Local only: the CPU's eval batch, which divides the 10,000 MNIST test images (mnist_tpu.py picks per device).
  fv.set_default('eval_batch_size', training.LOCAL_EVAL_BATCH_SIZE)
  data.define_data_flags(fv)
  network.define_network_flag(fv)
  modes.define_mode_flags(fv, modes.ESTIMATOR_MODES)
  seed.define_seed_flag(fv)
  logs.define_log_flags(fv)
  logs.define_progress_flags(fv)
  validators.register_mode_validators(fv)
