"""The two processes of --verify (proof/verify.py), run as `python -m estimator_tpu.porting.proof.worker`:
`original` in the original program's folder, `port` in the ported copy. Each imports the entry points there, runs
TensorFlow, and writes what it measured as JSON.

  original  trains the original (tf.estimator.Estimator) --train_steps steps: the checkpoint; evaluates it
            (reading the evaluation input to its end); reads the first --continue_steps training batches; trains
            on them from the checkpoint, one loss per step.
  port      evaluates the original's checkpoint under TPUEstimator(use_tpu=False) on the port's evaluation input,
            padded to full batches as the port pads it; trains from the checkpoint under TPUEstimator on the
            port's training input; trains on the same batches from the checkpoint, one loss per step; runs the
            readiness check on the port's model_fn and training input_fn.
"""
import io
import json
import os
import pickle
import shutil
import sys
import traceback

import numpy as np
import tensorflow.compat.v1 as tf

from estimator_tpu.porting.readiness import user_code
from estimator_tpu.porting.rewrite import templates

TRAIN = tf.estimator.ModeKeys.TRAIN


class Stage(Exception):
  """Something the worker could not do, and the stage it was in (import, ...)."""

  def __init__(self, stage, message):
    super(Stage, self).__init__(message)
    self.stage = stage


def main(argv):
  role, request_path, result_path = argv
  with open(request_path) as f:
    request = json.load(f)
  sys.path.insert(0, os.getcwd())
  try:
    result = original(request) if role == 'original' else port(request)
  except Stage as e:
    result = {'error': str(e), 'stage': e.stage}
  except Exception as e:  # noqa: BLE001 -- the user's code: what it raised is the result
    trace = traceback.extract_tb(sys.exc_info()[2])
    where = trace[-1] if trace else None
    result = {'error': '%s: %s%s' % (type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else '',
                                     ' (%s:%d)' % (os.path.basename(where.filename), where.lineno) if where else ''),
              'stage': 'run'}
  with open(result_path, 'w') as f:
    json.dump(result, f)
  return 0


# --- entry points -------------------------------------------------------------------------------------------------

def load(request, key):
  """The function an entry point names (None when it is not given)."""
  text = request.get(key)
  if not text:
    return None
  text = text.replace('{data_dir}', request['data_dir'])
  try:
    spec = user_code.parse_spec(key, text)
    module = user_code.import_module(key, spec.module)
    return user_code.load_function(key, spec, module)
  except Exception as e:  # noqa: BLE001 -- UserError or the user's import error
    raise Stage('import', '--%s=%s: %s' % (key, text, e))


def make_data(request):
  if request.get('data') and not os.path.isdir(request['data_dir']):
    os.makedirs(request['data_dir'])
    maker = load(dict(request, maker=request['data']), 'maker')
    maker(request['data_dir'])


def names_of(fn):
  return user_code.argument_names(fn) or []


def call_input_fn(input_fn, params, config=None):
  """Calls an input_fn as (TPU)Estimator does: with the arguments it names."""
  offered = {'params': params, 'mode': TRAIN, 'config': config}
  return input_fn(**dict((n, offered[n]) for n in names_of(input_fn) if n in offered))


def call_model_fn(model_fn, features, labels, mode, params, config):
  offered = {'features': features, 'labels': labels, 'mode': mode, 'params': params, 'config': config}
  return model_fn(**dict((n, offered[n]) for n in names_of(model_fn) if n in offered))


def float_metrics(metrics):
  return dict((k, float(v)) for k, v in metrics.items() if np.ndim(v) == 0)


# --- the original -------------------------------------------------------------------------------------------------

