"""Configuration checks: batch split, checkpoint cadence, eval coverage, Cloud Storage paths, TPU preflight."""
from estimator_tpu.porting.readiness import questions
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import cluster as tpu_cluster
from estimator_tpu.tpu import deployment as tpu_deployment

CLOUD_STORAGE_PREFIX = 'gs://'


def check_batch_split(plan, modes=('train', 'eval', 'infer')):
  """Every batch (of the modes named, ModeKeys) is split evenly over the cores; TPUEstimator refuses sizes that are
  not divisible."""
  # Checks rule 16 (even batches).
  batches = [(kind, size) for kind, size, mode in (('train', plan.train_batch_size, 'train'),
                                                   ('eval', plan.eval_batch_size, 'eval'),
                                                   ('predict', plan.predict_batch_size, 'infer'))
             if size is not None and mode in modes]
  return questions.batch_split(batches, plan.num_shards)


def check_checkpoint_cadence(plan):
  """Checkpoints can only be written between device loops; build_run_config rounds the cadence up to them."""
  # Checks rule 8 (iterations per loop).
  loop = plan.iterations_per_loop
  save = plan.requested_checkpoint_steps or plan.save_checkpoints_steps
  return questions.loop_cadence(
      'checkpoint_cadence', 'a checkpoint', save, loop, 'device loop',
      'save_checkpoints_steps=%s is not a multiple of iterations_per_loop=%d; TPUEstimator saves only between '
      'device loops, so tpu/run_config.py rounds it up, as the run will' % (save, loop))


