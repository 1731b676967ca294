"""TPU readiness of your own TPUEstimator code, from the command line:

  python -m estimator_tpu.readiness --model_fn=MODULE:NAME --input_fn=MODULE:NAME [--params=JSON]
      [--eval_input_fn=MODULE:NAME --predict_input_fn=MODULE:NAME --eval_batch_size=N
       --num_shards=8 --batch_size=1024 --iterations=50 --save_checkpoints_steps=N
       --model_dir=gs://... --data_dir=gs://... --tpu_name=NAME | --master=grpc://HOST:8470 ...]

The same check as `mnist_tpu.py --mode=check_tpu`, on the functions you name (estimator_tpu/readiness/
user_code.py says how they are found and called). One line per check; exit status 0 when nothing failed, 1 when
a check failed, 2 when the check could not run (a flag, a name that cannot be imported or called).

The plan flags mean what they mean for mnist_tpu.py (flags/tpu_loop.py, flags/tpu_cluster.py, flags/training.py)
and are defined here again, not imported: `flags/` is not installed with estimator_tpu (setup.py), and this check
runs from the folder of the code it checks. tests/porting/readiness/test_readiness_cli.py keeps the two in step.
"""
import json
import sys

import tensorflow.compat.v1 as tf
from absl import flags

from estimator_tpu.porting import readiness
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import topology
from estimator_tpu.porting.readiness import user_code
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.preflight import GRPC_ADDRESS
from estimator_tpu.tpu import accelerator_types
from estimator_tpu.tpu import run_config

PROGRAM = 'python -m estimator_tpu.readiness'
EXIT_BAD_INPUT = 2
FUNCTION_FLAGS = ('model_fn', 'input_fn', 'eval_input_fn', 'predict_input_fn')
EVAL, PREDICT = tf.estimator.ModeKeys.EVAL, tf.estimator.ModeKeys.PREDICT
HELP_FLAGS = ('-h', '--help', '-help', '--helpshort', '-helpshort', '--helpfull', '-helpfull', '--helpxml')
# mnist_tpu.py's defaults on a TPU: --num_shards (a v2-8/v3-8), --iterations, and --batch_size with --use_tpu.
DEFAULT_NUM_SHARDS = 8
DEFAULT_ITERATIONS = 50
DEFAULT_TPU_BATCH_SIZE = 1024


def define_flags(fv):
  """The flags of this command, on their own FlagValues: the user's module may define absl flags of the same
  names (--batch_size, --model_dir) in the global FLAGS, which keep their own values."""
  flags.DEFINE_string('model_fn', None, 'Your model_fn: %s (a builder called with literal arguments).'
                      % user_code.SPEC_FORM, flag_values=fv)
  flags.DEFINE_string('input_fn', None, 'Your training input_fn: %s.' % user_code.SPEC_FORM, flag_values=fv)
  flags.DEFINE_string('eval_input_fn', None, 'Your evaluation input_fn (%s): the evaluation step is compiled and '
                      'its input checked too; needs --eval_batch_size.' % user_code.SPEC_FORM, flag_values=fv)
  flags.DEFINE_string('predict_input_fn', None, 'Your prediction input_fn (%s): the prediction step is compiled '
                      'and its input checked too; needs --predict_batch_size or --eval_batch_size.'
                      % user_code.SPEC_FORM, flag_values=fv)
  flags.DEFINE_string('params', None, 'Extra params for model_fn and input_fn, as a JSON object (TPUEstimator\'s '
                      'params=); batch_size and use_tpu are set as on a TPU.', flag_values=fv)
  flags.mark_flags_as_required(['model_fn', 'input_fn'], flag_values=fv)
  _define_plan_flags(fv)