def original(request):
  make_data(request)
  model_fn, train_input_fn = load(request, 'model_fn'), load(request, 'train_input_fn')
  eval_input_fn = load(request, 'eval_input_fn')
  if request['original_kind'] == 'tpu':  # already TPUEstimator code: run as such, on the CPU
    estimator, config = tpu_estimator(model_fn, request, request['model_dir'])
    params = dict(request['params'], batch_size=request['batch_size'], use_tpu=False)
  else:
    params = request['params'] if 'params' in names_of(model_fn) else None
    config = tf.estimator.RunConfig(model_dir=request['model_dir'], tf_random_seed=request['seed'])
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=config, params=params)
  estimator.train(train_input_fn, max_steps=request['train_steps'])
  checkpoint = estimator.latest_checkpoint()
  metrics = None
  if eval_input_fn is not None:
    metrics = float_metrics(estimator.evaluate(eval_input_fn, steps=None, checkpoint_path=checkpoint))
  batches_path = os.path.join(request['work'], 'batches.pickle')
  batches = read_batches(train_input_fn, request)
  with open(batches_path, 'wb') as f:
    pickle.dump(batches, f)
  losses = train_on(model_fn, batches, checkpoint, request, params or {}, config)
  return {'checkpoint': checkpoint, 'step': int(checkpoint.rsplit('-', 1)[1]), 'metrics': metrics,
          'losses': losses, 'batches': batches_path}



def read_batches(input_fn, request):
  """The first continue_steps batches of the training input, as NumPy."""
  with tf.Graph().as_default():
    tf.set_random_seed(request['seed'])
    dataset = call_input_fn(input_fn, {'batch_size': request['batch_size']})
    element = tf.data.make_one_shot_iterator(dataset).get_next()
    with tf.Session() as session:
      return [session.run(element) for _ in range(request['continue_steps'])]


def train_on(model_fn, batches, checkpoint, request, params, config):
  """Per-step losses of continue_steps training steps from `checkpoint` on `batches`, in a graph built the same
  way for the original and the port: the graph seed, the global step, the batches, then model_fn."""
  stacked = tf.nest.map_structure(lambda *parts: np.stack(parts), *batches)
  with tf.Graph().as_default():
    tf.set_random_seed(request['seed'])
    tf.train.get_or_create_global_step()
    element = tf.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices(stacked)).get_next()
    features, labels = element if isinstance(element, tuple) and len(element) == 2 else (element, None)
    spec = call_model_fn(model_fn, features, labels, TRAIN, params, config)
    saver = tf.train.Saver()
    # One thread, in thread pools of this session's own (TF 1 otherwise reuses the pools of the process's first
    # session): every sum in the same order in both processes, whatever ran before or runs beside.
    single = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1,
                            use_per_session_threads=True)
    with tf.Session(config=single) as session:
      session.run([tf.global_variables_initializer(), tf.local_variables_initializer(), tf.tables_initializer()])
      saver.restore(session, checkpoint)
      return [float(session.run([spec.loss, spec.train_op])[0]) for _ in batches]


# --- the port -----------------------------------------------------------------------------------------------------

def port(request):
  original_result = request['original']
  model_fn, train_input_fn = load(request, 'model_fn'), load(request, 'train_input_fn')
  eval_input_fn = load(request, 'eval_input_fn')
  checkpoint = original_result['checkpoint']
  helpers = port_helpers()
  params = dict(request['params'])
  os.makedirs(request['model_dir'])
  estimator, config = tpu_estimator(model_fn, request, request['model_dir'])

  def evaluate(checkpoint_path):
    if not request['padded']:  # the port evaluates its input as the original did (e.g. it pads its data itself)
      return float_metrics(estimator.evaluate(eval_input_fn, steps=None, checkpoint_path=checkpoint_path))
    padded = helpers['tpu_exact_eval_input'](eval_input_fn)
    steps = helpers['tpu_eval_steps'](padded, request['eval_batch_size'])
    return float_metrics(estimator.evaluate(padded, steps=steps, checkpoint_path=checkpoint_path))

  metrics = evaluate(checkpoint) if eval_input_fn is not None else None
  # Training from the original's checkpoint under TPUEstimator: its files in the port's model_dir.
  for name in os.listdir(os.path.dirname(checkpoint)):
    if name.startswith(os.path.basename(checkpoint) + '.') or name == 'checkpoint':
      shutil.copy(os.path.join(os.path.dirname(checkpoint), name), request['model_dir'])
  estimator.train(train_input_fn, max_steps=original_result['step'] + request['continue_steps'])
  trained = {'global_step': float(estimator.get_variable_value('global_step'))}
  with open(original_result['batches'], 'rb') as f:
    batches = pickle.load(f)
  tpu_params = dict(params, batch_size=request['batch_size'], use_tpu=False)
  losses = train_on(model_fn, batches, checkpoint, request, tpu_params, config)
  return {'metrics': metrics, 'trained_metrics': trained, 'losses': losses, 'readiness': readiness(request)}