def check_eval_coverage(plan, invocations=1):
  """evaluate(steps=N) on TPU takes N full batches: fewer examples never get scored, more end the input early.

  `invocations` is the number of input_fn calls TensorFlow makes for evaluation (1 for SLICED input or on the
  CPU, one per host for per-host input): each feeds its shard, padded on its own when the input pads.
  """
  # Checks rule 9 (steps).
  if plan.eval_examples is None or plan.eval_steps is None or plan.eval_batch_size is None:
    return check_results.skipped('eval_coverage', 'eval split size, eval steps or eval batch size not given.')
  if plan.eval_padded:
    return check_padded_coverage(plan, invocations)
  covered = plan.eval_steps * plan.eval_batch_size
  summary = '%s: %d eval steps of %d = %d examples; the split has %d' % (
      plan.eval_split, plan.eval_steps, plan.eval_batch_size, covered, plan.eval_examples)
  if covered < plan.eval_examples:
    divisor = largest_fitting_batch(plan.eval_examples, plan.eval_batch_size, plan.num_shards)
    better = ('use an eval batch size that divides %d and is a multiple of num_shards=%d (e.g. %d), or '
              % (plan.eval_examples, plan.num_shards, divisor)) if divisor else ''
    return check_results.failed(
        'eval_coverage', '%s, so %d are never scored (TPU evaluation only takes full batches).'
        % (summary, plan.eval_examples - covered),
        '%spad the split with zero-weight examples to a multiple of the eval batch.' % better)
  if covered > plan.eval_examples:
    return check_results.failed('eval_coverage', '%s: the input would end early, which TPU evaluation cannot handle.'
                          % summary, 'ask for at most %d steps.' % (plan.eval_examples // plan.eval_batch_size))
  return check_results.passed('eval_coverage', summary + ': every example is scored exactly once.')


def check_padded_coverage(plan, invocations):
  """Each input_fn call pads its own shard with weight-0 rows to eval_steps steps of its share of the batch."""
  # Checks rule 9 (steps).
  steps, per_step = plan.eval_steps, plan.eval_batch_size // invocations
  shards = [tpu_deployment.shard_size(plan.eval_examples, index, invocations) for index in range(invocations)]
  calls = ('1 input_fn call' if invocations == 1 else
           '%d input_fn calls, one per host, each feeding %d examples per step' % (invocations, per_step))
  summary = '%s: %d examples, %s: %d steps of %d' % (plan.eval_split, plan.eval_examples, calls, steps,
                                                     plan.eval_batch_size)
  missed = [shard - steps * per_step for shard in shards if shard > steps * per_step]
  if missed:
    return check_results.failed(
        'eval_coverage', '%s leave %d examples unscored.' % (summary, sum(missed)),
        'evaluate for %d steps (the largest shard over its share of the batch).'
        % tpu_deployment.eval_steps(plan.eval_examples, plan.eval_batch_size, invocations))
  padding = [steps * per_step - shard for shard in shards]
  if invocations == 1:
    return check_results.passed('eval_coverage', '%s = %d real + %d padding rows of weight 0: every example is scored '
                                           'exactly once.' % (summary, shards[0], padding[0]))
  return check_results.passed('eval_coverage', '%s; real + weight-0 padding rows per call: %s: every example is scored '
                                         'exactly once.' % (summary, ', '.join(
                                             '%d + %d' % pair for pair in zip(shards, padding))))


def largest_fitting_batch(examples, at_most, num_shards):
  for size in range(at_most, num_shards - 1, -1):
    if examples % size == 0 and size % num_shards == 0:
      return size
  return None


def check_cloud_storage(plan):
  """TPU Node workers read input and write checkpoints themselves; they cannot see this VM's disk."""
  # Checks rule 17 (Cloud Storage).
  if not plan.names_cloud_tpu:
    return check_results.skipped('cloud_storage',
                                 'no Cloud TPU named (tpu_name/master); on one, model_dir and data_dir '
                                            'must be gs:// paths.')
  if plan.on_tpu_vm:
    return check_results.skipped('cloud_storage', "a TPU VM (tpu_name='local') reads and writes this machine's disk "
                                            'itself: local paths work there.')
  paths = [('model_dir', plan.model_dir)] + ([('data_dir', plan.data_dir)] if plan.data_dir is not None else [])
  local = [(name, path) for name, path in paths if not (path or '').startswith(CLOUD_STORAGE_PREFIX)]
  if local:
    return check_results.failed(
        'cloud_storage', '%s not on Cloud Storage; the TPU workers cannot read or write this VM\'s disk.'
        % ', '.join('%s=%r' % pair for pair in local),
        'put them in a bucket the TPU can use, e.g. --model_dir=gs://BUCKET/model --data_dir=gs://BUCKET/data.')
  return check_results.passed('cloud_storage', ', '.join('%s=%s' % pair for pair in paths) + ' on Cloud Storage.')


def check_tpu_reachable(plan, timeout_secs):
  """With a TPU named: resolves it (tpu_name) and connects to its worker port over TCP, within the timeout; on a
  TPU VM (tpu_name='local') looks for the TPU's device files instead."""
  # Checks rule 2 (where the TPU is).
  if not plan.names_cloud_tpu:
    return check_results.skipped('tpu_reachable', 'no TPU named (tpu_name/master); nothing to connect to.')
  try:
    cluster = None
    if plan.tpu_name:
      cluster = tpu_cluster.resolve_tpu_cluster(plan.tpu_name, plan.tpu_zone, plan.gcp_project)
    address = tpu_cluster.tpu_master_address(plan.master, cluster)
    attached = tpu_cluster.require_tpu_reachable(address, timeout_secs=timeout_secs)
  except UserError as e:
    return check_results.failed('tpu_reachable', e.problem, e.fix)
  if attached:
    return check_results.passed('tpu_reachable', 'a TPU is attached to this machine (%s).' % ', '.join(attached))
  return check_results.passed('tpu_reachable', '%s accepts TCP connections (a listener answers; the probe cannot tell '
                                         'a healthy TPU worker from any other).' % address)


def check_config(plan, timeout_secs):
  return [check_batch_split(plan), check_checkpoint_cadence(plan), check_cloud_storage(plan),
          check_tpu_reachable(plan, timeout_secs)]
