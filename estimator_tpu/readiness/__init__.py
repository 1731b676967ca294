"""TPU readiness without a TPU: what would fail on a Cloud TPU, found on the CPU before paying for one.

Point it at your own TPUEstimator pieces:

  from estimator_tpu import readiness
  plan = readiness.TpuPlan(num_shards=8, train_batch_size=1024, eval_batch_size=1000, predict_batch_size=1000,
                           iterations_per_loop=100, save_checkpoints_steps=1000,
                           eval_examples=10000, eval_steps=10, model_dir='gs://b/model', tpu_name='my-tpu')
  results = readiness.check_tpu_readiness(model_fn, train_input_fn, plan)
  sys.exit(readiness.print_results(results))

`model_fn(features, labels, mode, params)` and `input_fn(params)` are TPUEstimator's; the check calls them with
the params a TPU run gets (params['use_tpu'] = True, params['batch_size'] = the per-core batch). It never
contacts a TPU, except for a bounded TCP probe of the one named in the plan.
"""
from estimator_tpu.readiness import config_checks
from estimator_tpu.readiness import input_checks
from estimator_tpu.readiness import results
from estimator_tpu.readiness import step_checks
from estimator_tpu.readiness.plan import TpuPlan
from estimator_tpu.readiness.results import CheckResult, print_results
from estimator_tpu.runtime import preflight

__all__ = ['CheckResult', 'TpuPlan', 'check_tpu_readiness', 'print_results']
STEP_CHECKS = ('xla_compile', 'step_shapes', 'step_dtypes', 'step_summaries', 'gradient_all_reduce', 'global_step')


def check_tpu_readiness(model_fn, input_fn, plan, probe_timeout_secs=preflight.DEFAULT_TIMEOUT_SECS):
  """Runs every check; returns [CheckResult] in order: input_fn, TPU training step, configuration, TPU."""
  checks = []
  if plan.per_shard_batch_size < 1:
    reason = 'the train batch (%d) is smaller than num_shards (%d).' % (plan.train_batch_size, plan.num_shards)
    checks += [results.skipped(name, reason) for name in ('input_fn',) + STEP_CHECKS]
  else:
    params = plan.tpu_params()
    input_results, batch = input_checks.check_input(input_fn, params)
    checks += input_results + check_step(model_fn, params, plan, batch)
  return checks + config_checks.check_config(plan, probe_timeout_secs)


def check_step(model_fn, params, plan, batch):
  """Builds the TPU training step for one core from `batch` and checks it (see step_checks)."""
  if batch is None:
    return [results.skipped(name, 'needs one batch from input_fn.') for name in STEP_CHECKS]
  try:
    step = step_checks.build_tpu_step(model_fn, params, plan.num_shards, batch)
    summary_ops = step_checks.summaries_in_train_step(model_fn, params, plan.num_shards, batch)
  except step_checks.NotATpuEstimatorSpec as e:
    return [e.result()] + [results.skipped(name, 'model_fn returned no TPUEstimatorSpec.') for name in STEP_CHECKS]
  except Exception as e:  # pylint: disable=broad-except -- user code: report it as a check, not a traceback
    failure = results.failed(
        'xla_compile', 'model_fn failed to build the TPU training step: %s: %s' % (type(e).__name__, e),
        "make model_fn(features, labels, TRAIN, params) build with params['use_tpu'] = True and "
        "params['batch_size'] = %d, returning a loss and a train_op." % plan.per_shard_batch_size)
    return [failure] + [results.skipped(name, 'the step did not build.') for name in STEP_CHECKS[1:]]
  compiled = step_checks.check_xla_compile(step, plan.per_shard_batch_size)
  return compiled[:1] + [step_checks.check_step_shapes(step), step_checks.check_step_dtypes(step),
                         step_checks.check_step_summaries(summary_ops),
                         step_checks.check_all_reduce(step, plan.num_shards)] + compiled[1:]