def port_helpers():
  """The functions the port writes for exact evaluation (tpu_exact_eval_input, tpu_eval_steps), as it writes
  them (rewrite/templates.py)."""
  helpers = {'tf': tf}
  exec(templates.EXACT_EVAL_HELPERS.format(tf='tf'), helpers)  # pylint: disable=exec-used -- the port's own code
  return helpers


def padded_eval_input(eval_input_fn):
  """eval_input_fn padded to full batches with weight-0 rows, as the port evaluates."""
  return port_helpers()['tpu_exact_eval_input'](eval_input_fn)


def tpu_estimator(model_fn, request, model_dir):
  """TPUEstimator(use_tpu=False) with the request's batches and params, and its RunConfig."""
  config = tf.estimator.tpu.RunConfig(model_dir=model_dir, tf_random_seed=request['seed'])
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, params=dict(request['params']), use_tpu=False,
      train_batch_size=request['batch_size'], eval_batch_size=request['eval_batch_size'],
      predict_batch_size=request['eval_batch_size'])
  return estimator, config


def readiness(request):
  """python -m estimator_tpu.readiness on the port's model_fn and its input_fns (in this process): the TPU path of
  training, and, with an evaluation input_fn, of evaluation and prediction too (TensorFlow's TPUEstimator builds
  their graphs with its outfeed of eval_metrics and predictions, and one core's steps are compiled with XLA),
  each core taking the batch the proof trains and evaluates with."""
  from estimator_tpu.porting.readiness import cli  # pylint: disable=g-import-not-at-top
  model_fn = request.get('readiness_model_fn') or request['model_fn']
  argv = ['--model_fn=' + model_fn.replace('{data_dir}', request['data_dir']),
          '--input_fn=' + request['train_input_fn'].replace('{data_dir}', request['data_dir']),
          '--params=' + json.dumps(request['params']), '--batch_size=%d' % (8 * request['batch_size'])]
  if request.get('eval_input_fn'):
    eval_input_fn = (request.get('readiness_eval_input_fn') or request['eval_input_fn']).replace(
        '{data_dir}', request['data_dir'])
    argv += ['--eval_input_fn=' + eval_input_fn, '--predict_input_fn=' + eval_input_fn,
             '--eval_batch_size=%d' % (8 * request['eval_batch_size'])]
  argv += request.get('readiness_args') or []
  wrappers = {}
  if request.get('padded'):  # the port evaluates on its input padded to full batches: so would the TPU run
    wrappers['eval_input_fn'] = padded_eval_input
  out, err = io.StringIO(), io.StringIO()
  status = cli.main(argv, stdout=out, stderr=err, wrappers=wrappers)
  lines = out.getvalue().splitlines()
  failures = [line for line in lines if line.startswith('FAIL')] + err.getvalue().strip().splitlines()
  summary = lines[-1].rstrip('.') if lines else 'no output'
  return {'status': status, 'summary': summary, 'failures': failures}


if __name__ == '__main__':
  sys.exit(main(sys.argv[1:]))
