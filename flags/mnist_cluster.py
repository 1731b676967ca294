"""All flags of tools/mnist_cluster.py: mnist.py's (its one mode is `all`), and how the tasks of a TF_CONFIG
cluster work together."""
from absl import flags

from flags import data
from flags import distributed
from flags import logs
from flags import modes
from flags import network
from flags import training
from flags import validators


def define_flags(fv=flags.FLAGS):
  training.define_training_flags(fv)
  fv.set_default('eval_batch_size', training.LOCAL_EVAL_BATCH_SIZE)  # CPU/GPU processes, no TPU
  data.define_data_flags(fv)
  network.define_network_flag(fv)
  modes.define_mode_flags(fv, modes=('all',))
  distributed.define_distributed_flags(fv)
  logs.define_log_flags(fv)
  logs.define_progress_flags(fv)
  validators.register_distributed_validators(fv)
