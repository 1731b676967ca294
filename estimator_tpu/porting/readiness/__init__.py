"""TPU readiness without a TPU: what would fail on a Cloud TPU, found on the CPU before paying for one.

Point it at your own TPUEstimator pieces:

  from estimator_tpu.porting import readiness
  from estimator_tpu.tpu import accelerator_types
  estimator = tf.estimator.tpu.TPUEstimator(model_fn, config=your_tpu_run_config, use_tpu=True,
                                            train_batch_size=4096, eval_batch_size=1024, predict_batch_size=1024)
  plan = readiness.TpuPlan(estimator, accelerator_types.parse_tpu_type('v3-32'), model_dir='gs://b/model',
                           tpu_name='my-v3-32', eval_examples=10000, eval_steps=10, eval_padded=True)
  results = readiness.check_tpu_readiness(model_fn, train_input_fn, plan, eval_input_fn=eval_input_fn,
                                          predict_input_fn=predict_input_fn)
  sys.exit(readiness.print_results(results))

`model_fn(features, labels, mode, params)` and the input_fns `input_fn(params)` are TPUEstimator's. The check
builds TensorFlow's own TPUEstimator for the planned slice, with the estimator's configuration
(readiness/topology.py), and lets it call them as on the TPU: the plan lines say what runs where, per host, and
TensorFlow's refusals become failures. One core's TRAIN, EVAL and PREDICT steps are then compiled with XLA on
this CPU. It never contacts a TPU, except for a bounded pre-flight of the one named in the plan. Every line cites
the TPU rule it is about (check_results.CHECK_RULES).
"""
import re

import tensorflow.compat.v1 as tf

from estimator_tpu.porting.readiness import config_checks
from estimator_tpu.porting.readiness import deployment_checks
from estimator_tpu.porting.readiness import input_checks
from estimator_tpu.porting.readiness import outfeed_checks
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import step_checks
from estimator_tpu.porting.readiness import topology
from estimator_tpu.porting.readiness.plan import TpuPlan
from estimator_tpu.porting.readiness.check_results import CheckResult, print_results
from estimator_tpu.runtime import preflight

__all__ = ['CheckResult', 'TpuPlan', 'check_mode', 'check_tpu_readiness', 'print_results']
STEP_CHECKS = ('xla_compile', 'step_shapes', 'step_dtypes', 'precision', 'step_summaries', 'gradient_all_reduce',
               'global_step')
EVAL = tf.estimator.ModeKeys.EVAL
PREDICT = tf.estimator.ModeKeys.PREDICT


def check_tpu_readiness(model_fn, input_fn, plan, probe_timeout_secs=preflight.DEFAULT_TIMEOUT_SECS,
                        eval_input_fn=None, predict_input_fn=None):
  """Runs every check; returns [CheckResult] in order: the plan per host, training, evaluation, prediction,
  configuration, the TPU itself."""
  deployment = deployment_checks.plan_deployment(plan, model_fn, input_fn, eval_input_fn, predict_input_fn)
  checks = list(deployment.results)
  checks += check_training(model_fn, input_fn, plan, deployment)
  checks += check_evaluation(model_fn, eval_input_fn, plan, deployment)
  checks += check_prediction(model_fn, predict_input_fn, plan, deployment)
  return checks + config_checks.check_config(plan, probe_timeout_secs)


