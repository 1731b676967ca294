"""Which shard an input_fn call reads, and how exact evaluation pads it: tpu/input_fn.py's sums.

TPU rule 3 (params): under PER_HOST_V2 TPUEstimator calls input_fn once per TPU host, with
params['context'], whose current_input_fn_deployment() is (host device, invocation index, invocation
count, replicas fed), and does not split the data itself. SLICED input is one call (index 0 of 1) on
host 0; the CPU path has no 'context': one call reads everything. Shard by the invocation index, not
context.current_host (docs/MIGRATION.md, rule 3).
"""
from absl import logging

from estimator_tpu.runtime.errors import UserError


def input_deployment(params):
  """(invocation index, invocation count) of this input_fn call: which shard of the data it reads.
  """
  context = params.get('context')
  if context is None:
    return 0, 1
  _, index, count, _ = context.current_input_fn_deployment()
  return index, count


def shard_size(num_examples, index, count):
  """How many of `num_examples` Dataset.shard(count, index) keeps: the examples index, index +
  count, ..."""
  return len(range(index, num_examples, count))


def eval_steps(num_examples, global_batch_size, invocations=1):
  """Steps of full global batches that let each of `invocations` input_fn calls feed its whole
  shard.

  Each call feeds global_batch_size / invocations examples per step (its cores' share), and the
  largest shard, the first, sets the pace: every call runs the same number of steps.
  """
  per_step = global_batch_size // invocations
  return -(-shard_size(num_examples, 0, invocations) // per_step)  # ceil


def eval_padding(num_examples, global_batch_size):
  """(steps, padding rows) that cover `num_examples` with full batches of `global_batch_size`, for
  the one input_fn call of evaluation on the CPU or with SLICED input on the TPU."""
  steps = eval_steps(num_examples, global_batch_size)
  return steps, steps * global_batch_size - num_examples


def exact_eval_plan(split, num_examples, global_batch_size, requested_steps=None):
  """(examples scored, steps) of exact evaluation: the whole split, or its first `requested_steps`
  batches.

  A UserError when more steps are asked for than the split fills: the TPU would run them on padding
  alone.
  """
  steps, padding = eval_padding(num_examples, global_batch_size)
  if requested_steps is not None and requested_steps > steps:
    raise UserError('--eval_steps=%d asks for more batches than the %s split fills (%d batches of '
                    '%d).' % (requested_steps, split, steps, global_batch_size),
                    'lower --eval_steps, or leave it unset to evaluate the whole split.')
  logging.info('Evaluating on %s: %d real examples + %d padding = %d batches of %d.', split,
               num_examples, padding, steps, global_batch_size)
  if requested_steps is None:
    return num_examples, steps
  scored = min(num_examples, requested_steps * global_batch_size)
  logging.info('--eval_steps=%d: evaluating only the first %d examples.', requested_steps, scored)
  return scored, requested_steps


def invocation_padding(num_examples, global_batch_size, steps, index, count):
  """Weight-0 rows that call `index` of `count` appends to its shard so that it feeds exactly
  `steps` steps.

  Raises a UserError when the shard does not fit into `steps` steps: then some examples would never
  be scored, so evaluation could no longer be exact.
  """
  per_step = global_batch_size // count
  shard = shard_size(num_examples, index, count)
  if shard > steps * per_step:
    raise UserError(
        'exact evaluation is impossible: input_fn call %d of %d holds %d examples, but %d steps of '
        '%d (the global eval batch %d over %d calls) take only %d.'
        % (index, count, shard, steps, per_step, global_batch_size, count, steps * per_step),
        'evaluate for eval_steps(num_examples, global batch, %d) = %d steps; the number of '
        'input_fn calls comes from the TPU configuration (1 with SLICED evaluation input or '
        'evaluation on the CPU).' % (count, eval_steps(num_examples, global_batch_size, count)))
  return steps * per_step - shard


def require_even_split(params, global_batch_size, kind):
  """UserError unless the examples this call feeds per step split evenly over the TPU cores it
  feeds: TPU rule 16 (even batches), which TensorFlow does not check for SLICED input."""
  context = params.get('context')
  if context is None:
    return
  _, _, count, replicas = context.current_input_fn_deployment()
  if (global_batch_size // count) % replicas:
    raise UserError('the %s batch %d does not split evenly over the %d TPU cores.'
                    % (kind, global_batch_size, context.num_replicas),
                    'pass --eval_batch_size divisible by %d.' % context.num_replicas)


def require_one_call(params):
  """UserError unless prediction input is read by one input_fn call (TPU rule 14 (pod slices)):
  predictions come back in input order only from one call, and TensorFlow refuses per-host
  prediction on more than one host anyway."""
  _, count = input_deployment(params)
  if count != 1:
    raise UserError('prediction input would be read by %d input_fn calls, one per TPU host.'
                    % count,
                    'predict with TPUConfig(eval_training_input_configuration=SLICED), as '
                    'tpu/run_config.py:build_run_config does.')
