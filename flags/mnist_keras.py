"""All flags of mnist_keras.py: exactly mnist_tpu.py's, so a migrating user changes only the program name.

What they become under TF2: --tpu_name/--master/--tpu_zone/--gcp_project feed the TPUClusterResolver,
--iterations becomes Keras' steps_per_execution, and --num_shards is only used by the early check that batches
split evenly across cores (TPUStrategy reads the real core count from the TPU system; mnist_keras.py checks it).
"""
from absl import flags

from flags import mnist_tpu


def define_flags(fv=flags.FLAGS):
  mnist_tpu.define_flags(fv)
