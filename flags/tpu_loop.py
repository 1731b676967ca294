"""How TPUEstimator drives the device: steps per host round trip, the cores, and how often host_call runs."""
from absl import flags

from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import accelerator_types


def define_tpu_loop_flags(fv=flags.FLAGS):
  flags.DEFINE_integer('iterations', 50,
                       'Training steps run on the device per host round trip (TPUConfig.iterations_per_loop). '
                       'Checkpoints can only be written at these boundaries, and TensorBoard events are flushed there.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('num_shards', None,
                       'Number of TPU cores (TPUConfig.num_shards; TPUStrategy\'s replicas). Default: none given, '
                       'the run uses every TPU device it finds (8 on a v2-8/v3-8/v5litepod-8/v6e-8, 4 on a v4-8/v5p-8, '
                       '32 on a v3-32). A number must be that count, or TPUEstimator stops; give one to have batch '
                       'sizes checked before the run starts. --mode=check_tpu, which has no TPU, plans for --tpu_type, '
                       'else this count (default 8).',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_string('tpu_type', None,
                      'Cloud TPU accelerator type of the planned run: v2-N, v3-N (N TensorCores = TensorFlow '
                      'cores, 8 per host), v4-N, v5p-N (N TensorCores, two per chip acting as one core: N/2 cores, '
                      '4 per host), v5litepod-N (v5e) and v6e-N (N chips = cores; TPU VMs of up to 8, 4 each from '
                      '16 chips on). v5e, v5p and v6e offer TensorFlow only with the PJRT runtime: mnist_keras.py. '
                      'Only the checks that run without a TPU use it: --mode=check_tpu and the batch-size checks. '
                      'The run itself asks the TPU (estimator_tpu/tpu/accelerator_types.py).',
                      flag_values=fv)
  flags.DEFINE_integer('host_call_every_n_steps', 1,
                       'host_call (the loss and learning rate for TensorBoard) leaves the TPU on every n-th step of a '
                       'device loop instead of every step (TPUConfig.experimental_host_call_every_n_steps). Pick a '
                       'divisor of --iterations. Off TPU TPUEstimator calls it every step.',
                       lower_bound=1, flag_values=fv)
  flags.register_validator('tpu_type', _known_tpu_type,
                           message='--tpu_type must name a Cloud TPU slice: %s.' % accelerator_types.KNOWN,
                           flag_values=fv)
  flags.register_multi_flags_validator(
      ['num_shards', 'tpu_type'], lambda f: planned_cores(f['num_shards'], f['tpu_type']) is not False,
      message='--num_shards and --tpu_type disagree: a v2/v3 slice has as many cores as its name says, a v4/v5p '
              'slice half as many (v4-8: --num_shards=4), a v5litepod/v6e slice one per chip. Pass one of them.',
      flag_values=fv)


def _known_tpu_type(value):
  if value is None:
    return True
  try:
    accelerator_types.parse_tpu_type(value)
  except UserError:
    return False
  return True


def planned_cores(num_shards, tpu_type):
  """The core count the flags promise: --num_shards, else --tpu_type's; None if neither; False if they differ."""
  cores = accelerator_types.parse_tpu_type(tpu_type).num_cores if _known_tpu_type(tpu_type) and tpu_type else None
  if num_shards is not None and cores is not None and num_shards != cores:
    return False
  return num_shards if num_shards is not None else cores