def _define_plan_flags(fv):
  flags.DEFINE_integer('num_shards', DEFAULT_NUM_SHARDS, 'Number of TPU cores (TPUConfig.num_shards).',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('iterations', DEFAULT_ITERATIONS, 'Training steps per host round trip '
                       '(TPUConfig.iterations_per_loop).', lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('batch_size', DEFAULT_TPU_BATCH_SIZE, 'Global training batch (all cores together: '
                       'TPUEstimator\'s train_batch_size).', lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('eval_batch_size', None, 'Global evaluation batch (eval_batch_size); unset: not checked.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('predict_batch_size', None, 'Global prediction batch. Default: --eval_batch_size.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('save_checkpoints_steps', None, 'Checkpoint cadence in steps; unset: not checked.',
                       lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('eval_examples', None, 'Examples in the split evaluate() reads (with --eval_steps and '
                       '--eval_batch_size: whether every one is scored).', lower_bound=1, flag_values=fv)
  flags.DEFINE_integer('eval_steps', None, 'The steps evaluate() is given.', lower_bound=1, flag_values=fv)
  flags.DEFINE_bool('eval_padded', False, 'The eval input pads the split to full batches with weight-0 examples.',
                    flag_values=fv)
  flags.DEFINE_string('model_dir', None, 'The run\'s model_dir (on a Cloud TPU it must be gs://).', flag_values=fv)
  flags.DEFINE_string('data_dir', None, 'Where the run\'s input is (on a Cloud TPU it must be gs://).',
                      flag_values=fv)
  flags.DEFINE_string('tpu_name', None, 'The Cloud TPU (resolved with TPUClusterResolver); with --master, the only '
                      'checks that contact it: a bounded TCP probe.', flag_values=fv)
  flags.DEFINE_string('tpu_zone', None, 'GCE zone of the Cloud TPU.', flag_values=fv)
  flags.DEFINE_string('gcp_project', None, 'GCP project of the Cloud TPU.', flag_values=fv)
  flags.DEFINE_string('master', None, 'TPU worker address grpc://HOST:PORT, instead of --tpu_name.', flag_values=fv)
  flags.register_validator(
      'master', lambda value: not value or bool(GRPC_ADDRESS.match(value)),
      message='--master must be grpc://HOST:PORT, e.g. --master=grpc://10.240.1.2:8470.', flag_values=fv)
  flags.register_multi_flags_validator(
      ['tpu_name', 'master'], lambda f: not (f['tpu_name'] and f['master']),
      message='--tpu_name and --master both say where the TPU is; pass only one of them.', flag_values=fv)


def parse_params(text):
  if text is None:
    return {}
  try:
    params = json.loads(text)
  except ValueError as e:
    raise UserError('--params is not JSON (%s).' % e, 'pass a JSON object, e.g. --params=\'{"hidden_units": 128}\'.')
  if not isinstance(params, dict):
    raise UserError('--params is JSON but not an object.', 'pass a JSON object, e.g. --params=\'{"hidden": 128}\'.')
  return params


def tpu_run_config(fv):
  """The RunConfig a ported program builds from these flags (tpu/run_config.py), pointed at --master; a
  --tpu_name is not resolved here: that would contact the TPU's metadata server."""
  return run_config.build_run_config(
      model_dir=fv.model_dir or topology.scratch_model_dir(), iterations_per_loop=fv.iterations,
      num_shards=fv.num_shards, save_checkpoints_steps=fv.save_checkpoints_steps, master=fv.master,
      evaluates_on_tpu=True)


def build_plan(fv, params, model_fn, config, shape):
  """The plan: the user's model_fn in a TPUEstimator as a ported program builds it, on the slice `shape`."""
  try:
    estimator = tf.estimator.tpu.TPUEstimator(
        model_fn=model_fn, config=config, params=params, use_tpu=True, train_batch_size=fv.batch_size,
        eval_batch_size=fv.eval_batch_size, predict_batch_size=fv.predict_batch_size or fv.eval_batch_size)
  except ValueError as e:
    raise UserError('TPUEstimator refuses these settings: %s' % one_line(e),
                    'leave out of --params the keys TPUEstimator sets itself (batch_size, context, use_tpu).')
  return readiness.TpuPlan(
      estimator, shape, model_dir=fv.model_dir,
      data_dir=fv.data_dir, tpu_name=fv.tpu_name, tpu_zone=fv.tpu_zone, gcp_project=fv.gcp_project,
      eval_examples=fv.eval_examples, eval_steps=fv.eval_steps, eval_padded=fv.eval_padded,
      requested_checkpoint_steps=fv.save_checkpoints_steps)


def parse_own_flags(argv):
  """(flag values, the arguments left for the user's module's own absl flags)."""
  fv = flags.FlagValues()
  define_flags(fv)
  try:
    rest = fv([PROGRAM] + list(argv), known_only=True)
  except flags.Error as e:
    raise UserError('%s.' % one_line(e), 'see `%s --help`.' % PROGRAM)
  return fv, rest


def one_line(error):
  """absl reports each flag with a problem on a line of its own: one line, for the one `error:` line."""
  return '; '.join(line.strip().rstrip('.') for line in str(error).splitlines() if line.strip())


def parse_user_flags(rest, defined):
  """Arguments this command does not know go to the absl flags the user's modules defined (`defined`: their
  names), which are then parsed, so FLAGS.learning_rate read in model_fn gives a value, not an error. Global flags
  are left alone when the user's code defines none."""
  extra = list(rest[1:])
  if not extra and (not defined or flags.FLAGS.is_parsed()):
    return
  if flags.FLAGS.is_parsed():
    raise UserError('unknown arguments: %s.' % ' '.join(extra), 'see `%s --help`.' % PROGRAM)
  try:
    leftover = flags.FLAGS([PROGRAM] + extra)
  except flags.Error as e:
    raise UserError('%s (neither this check nor your module defines it).' % one_line(e),
                    'see `%s --help`.' % PROGRAM)
  if len(leftover) > 1:
    raise UserError('unexpected arguments: %s.' % ' '.join(leftover[1:]), 'pass only --flags.')


def run(argv, stdout, wrappers=None):
  """Returns the exit status of the check; UserError when it cannot run. `wrappers` ({flag: fn -> fn}) change a
  named function before it is checked: --verify gives the port's evaluation input_fn the padding the port
  evaluates with."""
  # Checks rule 14 (pod slices).
  fv, rest = parse_own_flags(argv)
  params = parse_params(fv.params)
  require_batch_sizes(fv)
  names = [flag for flag in FUNCTION_FLAGS if fv[flag].value is not None]
  specs = [(flag, user_code.parse_spec(flag, fv[flag].value)) for flag in names]
  known = set(flags.FLAGS)
  modules = [user_code.import_module(flag, spec.module) for flag, spec in specs]
  # After the imports, which define the modules' flags; before builders, which may read them.
  parse_user_flags(rest, set(flags.FLAGS) - known)
  functions = dict((flag, user_code.load_function(flag, spec, module)) for (flag, spec), module in zip(specs, modules))
  for flag, wrap in (wrappers or {}).items():
    if flag in functions:
      functions[flag] = wrap(functions[flag])
  signatures = user_code.check_signatures(functions['model_fn'], functions['input_fn'])
  config = tpu_run_config(fv)
  called_model_fn, called_input_fn = user_code.as_tpu_estimator_calls(functions['model_fn'], functions['input_fn'],
                                                                      lambda: config)
  inference = dict((flag, user_code.as_tpu_input_fn(functions[flag], mode, lambda: config))
                   for flag, mode in (('eval_input_fn', EVAL), ('predict_input_fn', PREDICT)) if flag in functions)
  try:
    shape = accelerator_types.shape_from_cores(fv.num_shards)
  except UserError as e:  # a check line, as in --mode=check_tpu
    return readiness.print_results([signatures, check_results.failed('topology', e.problem, e.fix)], stdout)
  plan = build_plan(fv, params, called_model_fn, config, shape)
  checks = readiness.check_tpu_readiness(called_model_fn, called_input_fn, plan,
                                         eval_input_fn=inference.get('eval_input_fn'),
                                         predict_input_fn=inference.get('predict_input_fn'))
  return readiness.print_results([signatures] + checks, stdout)


def require_batch_sizes(fv):
  """TPUEstimator evaluates and predicts only with a batch size for it."""
  if fv.eval_input_fn and not fv.eval_batch_size:
    raise UserError('--eval_input_fn is given without --eval_batch_size.',
                    'pass the global evaluation batch, e.g. --eval_batch_size=1024.')
  if fv.predict_input_fn and not (fv.predict_batch_size or fv.eval_batch_size):
    raise UserError('--predict_input_fn is given without --predict_batch_size or --eval_batch_size.',
                    'pass the global prediction batch, e.g. --predict_batch_size=1024.')


def usage(fv):
  return '%s\n\nFlags:\n%s\n' % (__doc__.split('\n\n')[0], fv.get_help())


def main(argv=None, stdout=None, stderr=None, wrappers=None):
  argv = sys.argv[1:] if argv is None else argv
  stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
  if any(arg in HELP_FLAGS for arg in argv):
    fv = flags.FlagValues()
    define_flags(fv)
    stdout.write(usage(fv))
    return 0
  try:
    return run(argv, stdout, wrappers)
  except UserError as e:
    stderr.write('error: %s\n' % e)
    return EXIT_BAD_INPUT


if __name__ == '__main__':
  sys.exit(main())
