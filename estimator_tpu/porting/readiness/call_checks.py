"""The judge of `readiness --run`: what TensorFlow's TPU code says about each estimator a program builds and each
call it makes (interception.py catches them).

When an estimator is built:
  * a TPUEstimator: TensorFlow's own constructor is asked about the program's RunConfig and params first (it
    refuses a RunConfig that is not tf.estimator.tpu.RunConfig, and params holding `batch_size` or `context`);
    a refusal is a FAIL line, and the program goes on with what TensorFlow would take, so its later calls are
    judged too;
  * a plain tf.estimator.Estimator, or a premade one: the `estimator` FAIL line says what must change (rule 1).
For each train, evaluate or predict (the first of each mode on each estimator; later ones only run): the
TPUEstimator a TPU run would use is built with the program's model_fn, params and configuration on the simulated
slice, and readiness.check_mode runs that mode's checks, the same ones `--mode=check_tpu` runs: TensorFlow's plan
per host, the input_fn called as a TPU host calls it, the step compiled with XLA on the CPU, what leaves the TPU
(eval_metrics, predictions, host_call) through TensorFlow's own TPUEstimator graph. A program not yet ported is
judged as its port would be: its batch on the CPU is the global batch, and its model_fn and input_fn are called as
TPUEstimator calls them (user_code.py), so what they lack is named. After an evaluation, the metrics the CPU
reported are compared with those the TPU path's metric_fn gives.

Every FAIL line ends its message with the place in the program it is about: the estimator's construction, the
call, or the definition of the model_fn or input_fn.
"""
import collections
import copy
import os
import re
import traceback

import tensorflow.compat.v1 as tf
from tensorflow_estimator.python.estimator.tpu import tpu_estimator

from estimator_tpu.porting import readiness
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import cli
from estimator_tpu.porting.readiness import input_checks
from estimator_tpu.porting.readiness import interception
from estimator_tpu.porting.readiness import topology
from estimator_tpu.porting.readiness import user_code
from estimator_tpu.tpu import accelerator_types

TPU_RUN_CONFIG = tf.estimator.tpu.RunConfig
# Set to print the traceback of a failure of the judge itself (for whoever works on it).
DEBUG_VARIABLE = 'READINESS_RUN_DEBUG'
RESERVED_PARAMS = ('batch_size', 'context')
MODE_CALLS = {interception.TRAIN: 'train', interception.EVAL: 'evaluate', interception.PREDICT: 'predict',
              interception.EXPORT: 'export_saved_model'}
# Which place in the program a check's failure is about.
INPUT_CHECKS = frozenset(['input_fn', 'input_shapes', 'input_batch', 'input_dtypes', 'train_input', 'signatures'])
MODEL_CHECKS = frozenset(['xla_compile', 'step_shapes', 'step_dtypes', 'precision', 'step_summaries',
                          'gradient_all_reduce', 'global_step', 'model_fn_spec', 'eval_step', 'predict_step',
                          'host_call', 'eval_metric_names'])
ESTIMATOR_CHECKS = frozenset(['estimator', 'run_config', 'params', 'batch_split', 'checkpoint_cadence', 'topology'])
CPU_METRICS = frozenset(['loss', 'global_step'])
# Checks whose message names its place already.
SITED_CHECKS = frozenset(['estimator', 'run_config', 'params', 'program', 'export'])
# Ops only a TPU runs (besides the TPU* ones): the CPU has no kernel for them.
TPU_ONLY_OPS = frozenset(['CrossReplicaSum', 'AllToAll', 'CollectivePermute', 'InfeedDequeue', 'InfeedDequeueTuple',
                          'OutfeedEnqueue', 'OutfeedEnqueueTuple'])


