"""All flags of mnist_tpu.py, composed from the groups."""
from absl import flags

from flags import data
from flags import logs
from flags import modes
from flags import network
from flags import precision
from flags import seed
from flags import tpu_cluster
from flags import tpu_loop
from flags import training
from flags import validators


def define_flags(fv=flags.FLAGS):
  tpu_cluster.define_tpu_cluster_flags(fv)
  tpu_loop.define_tpu_loop_flags(fv)
  precision.define_precision_flag(fv)
  training.define_training_flags(fv)
  data.define_data_flags(fv)
  network.define_network_flag(fv)
  modes.define_mode_flags(fv)
  seed.define_seed_flag(fv)
  logs.define_log_flags(fv)
  logs.define_progress_flags(fv)
  validators.register_cross_validators(fv)
