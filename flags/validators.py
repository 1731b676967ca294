"""Checks that span flag groups (call after the define_* functions)."""
from absl import flags

from flags import readiness
from flags import training


def register_cross_validators(fv=flags.FLAGS):
  # --check_tpu reports these two rules itself, among its other findings (flags/readiness.py).
  flags.register_multi_flags_validator(
      ['use_tpu', 'batch_size', 'eval_batch_size', 'num_shards'],
      lambda values: readiness.checking_tpu(fv) or _batches_split_across_cores(values),
      message='on TPU every batch is split evenly across the cores: --batch_size and --eval_batch_size must be '
              'divisible by --num_shards (e.g. --batch_size=1024 --num_shards=8).',
      flag_values=fv)
  flags.register_multi_flags_validator(
      ['use_tpu', 'model_dir', 'data_dir'], lambda values: readiness.checking_tpu(fv) or _cloud_paths_on_tpu(values),
      message="TPU workers cannot read this VM's disk: with --use_tpu, --model_dir and --data_dir must be "
              'gs:// paths (e.g. --model_dir=gs://BUCKET/mnist/model).',
      flag_values=fv)


def _batches_split_across_cores(values):
  if not values['use_tpu']:
    return True
  batches = [values['eval_batch_size'], training.effective_batch_size(values['batch_size'], use_tpu=True)]
  return all(batch % values['num_shards'] == 0 for batch in batches)


def _cloud_paths_on_tpu(values):
  if not values['use_tpu']:
    return True
  return all(path is not None and path.startswith('gs://') for path in (values['model_dir'], values['data_dir']))
