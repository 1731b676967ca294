"""Configuration checks: batch split, checkpoint cadence, eval coverage, Cloud Storage paths, TPU preflight."""
from estimator_tpu.readiness import results
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import cluster as tpu_cluster

CLOUD_STORAGE_PREFIX = 'gs://'


def check_batch_split(plan):
  """Every batch is split evenly over the cores; TPUEstimator refuses sizes that are not divisible."""
  batches = [(kind, size) for kind, size in (('train', plan.train_batch_size), ('eval', plan.eval_batch_size),
                                             ('predict', plan.predict_batch_size)) if size is not None]
  uneven = [(kind, size) for kind, size in batches if size % plan.num_shards]
  if uneven:
    return results.failed(
        'batch_split',
        '%s not divisible by num_shards=%d: each of the %d cores must get the same number of examples.'
        % (', '.join('%s batch %d' % pair for pair in uneven), plan.num_shards, plan.num_shards),
        'use multiples of %d, e.g. %s.' % (plan.num_shards, ', '.join(
            '%s batch %d' % (kind, nearest_multiple(size, plan.num_shards)) for kind, size in uneven)))
  return results.passed('batch_split', '%s split evenly over %d cores (%d train examples per core).' % (
      ', '.join('%s %d' % pair for pair in batches), plan.num_shards, plan.per_shard_batch_size))


def nearest_multiple(value, factor):
  return max(factor, int(round(float(value) / factor)) * factor)


def check_checkpoint_cadence(plan):
  """Checkpoints can only be written between device loops, i.e. at multiples of iterations_per_loop."""
  save, loop = plan.save_checkpoints_steps, plan.iterations_per_loop
  if save is None:
    return results.skipped('checkpoint_cadence', 'no save_checkpoints_steps given.')
  if save % loop:
    first = -(-save // loop) * loop
    second = -(-(first + save) // loop) * loop
    return results.failed(
        'checkpoint_cadence',
        'save_checkpoints_steps=%d is not a multiple of iterations_per_loop=%d; the host only regains control '
        'between device loops, so checkpoints land at steps %d, %d, ... instead.' % (save, loop, first, second),
        'make save_checkpoints_steps a multiple of iterations_per_loop (e.g. %d).' % nearest_multiple(save, loop))
  return results.passed('checkpoint_cadence', 'a checkpoint every %d steps = every %s of %d steps.'
                        % (save, results.plural(save // loop, 'device loop'), loop))


def check_eval_coverage(plan):
  """evaluate(steps=N) on TPU takes N full batches: fewer examples never get scored, more end the input early."""
  if plan.eval_examples is None or plan.eval_steps is None or plan.eval_batch_size is None:
    return results.skipped('eval_coverage', 'eval split size, eval steps or eval batch size not given.')
  covered = plan.eval_steps * plan.eval_batch_size
  summary = '%d eval steps of %d = %d examples; the eval split has %d' % (
      plan.eval_steps, plan.eval_batch_size, covered, plan.eval_examples)
  if covered < plan.eval_examples:
    divisor = largest_fitting_batch(plan.eval_examples, plan.eval_batch_size, plan.num_shards)
    better = ('use an eval batch size that divides %d and is a multiple of num_shards=%d (e.g. %d), or '
              % (plan.eval_examples, plan.num_shards, divisor)) if divisor else ''
    return results.failed(
        'eval_coverage', '%s, so %d are never scored (TPU evaluation only takes full batches).'
        % (summary, plan.eval_examples - covered),
        '%spad the split with zero-weight examples to a multiple of the eval batch.' % better)
  padding = covered - plan.eval_examples
  if plan.eval_padded and 0 < padding < plan.eval_batch_size:
    return results.passed('eval_coverage', '%s + %d padding rows of weight 0: every example is scored exactly once.'
                          % (summary, padding))
  if covered > plan.eval_examples:
    return results.failed('eval_coverage', '%s: the input would end early, which TPU evaluation cannot handle.'
                          % summary, 'ask for at most %d steps.' % (plan.eval_examples // plan.eval_batch_size))
  return results.passed('eval_coverage', summary + ': every example is scored exactly once.')


def largest_fitting_batch(examples, at_most, num_shards):
  for size in range(at_most, num_shards - 1, -1):
    if examples % size == 0 and size % num_shards == 0:
      return size
  return None


def check_cloud_storage(plan):
  """TPU workers read input and write checkpoints themselves; they cannot see this VM's disk."""
  if not plan.names_cloud_tpu:
    return results.skipped('cloud_storage', 'no Cloud TPU named (tpu_name/master); on one, model_dir and data_dir '
                                            'must be gs:// paths.')
  paths = [('model_dir', plan.model_dir)] + ([('data_dir', plan.data_dir)] if plan.data_dir is not None else [])
  local = [(name, path) for name, path in paths if not (path or '').startswith(CLOUD_STORAGE_PREFIX)]
  if local:
    return results.failed(
        'cloud_storage', '%s not on Cloud Storage; the TPU workers cannot read or write this VM\'s disk.'
        % ', '.join('%s=%r' % pair for pair in local),
        'put them in a bucket the TPU can use, e.g. --model_dir=gs://BUCKET/model --data_dir=gs://BUCKET/data.')
  return results.passed('cloud_storage', ', '.join('%s=%s' % pair for pair in paths) + ' on Cloud Storage.')


def check_tpu_reachable(plan, timeout_secs):
  """With a TPU named: resolves it (tpu_name) and connects to its worker port over TCP, within the timeout."""
  if not plan.names_cloud_tpu:
    return results.skipped('tpu_reachable', 'no TPU named (tpu_name/master); nothing to connect to.')
  try:
    cluster = None
    if plan.tpu_name:
      cluster = tpu_cluster.resolve_tpu_cluster(plan.tpu_name, plan.tpu_zone, plan.gcp_project)
    address = tpu_cluster.tpu_master_address(plan.master, cluster)
    preflight.require_reachable(address, timeout_secs)
  except UserError as e:
    return results.failed('tpu_reachable', e.problem, e.fix)
  return results.passed('tpu_reachable', '%s accepts TCP connections (a listener answers; the probe cannot tell '
                                         'a healthy TPU worker from any other).' % address)


def check_config(plan, timeout_secs):
  return [check_batch_split(plan), check_checkpoint_cadence(plan), check_eval_coverage(plan),
          check_cloud_storage(plan), check_tpu_reachable(plan, timeout_secs)]
