"""Checks that span flag groups (call after the define_* functions)."""
from absl import flags

from estimator_tpu.runtime import batch_sizes
from estimator_tpu.tpu import cluster as tpu_cluster
from flags import modes
from flags import tpu_loop


def register_cross_validators(fv=flags.FLAGS):
  # --mode=check_tpu reports these two rules itself, among its other findings (flags/modes.py).
  flags.register_multi_flags_validator(
      ['use_tpu', 'batch_size', 'eval_batch_size', 'num_shards', 'tpu_type'],
      lambda values: modes.checking_tpu(fv) or _batches_split_across_cores(values),
      message='on TPU every batch is split evenly across the cores: --batch_size and --eval_batch_size must be '
              'divisible by the core count of --num_shards or --tpu_type (e.g. --batch_size=1024 --num_shards=8).',
      flag_values=fv)
  # TPU rule 17 (Cloud Storage): a TPU Node's workers run the input pipeline and write checkpoints themselves;
  # a TPU VM, or an export (which runs on this machine only), reads and writes this machine's disk.
  flags.register_multi_flags_validator(
      ['use_tpu', 'tpu_name', 'model_dir', 'data_dir'],
      lambda values: not _tpu_workers_use_the_paths(fv, values) or _cloud_paths(values, ('model_dir', 'data_dir')),
      message="TPU workers cannot read this VM's disk: with --use_tpu, --model_dir and --data_dir must be "
              'gs:// paths (e.g. --model_dir=gs://BUCKET/mnist/model).',
      flag_values=fv)
  flags.register_multi_flags_validator(
      ['use_tpu', 'tpu_name', 'checkpoint_path', 'warm_start_from'],
      lambda values: (not _tpu_workers_use_the_paths(fv, values)
                      or _cloud_paths(values, ('checkpoint_path', 'warm_start_from'), optional=True)),
      message='TPU workers read checkpoints themselves: with --use_tpu, --checkpoint_path and --warm_start_from '
              'must be gs:// paths.',
      flag_values=fv)
  register_mode_validators(fv)


def register_mode_validators(fv=flags.FLAGS):
  """Which flags make sense with which --mode (flags/modes.py)."""
  flags.register_multi_flags_validator(
      ['mode', 'model_dir', 'checkpoint_path'],
      lambda f: f['mode'] not in modes.CHECKPOINT_MODES or bool(f['model_dir'] or f['checkpoint_path']),
      message='--mode=evaluate/predict/export use a trained model: pass --model_dir=DIR (its latest checkpoint is '
              'used) or --checkpoint_path=PATH.',
      flag_values=fv)
  flags.register_multi_flags_validator(
      ['mode', 'checkpoint_path'], lambda f: not f['checkpoint_path'] or f['mode'] in modes.CHECKPOINT_MODES,
      message='--checkpoint_path picks the checkpoint for --mode=evaluate/predict/export; to start a training run '
              'from a checkpoint pass --warm_start_from instead.',
      flag_values=fv)
  flags.register_multi_flags_validator(
      ['mode', 'warm_start_from'], lambda f: not f['warm_start_from'] or f['mode'] in modes.TRAINING_MODES,
      message='--warm_start_from initialises a training run (--mode=all/train/train_and_evaluate); to use a '
              'checkpoint with evaluate/predict/export pass --checkpoint_path instead.',
      flag_values=fv)
  # --num_predictions=0 is how a training run (--mode=all) skips its predictions; where predicting is the point, it
  # would silently do nothing.
  flags.register_multi_flags_validator(
      ['mode', 'num_predictions', 'predictions_file'],
      lambda f: f['num_predictions'] != 0 or not (f['mode'] == 'predict' or f['predictions_file']),
      message='--num_predictions=0 predicts nothing, so --mode=predict or --predictions_file would produce nothing: '
              'pass --num_predictions=N (1 or more test images) or -1 for all of them.',
      flag_values=fv)


def register_distributed_validators(fv=flags.FLAGS):
  """tools/mnist_cluster.py: every task shares --model_dir, and none prepares data."""
  flags.register_validator(
      'model_dir', bool,
      message='in a cluster every task must use the same --model_dir (the chief writes checkpoints there, the '
              'evaluator reads them): pass it explicitly, on storage all tasks share (e.g. gs://BUCKET/model).',
      flag_values=fv)
  flags.register_validator(
      'source_dir', lambda value: not value,
      message='in a cluster the tasks only read the data (preparing it in each task at once would race): drop '
              '--source_dir and prepare the data once beforehand with `python -m tools.prepare_data '
              '--source_dir=DIR --data_dir=DIR`.',
      flag_values=fv)


def _batches_split_across_cores(values):
  """With a known core count (--num_shards or --tpu_type); otherwise TensorFlow checks when the TPU answers."""
  cores = tpu_loop.planned_cores(values['num_shards'], values['tpu_type'])
  if not values['use_tpu'] or not cores:
    return True
  batches = [batch_sizes.effective_eval_batch_size(values['eval_batch_size'], use_tpu=True),
             batch_sizes.effective_batch_size(values['batch_size'], use_tpu=True)]
  return all(batch % cores == 0 for batch in batches)


def _tpu_workers_use_the_paths(fv, values):
  """True when the paths are used by a TPU Node's workers: not off TPU, on a TPU VM, or in check_tpu/export."""
  return (values['use_tpu'] and not tpu_cluster.is_local_tpu(values['tpu_name'])
          and not modes.checking_tpu(fv) and not modes.exporting(fv))


def _cloud_paths(values, names, optional=False):
  return all((optional and not values[name]) or (values[name] or '').startswith('gs://') for name in names)