def check_mode(model_fn, input_fn, plan, mode):
  """The checks of one mode (TRAIN, EVAL or PREDICT) with its input_fn, as `readiness --run` judges each call of a
  program: the plan line, that mode's checks, then the batch split and the checkpoint cadence. Returns (checks, the
  Deployment: the specs TensorFlow's TPUEstimator built are in its reports)."""
  deployment = deployment_checks.plan_deployment(plan, model_fn, *_only(input_fn, mode), modes=(mode,))
  checks = list(deployment.results)
  if mode == tf.estimator.ModeKeys.TRAIN:
    checks += check_training(model_fn, input_fn, plan, deployment)
    return checks + [config_checks.check_batch_split(plan, modes=(mode,)),
                     config_checks.check_checkpoint_cadence(plan)], deployment
  if deployment.shape is not None:
    report = deployment.evaluate if mode == EVAL else deployment.predict
    inference = check_evaluation if mode == EVAL else check_prediction
    lines = inference(model_fn, input_fn, plan, deployment)
    checks += lines[:1] + inference_input(input_fn, plan, report, mode) + lines[1:]
  return checks + [config_checks.check_batch_split(plan, modes=(mode,))], deployment


def _only(input_fn, mode):
  """plan_deployment's (train, eval, predict) input_fns with `input_fn` in `mode`'s place only."""
  return [input_fn if each == mode else None for each in (tf.estimator.ModeKeys.TRAIN, EVAL, PREDICT)]


REFUSED_BATCH = re.compile(r'batch size (\d+) must be divisible by number of replicas (\d+)')


