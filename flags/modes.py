"""What mnist.py and mnist_tpu.py do (--mode) and the flags that only some modes use."""
from absl import flags

# The default `all` is the classic mnist_tpu run: train, evaluate exactly on the whole eval split, log predictions.
ESTIMATOR_MODES = ('all', 'train', 'evaluate', 'train_and_evaluate', 'predict', 'export')
# TPU rule 13 (readiness): only the TPU program checks on the CPU whether its run would work on a TPU.
MODES = ESTIMATOR_MODES + ('check_tpu',)
# Modes that need an existing checkpoint (from --model_dir or --checkpoint_path).
CHECKPOINT_MODES = ('evaluate', 'predict', 'export')
TRAINING_MODES = ('all', 'train', 'train_and_evaluate')
EVAL_SPLITS = ('test', 'validation')


CHECK_TPU_HELP = (' check_tpu: check on this CPU that the run these flags describe would work on a Cloud TPU of '
                  '--tpu_type (or --num_shards cores): the runtime that generation offers, the plan per host as '
                  'TensorFlow\'s own TPUEstimator makes it (mnist_keras.py: the model under a strategy), input '
                  'shapes and dtypes, XLA compilation of the training, evaluation and prediction steps, bfloat16, '
                  'batch split, checkpoint cadence, eval coverage, gs:// paths, TPU reachability; one line per check, '
                  'non-zero exit if any fails; uses the TPU defaults whatever --use_tpu says and needs no TPU.')


def define_mode_flags(fv=flags.FLAGS, modes=MODES):
  flags.DEFINE_enum('mode', 'all', modes,
                    'all: train, evaluate on every --eval_split image, predict --num_predictions test images. '
                    'train: train only. evaluate: evaluate a checkpoint. train_and_evaluate: train, evaluating '
                    'every --eval_every_steps. predict: predict test images with a checkpoint. export: write a '
                    'SavedModel from a checkpoint.' + (CHECK_TPU_HELP if 'check_tpu' in modes else ''),
                    flag_values=fv)
  flags.DEFINE_string('checkpoint_path', None, 'Checkpoint for evaluate/predict/export: a prefix such as '
                      'DIR/model.ckpt-2000, or a directory (its latest). Default: the latest in --model_dir.',
                      flag_values=fv)
  flags.DEFINE_string('warm_start_from', None, 'Initialise a new training run with the weights of this checkpoint '
                      '(prefix or model directory). Ignored once --model_dir has a checkpoint of its own.',
                      flag_values=fv)
  flags.DEFINE_enum('eval_split', 'test', EVAL_SPLITS, 'Split to evaluate on; every example counts exactly once.',
                    flag_values=fv)
  flags.DEFINE_integer('eval_steps', None, 'Evaluate only this many batches of --eval_batch_size. Default: enough '
                       'batches for the whole split (the last one padded with examples of weight 0).',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('eval_every_steps', 1000, 'train_and_evaluate: training steps between evaluations.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_string('predictions_file', None, 'Also write every prediction to this CSV file '
                      '(index,label,class_id,probability).', flag_values=fv)
  flags.DEFINE_string('export_dir', None, 'export: base directory of the SavedModel (a timestamped subdirectory is '
                      'created). Default: <model_dir>/export.', flag_values=fv)


def checking_tpu(fv):
  """True while parsing a --mode=check_tpu command line (False where --mode is not defined).

  The readiness check reports the TPU flag rules itself (batch split, gs:// paths, a named TPU), one line each next
  to everything else it finds, so the validators that enforce them while parsing step aside for it.
  """
  return 'mode' in fv and fv['mode'].value == 'check_tpu'


def exporting(fv):
  """True while parsing a --mode=export command line: an export reads and writes only this machine's files."""
  return 'mode' in fv and fv['mode'].value == 'export'
