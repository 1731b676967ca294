"""How TPUEstimator drives the device: steps per host round trip and number of cores."""
from absl import flags


def define_tpu_loop_flags(fv=flags.FLAGS):
  flags.DEFINE_integer('iterations', 50,
                       'Training steps run on the device per host round trip (TPUConfig.iterations_per_loop). '
                       'Checkpoints and summaries can only be written at these boundaries.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('num_shards', 8, 'Number of TPU cores (TPUConfig.num_shards): 8 on a v2-8/v3-8.',
                       lower_bound=1, flag_values=fv)