def forward_at_a_fitting_batch(model_fn, input_fn, plan, mode, report):
  """When TensorFlow refuses the EVAL or PREDICT batch only because the cores do not divide it (batch_split says
  so), the step the TPU would run is still built, at the largest batch they divide (at least one per core): what
  leaves the TPU (eval_metrics, predictions) is judged even before the batch is mended. None otherwise."""
  refused = REFUSED_BATCH.search(str(report.decision.error or ''))
  if refused is None:
    return None
  batch, replicas = int(refused.group(1)), int(refused.group(2))
  fitting = max(replicas, batch // replicas * replicas)
  fitted = plan.with_batch(mode, fitting)
  deployment = deployment_checks.plan_deployment(fitted, model_fn, *_only(input_fn, mode), modes=(mode,))
  report = deployment.evaluate if mode == EVAL else deployment.predict
  if report is None or not report.result.passed:
    return None
  step = check_forward(model_fn, input_fn, fitted, report, 'eval_step' if mode == EVAL else 'predict_step', mode)
  return step._replace(message='at a batch of %d (%d does not divide over %d cores; see batch_split): %s' % (
      fitting, batch, replicas, step.message))


def inference_input(input_fn, plan, report, mode):
  """input_fn's dataset in EVAL or PREDICT, with the params TensorFlow gave its first call (SLICED: the global
  batch, split over the cores by TensorFlow), as input_checks checks the training input."""
  per_core = _per_core(plan, mode)
  if report is not None and report.calls:
    params = report.calls[0].params
  else:
    params = {'batch_size': per_core}
    if per_core < 1:
      return []  # fewer examples than cores: batch_split says so
  return input_checks.check_input(input_fn, params, batch_may_vary=mode == PREDICT,
                                  tensors_ok=input_checks.tensors_accepted(plan.tpu_config, mode),
                                  per_core=per_core)[0]


def _per_core(plan, mode):
  """One core's batch in EVAL or PREDICT."""
  batch = plan.eval_batch_size if mode == EVAL else plan.predict_batch_size
  return batch // plan.num_shards if batch else plan.per_shard_batch_size


def check_training(model_fn, input_fn, plan, deployment):
  """train_input (per host), input_fn's dataset, the compiled TRAIN step and host_call."""
  # Checks rule 7 (summaries on the host).
  train = deployment.train
  checks = [train.result] if train else []
  if plan.per_shard_batch_size < 1:
    # Fewer examples than cores (batch_split says so): the step is still built and judged, at one per core.
    fitted = plan.with_batch(tf.estimator.ModeKeys.TRAIN, plan.num_shards)
    again = deployment_checks.plan_deployment(fitted, model_fn, input_fn, modes=(tf.estimator.ModeKeys.TRAIN,))
    prefix = 'at a batch of %d (%d is fewer than the %d cores; see batch_split): ' % (
        fitted.train_batch_size, plan.train_batch_size, plan.num_shards)
    return checks + [line._replace(message=prefix + line.message)
                     for line in check_training(model_fn, input_fn, fitted, again)[1 if again.train else 0:]]
  # The params TensorFlow gives host 0 (its TPUContext included), or, if the slice could not be simulated, the
  # batch size alone.
  input_params = deployment.train_params or {'batch_size': plan.per_shard_batch_size}
  input_results, batch = input_checks.check_input(
      input_fn, input_params, tensors_ok=input_checks.tensors_accepted(plan.tpu_config, tf.estimator.ModeKeys.TRAIN),
      per_core=plan.per_shard_batch_size)
  if batch is not None and topology.param_value(input_params, 'batch_size') > plan.per_shard_batch_size:
    # A batch for several cores (PER_HOST_V1 input: per host; BROADCAST: global): TensorFlow splits it over
    # them, and one core's step takes its first rows.
    batch = tuple(None if part is None else tf.nest.map_structure(
        lambda value: value[:plan.per_shard_batch_size], part) for part in batch)
  checks += input_results + check_step(model_fn, plan.tpu_params(), plan, batch)
  spec = train.specs[0] if train and train.specs else None
  if batch is None or not train:
    return checks + [check_results.skipped('host_call', 'needs the training step.')]
  if train.decision.error is not None:
    return checks + [check_results.skipped('host_call', 'TensorFlow refused training on this slice (see train_input).')]
  checks.append(outfeed_checks.check_host_call(spec, plan.num_shards, plan.host_call_every_n_steps,
                                               train.graph_error))
  if train.graph_error and all(check.passed for check in checks):
    # TensorFlow refused the training graph for a reason none of the checks above names: say what it said.
    checks[0] = deployment_checks.with_graph_error(checks[0], train.graph_error)
  return checks


def check_step(model_fn, params, plan, batch):
  """Builds the TPU training step for one core from `batch` and checks it (see step_checks)."""
  # Checks rule 18 (XLA ops).
  if batch is None:
    return [check_results.skipped(name, 'needs one batch from input_fn.') for name in STEP_CHECKS]
  try:
    step = step_checks.build_tpu_step(model_fn, params, plan.num_shards, batch)
    summary_ops = step_checks.summaries_in_train_step(model_fn, params, plan.num_shards, batch)
  except step_checks.NotATpuEstimatorSpec as e:
    return [e.result()] + [check_results.skipped(name, 'model_fn returned no TPUEstimatorSpec.')
                           for name in STEP_CHECKS]
  except Exception as e:  # pylint: disable=broad-except -- user code: report it as a check, not a traceback
    refused = spec_argument_refused(e)
    if refused is not None:
      return [refused] + [check_results.skipped(name, 'model_fn did not return (see model_fn_spec).')
                          for name in STEP_CHECKS]
    fix = ("make model_fn(features, labels, TRAIN, params) build with params['use_tpu'] = True and "
           "params['batch_size'] = %d, returning a loss and a train_op." % plan.per_shard_batch_size)
    read = re.match(r"'dict' object has no attribute '(\w+)'", str(e)) if isinstance(e, AttributeError) else None
    if read:
      # An HParams, Namespace or object of the program's, read by attribute: TPUEstimator hands model_fn a dict.
      fix = ("model_fn reads params.%s as an attribute, and TPUEstimator gives model_fn its params as a dict (with "
             "its own batch_size and use_tpu): read params['%s'], and give the estimator a dict (see the params "
             "check)." % (read.group(1), read.group(1)))
    failure = check_results.failed(
        'xla_compile', 'model_fn failed to build the TPU training step: %s: %s' % (type(e).__name__, e), fix)
    return [failure] + [check_results.skipped(name, 'the step did not build.') for name in STEP_CHECKS[1:]]
  compiled = step_checks.check_xla_compile(step, plan.per_shard_batch_size)
  return compiled[:1] + [step_checks.check_step_shapes(step), step_checks.check_step_dtypes(step),
                         step_checks.check_precision(step, plan.precision),
                         step_checks.check_step_summaries(summary_ops),
                         step_checks.check_all_reduce(step, plan.num_shards)] + compiled[1:]


# EstimatorSpec's arguments that TPUEstimatorSpec has not, and what it has instead.
ESTIMATOR_SPEC_ONLY = {'eval_metric_ops': 'eval_metrics=(metric_fn, tensors), metric_fn returning the same metrics',
                       'scaffold': 'scaffold_fn=, a function returning the Scaffold',
                       'training_chief_hooks': 'training_hooks='}


def spec_argument_refused(error):
  """The model_fn_spec failure when model_fn built a TPUEstimatorSpec with an argument only EstimatorSpec takes (a
  TypeError in every mode, on the CPU too), else None."""
  # Checks rule 5 (TPUEstimatorSpec).
  text = str(error)
  named = [name for name in ESTIMATOR_SPEC_ONLY if "argument '%s'" % name in text]
  if not isinstance(error, TypeError) or not named:
    return None
  return check_results.failed(
      'model_fn_spec', 'model_fn builds a TPUEstimatorSpec with %s, which only EstimatorSpec takes: %s.' % (
          ', '.join('%s=' % name for name in named), text.strip().splitlines()[0]),
      'give TPUEstimatorSpec %s, all in the same statement.' % '; '.join(ESTIMATOR_SPEC_ONLY[n] for n in named))


def check_evaluation(model_fn, input_fn, plan, deployment):
  """evaluate (where, how many input_fn calls), eval_coverage (per call) and the compiled EVAL step."""
  report = deployment.evaluate
  if report is None:
    return [config_checks.check_eval_coverage(plan)]
  coverage = config_checks.check_eval_coverage(plan, invocations=len(report.calls) or 1)
  return [report.result, coverage, check_forward(model_fn, input_fn, plan, report, 'eval_step', EVAL)]


def check_prediction(model_fn, input_fn, plan, deployment):
  report = deployment.predict
  if report is None:
    return []
  return [report.result, check_forward(model_fn, input_fn, plan, report, 'predict_step', PREDICT)]


def check_forward(model_fn, input_fn, plan, report, name, mode):
  """One core's EVAL or PREDICT step, fed the first rows of the batch TensorFlow's first input_fn call yields."""
  if input_fn is None:
    return check_results.skipped(name, 'no %s input_fn given.' % name.split('_')[0])
  if not report.result.passed or not report.calls or not report.specs:
    fitted = forward_at_a_fitting_batch(model_fn, input_fn, plan, mode, report)
    if fitted is not None:
      return fitted
    return check_results.skipped(name, 'TensorFlow did not build the %s graph (see above).' % mode)
  if not report.decision.on_tpu:
    return check_results.skipped(name, 'evaluation runs on the CPU (eval_on_tpu=False): nothing of it runs on the TPU.')
  per_core = report.decision.model_fn_batch_size
  batch, error = input_checks.first_batch(input_fn, report.calls[0].params)
  if batch is None and 'End of sequence' in (error or ''):
    return check_results.skipped(name, 'the %s input yields no batch of params[\'batch_size\'] = %d (it has fewer '
                                       'examples): nothing to compile.' % (mode, report.calls[0].batch_size))
  if batch is None:
    return check_results.failed(name, 'reading one %s batch failed: %s' % (mode, error),
                          'make the %s input_fn yield (features, labels) that read without errors.' % mode)
  rows = tuple(None if part is None else tf.nest.map_structure(lambda value: value[:per_core], part)
               for part in batch)
  return outfeed_checks.check_forward_step(name, model_fn, plan.tpu_params(per_core), plan.num_shards, rows,
                                           report.specs[0], mode)