class Judge(object):
  """Judges what interception.Interceptor sees and writes one line per check to `stream` as it goes.

  `shape` is the slice (accelerator_types.SliceShape) the judge's flags name, or None: then each TPUEstimator's
  own TPUConfig.num_shards (or a v2-8/v3-8) is the slice. `batch_size` overrides the global training batch."""

  def __init__(self, stream, shape=None, slice_source=None, batch_size=None):
    self.stream = stream
    self.shape = shape
    self.slice_source = slice_source
    self.batch_size = batch_size
    self.counts = collections.Counter()
    self._printed = set()
    self._tpu_metrics = {}  # id(Built) -> the metric names of the TPU path's metric_fn
    self._runs_on_tpu = False  # the program built a TPUEstimator with use_tpu=True (run with its TPU flags)
    self.predictions_cut = None  # (site, steps) of a predict call the judge cut short (interception._capped)
    self.trained_steps = None  # the steps the judge let a train call run, once it ran one
    self.model_dirs_moved = {}  # each model_dir the program named -> the scratch folder the judge replaced it with

  # --- lines ------------------------------------------------------------------------------------------------------

  def report(self, results):
    for result in results:
      line = result.line()
      if line in self._printed:
        continue  # the same plan line for the same estimator's next call
      self._printed.add(line)
      self.counts[result.status] += 1
      self.stream.write(line + '\n')
    self.stream.flush()

  def header(self, text):
    self.stream.write('== %s\n' % text)
    self.stream.flush()

  def summary(self):
    self.stream.write('TPU readiness of the program: %d passed, %d failed, %d skipped.\n' % (
        self.counts[check_results.PASS], self.counts[check_results.FAIL], self.counts[check_results.SKIP]))
    self.stream.flush()
    return 1 if self.counts[check_results.FAIL] else 0

  # --- building ---------------------------------------------------------------------------------------------------

  def on_contrib_build(self, estimator, site):
    """A tf.contrib.learn estimator: no TPUEstimator can be built from it."""
    # Checks rule 1 (TPUEstimator).
    name = type(estimator).__name__
    self.header('tf.contrib.learn.%s built at %s' % (name, site))
    self.report([check_results.failed(
        'estimator', 'tf.contrib.learn.%s at %s: TPUEstimator is built from tf.estimator code only (a model_fn '
        'returning an EstimatorSpec, an input_fn taking params, train/evaluate instead of fit), so its TPU run '
        'cannot be judged.' % (name, site),
        'port it to tf.estimator.Estimator first (`python -m estimator_tpu.port FILES` lists the changes), then '
        'judge it again.')])

  def on_build(self, estimator, given, site):
    """(args, kwargs) to build the estimator with, and the findings of its construction."""
    # Checks rule 1 (TPUEstimator), rule 2 (where the TPU is: its RunConfig), rule 3 (params).
    kind = interception.kind_of(estimator)
    if kind == 'tpu':
      return self._tpu_estimator(given, site)
    name = type(estimator).__name__
    self.header('%s built at %s' % (name, site))
    if kind == 'estimator':
      findings = [check_results.failed(
          'estimator', '%s built at %s: only TPUEstimator trains on a TPU.' % (
              'tf.estimator.Estimator' if name in ('Estimator', 'EstimatorV2') else
              '%s (a tf.estimator.Estimator)' % name, site),
          'build tf.estimator.tpu.TPUEstimator(model_fn, config=tf.estimator.tpu.RunConfig(...), use_tpu=..., '
          'train_batch_size=..., eval_batch_size=..., predict_batch_size=...) with the same model_fn and params.')]
      findings += self._params_refused(given.get('params'), site)
    else:
      findings = [check_results.failed(
          'estimator', 'premade estimator %s built at %s has no TPU version: TensorFlow has no TPUEstimator of '
          'it.' % (name, site), 'write its model as a model_fn returning tf.estimator.tpu.TPUEstimatorSpec and '
          'build a TPUEstimator with it (docs/MIGRATION.md, rule 1).')]
    return (), given, findings

  def _tpu_estimator(self, given, site):
    self.header('TPUEstimator built at %s' % site)
    findings = []
    config = given.get('config')
    if config is not None and not isinstance(config, TPU_RUN_CONFIG):
      message = _refusal(dict(given, params=None))
      findings.append(check_results.failed(
          'run_config', 'TPUEstimator given a %s.%s at %s; TensorFlow refuses it: "%s"' % (
              type(config).__module__.split('.')[0], type(config).__name__, site, message),
          'build the config with tf.estimator.tpu.RunConfig(tpu_config=tf.estimator.tpu.TPUConfig('
          'iterations_per_loop=...), model_dir=..., ...) (what tpu/run_config.py:build_run_config does).'))
      given = dict(given, config=as_tpu_run_config(config))
    refused = self._params_refused(given.get('params'), site)
    findings += refused
    self._runs_on_tpu = self._runs_on_tpu or bool(given.get('use_tpu', True))
    given = dict(given, use_tpu=False)
    if refused:
      given['params'] = without_reserved(given.get('params'))
    return (), given, findings

  def _params_refused(self, params, site):
    """The params line when TensorFlow's TPUEstimator refuses the program's params (it sets batch_size and
    context itself)."""
    if params is None:
      return []
    message = _refusal({'model_fn': _no_model, 'params': params}) or _unwritable(params)
    if not message:
      return []
    keys = [key for key in RESERVED_PARAMS if key in as_params_dict(params)]
    held = ('hold %s' % ', '.join(repr(key) for key in keys)) if keys else 'are a %s' % type(params).__name__
    return [check_results.failed(
        'params', 'params given at %s %s; TensorFlow\'s TPUEstimator refuses them: "%s"' % (site, held, message),
        "pass params as a dict without 'batch_size' or 'context' (vars(args) of an argparse Namespace), give "
        "TPUEstimator train_batch_size=/eval_batch_size=/predict_batch_size=, and read params['batch_size'] (per "
        "core on a TPU) in input_fn.")]

  # --- calls ------------------------------------------------------------------------------------------------------

  def on_call(self, call):
    built = call.built
    what = '%s.%s called at %s' % (built.class_name, MODE_CALLS[call.mode], call.site)
    if call.mode in built.judged_modes:
      return
    built.judged_modes.add(call.mode)
    self.header(what)
    if call.mode == interception.EXPORT:
      self.report([check_results.skipped('export', 'the export at %s runs on the CPU into a scratch folder; the TPU '
                                                   'serving graph is not built here.' % call.site)])
      return
    try:
      results = self._judge(call)
    except Exception as e:  # pylint: disable=broad-except -- the user's code under TensorFlow: one line
      if os.environ.get(DEBUG_VARIABLE):
        traceback.print_exc()
      results = [check_results.failed('program', 'judging %s failed: %s: %s' % (
          what, type(e).__name__, check_results.error_line(e)), 'make the call run on the CPU first.')]
    self.report([self._located(result, call) for result in results])

  def _judge(self, call):
    built = call.built
    if built.kind == 'premade':
      return self._premade_input(call)
    shape, source = self._slice(built)
    plan, input_fn, model_fn = self._plan(call, shape, source)
    signatures = user_code.check_signatures(built.model_fn, call.input_fn)
    checks, deployment = readiness.check_mode(model_fn, input_fn, plan, call.mode)
    if call.mode == interception.EVAL and deployment.evaluate is not None and deployment.evaluate.specs:
      names = metric_names(deployment.evaluate.specs[0])
      if names is not None:
        self._tpu_metrics[id(built)] = names
    return [signatures] + checks

  def _premade_input(self, call):
    """A premade estimator: its model_fn is TensorFlow's and has no TPU version; its input_fn is checked as a TPU
    host would call it."""
    shape, _ = self._slice(call.built)
    global_batch = self.batch_size or observed_batch(call.built.estimator, call.input_fn, call.mode) or \
        8 * shape.num_cores
    per_core = max(1, global_batch // shape.num_cores)
    input_fn = user_code.as_tpu_input_fn(call.input_fn, call.mode, lambda: TPU_RUN_CONFIG())
    # judged under the TPUConfig the port writes, as a plain Estimator's input is: TensorFlow's PER_HOST_V1 input
    # takes (features, labels) tensors in training and evaluation, and hands input_fn a host's batch
    tensors_ok = input_checks.tensors_accepted(TPU_RUN_CONFIG().tpu_config, call.mode)
    batch = max(1, global_batch // shape.num_hosts) if tensors_ok else per_core
    results, _ = input_checks.check_input(input_fn, {'batch_size': batch}, tensors_ok=tensors_ok, per_core=per_core,
                                          cores=shape.num_cores // shape.num_hosts if tensors_ok else 1)
    skipped = check_results.skipped('xla_compile', 'a premade estimator\'s model_fn is TensorFlow\'s own, with no '
                                    'TPU version: nothing of it to compile (see estimator).')
    return [user_code.check_signatures(None, call.input_fn)] + results + [skipped]

  def _slice(self, built):
    if self.shape is not None:
      return self.shape, self.slice_source
    config = built.estimator.config
    cores = getattr(getattr(config, 'tpu_config', None), 'num_shards', None) or cli.DEFAULT_NUM_SHARDS
    return accelerator_types.shape_from_cores(cores), 'num_shards=%d of the program\'s TPUConfig%s' % (
        cores, '' if getattr(getattr(config, 'tpu_config', None), 'num_shards', None) else ' (unset: a v2-8/v3-8)')

  def _plan(self, call, shape, source):
    """(TpuPlan, input_fn, model_fn): the TPUEstimator a TPU run of this call would use, on `shape`."""
    built = call.built
    estimator = built.estimator
    tpu_config = self._tpu_config(built, shape)
    if built.kind == 'tpu':
      context = estimator._ctx  # pylint: disable=protected-access -- TPUEstimator keeps its batch sizes there
      batches = dict(train_batch_size=self.batch_size or context._train_batch_size,  # pylint: disable=protected-access
                     eval_batch_size=context._eval_batch_size,  # pylint: disable=protected-access
                     predict_batch_size=context._predict_batch_size)  # pylint: disable=protected-access
      eval_on_tpu = context._eval_on_tpu  # pylint: disable=protected-access
    else:
      observed = observed_batch(estimator, call.input_fn, call.mode)
      batch = self.batch_size or observed or 8 * shape.num_cores
      batches = dict(train_batch_size=batch if call.mode == interception.TRAIN else self.batch_size or batch,
                     eval_batch_size=observed or batch, predict_batch_size=observed or batch)
      eval_on_tpu = True
    if batches['train_batch_size'] is None:
      batches['train_batch_size'] = 8 * shape.num_cores
    make_config = lambda: tpu_config  # pylint: disable=unnecessary-lambda-assignment
    model_fn, train_input_fn = user_code.as_tpu_estimator_calls(built.model_fn, call.input_fn, make_config)
    input_fn = train_input_fn if call.mode == interception.TRAIN else user_code.as_tpu_input_fn(
        call.input_fn, call.mode, make_config)
    tpu = tf.estimator.tpu.TPUEstimator(model_fn=model_fn, config=tpu_config,
                                        params=taken_params(built.params), use_tpu=True,
                                        eval_on_tpu=eval_on_tpu, **batches)
    eval_steps = call.kwargs.get('steps') if call.mode == interception.EVAL else None
    plan = readiness.TpuPlan(tpu, shape, slice_source=source, eval_steps=eval_steps)
    return plan, input_fn, model_fn

  def _tpu_config(self, built, shape):
    """The program's TPU RunConfig with the slice's core count, or (not yet a TPUEstimator) the one `--write` builds
    for it: TPUConfig(iterations_per_loop, num_shards) with TensorFlow's defaults for the rest (PER_HOST_V1 input,
    which takes an iterator's tensors in training and evaluation), keeping the program's checkpoint cadence."""
    config = built.estimator.config
    if isinstance(config, TPU_RUN_CONFIG):
      tpu_config = config.tpu_config._replace(num_shards=shape.num_cores)
    else:
      tpu_config = tf.estimator.tpu.TPUConfig(iterations_per_loop=cli.DEFAULT_ITERATIONS, num_shards=shape.num_cores)
    return TPU_RUN_CONFIG(model_dir=topology.scratch_model_dir(), tpu_config=tpu_config,
                          save_checkpoints_steps=config.save_checkpoints_steps)

  def _located(self, result, call):
    """A FAIL's message, ending with the place in the program it is about."""
    if result.status != check_results.FAIL or result.name in SITED_CHECKS:
      return result
    built = call.built
    if result.name in INPUT_CHECKS:
      place = 'input_fn %s' % interception.defined(call.input_fn)
    elif result.name in MODEL_CHECKS:
      place = 'model_fn %s' % interception.defined(built.model_fn)
    elif result.name in ESTIMATOR_CHECKS:
      place = 'estimator built at %s, ' % built.site
    else:
      place = ''
    where = ' (%s%s at %s)' % (place, MODE_CALLS[call.mode], call.site)
    if result.name in MODEL_CHECKS and built.kind == 'tpu' and built.use_tpu is False:
      # BERT-style builders choose TPU code by the program's own setting (model_fn_builder(use_tpu=FLAGS.use_tpu)),
      # which params['use_tpu'] does not change: the check saw model_fn as the program builds it for the CPU.
      where += ('; the program built this TPUEstimator with use_tpu=False, so a model_fn that takes its TPU '
                'choices from the program (a builder\'s use_tpu, a flag) was checked as built for the CPU: judge '
                'it again with the program\'s TPU flags (e.g. -- train.py --use_tpu=true)')
    return result._replace(message=result.message.rstrip() + where)

  # --- after a call -----------------------------------------------------------------------------------------------

  def evaluated(self, call, metrics):
    """The CPU's evaluate() metrics against the TPU path's metric_fn: a metric only the CPU reports is dropped on
    a TPU."""
    names = self._tpu_metrics.pop(id(call.built), None)
    if names is None or not isinstance(metrics, dict):
      return
    cpu = sorted(set(metrics) - CPU_METRICS)
    missing = [name for name in cpu if name not in names]
    if missing:
      result = check_results.failed(
          'eval_metric_names', 'the CPU evaluation reports %s, but on a TPU metric_fn gives only %s: %s would be '
          'missing from the TPU run\'s results.' % (', '.join(cpu), ', '.join(names) or 'nothing',
                                                     ', '.join(missing)),
          'compute every metric in the metric_fn of eval_metrics=(metric_fn, tensors), on the TPU as on the CPU.')
    else:
      result = check_results.passed('eval_metric_names', 'on a TPU metric_fn gives every metric the CPU evaluation '
                                    'reports: %s.' % (', '.join(cpu) or 'none but the loss'))
    self.report([self._located(result, call)])

  def crash(self, error, site):
    """The program raised: one line, with where."""
    # Checks rule 13 (readiness): the program itself must run on the CPU.
    op = _tpu_only_op(error)
    if op and self._runs_on_tpu:
      # Run with its TPU flags, the program's own model_fn builds TPU ops (CrossShardOptimizer's CrossReplicaSum)
      # that no CPU kernel runs: the TPU path was judged above; the CPU run the judge makes of each call cannot be.
      self.report([check_results.skipped('program', 'the program built its TPUEstimator with use_tpu=True, and its '
                                         'model_fn then builds %s, a TPU op the CPU has no kernel for, so its calls '
                                         'cannot also run here (at %s); the TPU path of each call is judged above, '
                                         'and what the program does after this call is not.' % (op, site))])
      return
    if self.predictions_cut:
      # Anything after a cut predict may come from the cut: next(predictions) past it (StopIteration), predictions
      # compared with every label of the input.
      where, steps = self.predictions_cut
      stopped = isinstance(error, StopIteration) or 'StopIteration' in str(error)
      self.report([check_results.skipped('program', 'the program raised %s at %s after the predict call at %s, '
                                         'which the judge let make only %d predictions (--steps) where the input '
                                         'holds more%s: what the program does with its predictions is not judged; '
                                         'run with a larger --steps.' % (
                                             type(error).__name__, site, where, steps,
                                             ' (it read past them)' if stopped else ''))])
      return
    moved = self._in_moved_model_dir(error)
    if moved:
      # The program reads its own model_dir (lists its checkpoints, opens what training wrote there) after a call:
      # the judge ran that call in a scratch folder, where the program would have found it.
      self.report([check_results.skipped('program', 'the program looked in its model_dir %s (%s at %s), which the '
                                         'judge replaced with a scratch folder so that the program\'s own is never '
                                         'written; what the program does after this is not judged.' % (
                                             moved, type(error).__name__, site))])
      return
    shortened = (' (after training %d steps, as the judge trains each call: a model trained that little may be '
                 'what fails; if `python PROGRAM` runs through, judge it with a larger --steps)' % self.trained_steps
                 if self.trained_steps else '')
    self.report([check_results.failed('program', 'the program raised %s: %s at %s%s.' % (
        type(error).__name__, check_results.error_line(error).rstrip('.'), site, shortened),
        'fix it where it fails: the program raises this on the CPU too, without any TPU.')])

  def _in_moved_model_dir(self, error):
    """The model_dir an error names (`NotFoundError: model/ ...`, `No such file: 'model/eval'`) where the scratch
    folder that replaced it holds what the program looked for: the program's own run would have found it there.
    None for a path the scratch folder lacks too (a file the program never writes)."""
    message = str(error)
    for asked, scratch in sorted(self.model_dirs_moved.items()):
      stem = asked.rstrip('/\\')
      pattern = r'(?<![\w.\-])' + re.escape(stem) + r'(?=$|[/\\\'"\s:;,)])([/\\][^\'"\s:;,)]*)?'
      for match in re.finditer(pattern, message):
        inside = (match.group(1) or '').strip('/\\')
        if os.path.exists(os.path.join(scratch, inside)):
          return asked
    return None


def _tpu_only_op(error):
  """The TPU op a CPU run raised for want of a kernel ("No OpKernel was registered to support Op
  'CrossReplicaSum'"), else None."""
  match = re.search(r"No OpKernel was registered to support Op '(\w+)'", str(error))
  if match and (match.group(1) in TPU_ONLY_OPS or match.group(1).startswith('TPU')):
    return match.group(1)
  return None


def _no_model(features, labels, mode, params):
  del features, labels, mode, params


def _refusal(kwargs):
  """What TensorFlow's TPUEstimator constructor raises for these arguments (its own words), or ''."""
  wanted = dict((key, kwargs[key]) for key in ('model_fn', 'config', 'params') if kwargs.get(key) is not None)
  wanted.setdefault('model_fn', _no_model)
  wanted.setdefault('config', TPU_RUN_CONFIG(model_dir=topology.scratch_model_dir()))
  try:
    tpu_estimator.TPUEstimator(use_tpu=False, train_batch_size=8, **wanted)
  except (ValueError, TypeError) as e:
    return check_results.error_line(e)
  return ''


def as_tpu_run_config(config):
  """A tf.estimator.tpu.RunConfig with what the program's RunConfig says (model_dir, seed, cadences)."""
  keep = {}
  for name in ('model_dir', 'tf_random_seed', 'save_summary_steps', 'save_checkpoints_steps',
               'save_checkpoints_secs', 'keep_checkpoint_max', 'log_step_count_steps', 'session_config'):
    value = getattr(config, name, None)
    if value is not None:
      keep[name] = value
  if 'save_checkpoints_steps' in keep:
    keep.pop('save_checkpoints_secs', None)
  return TPU_RUN_CONFIG(**keep)


def _unwritable(params):
  """What writing params['batch_size'] raises, as TPUEstimator does before each model_fn and input_fn call
  (tpu_estimator.py: HParams get add_hparam, anything else item assignment), or ''."""
  if isinstance(params, dict) or hasattr(params, 'add_hparam'):
    return ''
  try:
    copy.copy(params)['batch_size'] = 1
  except Exception as e:  # pylint: disable=broad-except -- what Python says to it
    return 'params[\'batch_size\'] = ... raises %s: %s' % (type(e).__name__, check_results.error_line(e))
  return ''


def taken_params(params):
  """The program's params if TPUEstimator takes them, else what it would take of them (a dict)."""
  if params is not None and not _refusal({'params': params}) and not _unwritable(params):
    return params
  return without_reserved(params)


def as_params_dict(params):
  """params as the dict TPUEstimator needs (it writes params['batch_size']): an argparse Namespace's or HParams'
  values."""
  if params is None or isinstance(params, dict):
    return params or {}
  if hasattr(params, 'values') and callable(params.values):  # HParams
    try:
      return dict(params.values())
    except (TypeError, ValueError):
      pass
  return dict(vars(params)) if hasattr(params, '__dict__') else {}


def without_reserved(params):
  """What TPUEstimator would take of the program's params: a dict without the keys it sets itself."""
  return dict((key, value) for key, value in as_params_dict(params).items() if key not in RESERVED_PARAMS)


def observed_batch(estimator, input_fn, mode):
  """The batch the program's input_fn yields on the CPU (its global batch), read from the first batch when its
  shape is not static; None when it cannot be told."""
  if input_fn is None:
    return None
  with tf.Graph().as_default():
    try:
      result = estimator._call_input_fn(input_fn, mode)  # pylint: disable=protected-access -- as the CPU calls it
    except Exception:  # pylint: disable=broad-except -- the checks say what is wrong with input_fn
      return None
    if input_checks.is_dataset(result):
      first = tf.nest.flatten(tf.data.get_output_shapes(result))
      if first and first[0].ndims and tf.compat.dimension_value(first[0][0]) is not None:
        return tf.compat.dimension_value(first[0][0])
      batch, _ = input_checks.read_one_batch(result)
      values = [value for value in tf.nest.flatten(batch) if value is not None and getattr(value, 'ndim', 0)]
      return int(values[0].shape[0]) if values else None
    tensors = [t for t in tf.nest.flatten(result) if isinstance(t, tf.Tensor) and t.shape.ndims]
    return tf.compat.dimension_value(tensors[0].shape[0]) if tensors else None


def metric_names(spec):
  """The names of the metrics the TPU path's metric_fn gives, called as TensorFlow calls it on the host, or None."""
  if not isinstance(spec, tf.estimator.tpu.TPUEstimatorSpec) or not spec.eval_metrics:
    return None
  fn, tensors = spec.eval_metrics
  with tf.Graph().as_default():
    try:
      placeholders = tf.nest.map_structure(lambda t: tf.placeholder(t.dtype, t.shape), tensors)
      host_call = tpu_estimator._OutfeedHostCall  # pylint: disable=protected-access
      metrics = host_call.create_cpu_hostcall({'eval_metrics': (fn, placeholders)})['eval_metrics']
    except Exception:  # pylint: disable=broad-except -- eval_step names what is wrong with them
      return None
  return sorted(metrics)


