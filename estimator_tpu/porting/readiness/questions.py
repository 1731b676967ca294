"""The questions both readiness checks ask, answered once: TPUEstimator's (`mnist_tpu.py --mode=check_tpu`,
`python -m estimator_tpu.readiness`) and the Keras route's (`mnist_keras.py --mode=check_tpu`).

Each function takes plain values (shapes, dtypes, sizes, op names), so the two checks, which find those values in
different places (a TPUEstimator and its input_fns; a Keras model and its datasets), give the same answer in the
same words: which runtime the slice offers, static shapes, infeed dtypes, the batch split over the cores, what a
device loop does to checkpoint and summary cadence, float64 and ops XLA rejects in a compiled step, and bfloat16.
"""
import tensorflow.compat.v1 as tf
# What TPU infeed takes is TensorFlow's own list, checked when the infeed is built (infeed_dequeue_tuple); there
# is no public API for it.
from tensorflow.python.tpu.ops import tpu_ops

from estimator_tpu.porting.readiness import check_results
from estimator_tpu.tpu import run_config

ESTIMATOR, KERAS = 'TPUEstimator', 'Keras'
MAX_LISTED = 5
PY_FUNC_OPS = frozenset(['PyFunc', 'PyFuncStateless', 'EagerPyFunc'])
# TF 1.15: bool, int32, int64, bfloat16, float32, complex64, uint32; TF 2.15 adds uint8 and int8.
INFEED_DTYPES = tpu_ops._SUPPORTED_INFEED_DTYPES  # pylint: disable=protected-access
TPU_DTYPES = tuple(sorted(INFEED_DTYPES, key=lambda dtype: dtype.name))
DTYPE_FIXES = {
    tf.float64: 'cast float64 to float32 in %s (the TPU has no float64)',
    tf.uint8: 'cast uint8 to float32 (pixels) or int32 in %s (TF 1.15\'s TPU infeed has no uint8; TF 2.15\'s has, '
              'so the cast also keeps the input portable)',
    tf.string: 'decode strings into numbers in %s (tf.io.parse_example, tf.io.decode_raw, a vocabulary lookup); the '
               'TPU has no string type',
}


def tpu_runtime(shape, route):
  """Which TensorFlow runtime the slice's generation offers, and whether `route` runs on it."""
  # Checks rule 2 (where the TPU is).
  generation = shape.generation
  multi_host = shape.num_hosts > 1
  if route == ESTIMATOR and generation.pjrt_only:
    return check_results.failed(
        'tpu_runtime', '%s is a %s slice, which Cloud TPU offers TensorFlow only with the PJRT runtime (%s; "TPU '
        'v5e and future TPU generations only support PJRT", cloud.google.com/tpu/docs/runtimes). TPUEstimator was '
        'written for the StreamExecutor runtime and is reported failing on PJRT ("No TPU platform registered", '
        'tensorflow/tensorflow#90807; not run here).'
        % (shape.name, generation.name, generation.software_version(multi_host=multi_host)),
        'run the Keras route on it: `python mnist_keras.py --mode=check_tpu --tpu_type=%s ...` (the same flags), '
        'then `python mnist_keras.py --tpu_name=local ...` on the TPU VM; or rent a v2, v3 or v4 slice for '
        'TPUEstimator (tpu-vm-tf-2.15.1-se).' % shape.name)
  version = generation.software_version(multi_host=multi_host)
  if generation.pjrt_only:
    runtime = 'only with the PJRT runtime, %s' % version
    uses = 'TPUStrategy, the TPU API of TensorFlow 2, is the route there'
  else:
    runtime = 'with the StreamExecutor runtime, %s, or PJRT (-pjrt)' % version
    uses = ('TPUEstimator needs StreamExecutor: create the TPU VM with the -se version' if route == ESTIMATOR else
            'TPUStrategy runs on either')
  cores = '' if generation.device_count_verified else (
      '; %d cores: one TensorFlow device per %s chip (megacore) is assumed, not confirmed for TensorFlow (the '
      'run counts its own)' % (shape.num_cores, generation.name))
  return check_results.passed('tpu_runtime', '%s: Cloud TPU offers TensorFlow 2.15+ on %s TPU VMs %s '
                                       '(cloud.google.com/tpu/docs/runtimes); %s%s.'
                        % (shape.name, generation.name, runtime, uses, cores))


def static_shapes(name, components, fix):
  """`components`: [(name, TensorShape, dtype)] of what feeds the TPU; all must be fully static."""
  # Checks rule 4 (static shapes).
  dynamic = [(part, shape) for part, shape, _ in components if not shape.is_fully_defined()]
  if dynamic:
    return check_results.failed(name, '%s: TPU infeed needs fully static shapes.' % ', '.join(
        '%s has shape %s' % (part, check_results.format_shape(shape)) for part, shape in dynamic), fix)
  return check_results.passed(name, 'static: %s.' % ', '.join(
      '%s %s' % (part, check_results.format_shape(shape)) for part, shape, _ in components))


def infeed_dtypes(name, components, where='input_fn'):
  """Every component has a dtype the TPU infeed takes (TensorFlow's own list); `where` the input is made."""
  # Checks rule 15 (TPU dtypes).
  bad = [(part, dtype) for part, _, dtype in components if dtype not in TPU_DTYPES]
  if bad:
    fixes = []
    for _, dtype in bad:
      fix = DTYPE_FIXES.get(dtype, 'cast %s to float32 or int32 in %%s' % dtype.name) % where
      if fix not in fixes:
        fixes.append(fix)
    return check_results.failed(
        name, '%s: the TPU takes %s.' % (', '.join('%s is %s' % (part, dtype.name) for part, dtype in bad),
                                         '/'.join(d.name for d in TPU_DTYPES)),
        '; '.join(fixes) + '.')
  return check_results.passed(name, '%s: all in the TPU infeed\'s dtypes of TensorFlow %s (%s).' % (
      ', '.join('%s %s' % (part, dtype.name) for part, _, dtype in components), tf.__version__,
      ', '.join(dtype.name for dtype in TPU_DTYPES)))


def batch_split(batches, replicas, cores='cores', count='num_shards'):
  """Every global batch ((kind, size) pairs) splits evenly over the `replicas` TPU cores (TPUEstimator's
  num_shards; TPUStrategy's num_replicas_in_sync)."""
  # Checks rule 16 (even batches).
  uneven = [(kind, size) for kind, size in batches if size % replicas]
  if uneven:
    return check_results.failed(
        'batch_split',
        '%s not divisible by %s=%d: each of the %d %s must get the same number of examples.'
        % (', '.join('%s batch %d' % pair for pair in uneven), count, replicas, replicas, cores),
        'use multiples of %d, e.g. %s.' % (replicas, ', '.join(
            '%s batch %d' % (kind, nearest_multiple(size, replicas)) for kind, size in uneven)))
  return check_results.passed('batch_split', '%s split evenly over %d %s (per %s: %s).' % (
      ', '.join('%s %d' % pair for pair in batches), replicas, cores, cores[:-1],
      ', '.join('%s %d' % (kind, size // replicas) for kind, size in batches)))


def nearest_multiple(value, factor):
  return max(factor, int(round(float(value) / factor)) * factor)


def loop_cadence(name, what, every, loop, loop_name, rounding):
  """`what` (checkpoints, summaries) every `every` steps when the host sees the device only between loops of `loop`
  steps: the cadence that really happens is `every` rounded up to whole loops; `rounding` says why, when it is."""
  # Checks rule 8 (iterations per loop).
  if every is None:
    return check_results.skipped(name, 'no %s cadence given.' % name.split('_')[0])
  aligned = run_config.aligned_checkpoint_steps(every, loop)
  cadence = '%s every %d steps = every %s of %d steps' % (
      what, aligned, check_results.plural(aligned // loop, loop_name), loop)
  if aligned != every:
    return check_results.passed(name, '%s: %s.' % (rounding, cadence))
  return check_results.passed(name, cadence + '.')


def float64_in_step(ops, step):
  """`ops`: [(type, name)] of the compiled step that compute in float64."""
  # Checks rule 15 (TPU dtypes).
  if ops:
    return check_results.failed(
        'step_dtypes', '%s of %s compute in float64, which the TPU does not have: %s.'
        % (check_results.plural(len(ops), 'op'), step, list_ops(ops)),
        'keep the model in float32 (or bfloat16): cast float64 inputs in the input and create float32 variables '
        '(a Keras layer: dtype=\'float32\').')
  return check_results.passed('step_dtypes', 'no float64 in %s.' % step)


def list_ops(pairs):
  shown = ', '.join("%s '%s'" % pair for pair in pairs[:MAX_LISTED])
  return shown + (' and %d more' % (len(pairs) - MAX_LISTED) if len(pairs) > MAX_LISTED else '')


def xla_failure(name, step, rejected, error_line, route=ESTIMATOR):
  """The failure of a step XLA did not compile: the ops it rejects (type, name), or its first error line."""
  # Checks rule 18 (XLA ops).
  if rejected:
    return check_results.failed(name, 'XLA cannot compile %s of %s: %s.' % (
        check_results.plural(len(rejected), 'op'), step, list_ops(rejected)), fix_for_rejected([t for t, _ in rejected],
                                                                                         route))
  return check_results.failed(name, 'XLA failed on %s: %s' % (step, error_line),
                        'make the step compile with XLA: shapes and shape arguments (reshape targets, slice sizes, '
                        '...) must be known when the step is compiled, not computed from data.')


def fix_for_rejected(op_types, route=ESTIMATOR):
  where = 'input_fn' if route == ESTIMATOR else 'the tf.data input'
  fixes = []
  if any(t in PY_FUNC_OPS for t in op_types):
    fixes.append('tf.py_func/tf.numpy_function/tf.py_function call back into Python on the host and cannot run '
                 'on a TPU core: do that work in %s (it runs on the host CPU) or write it with TensorFlow ops' % where)
  if any('Summary' in t for t in op_types):
    fixes.append('summaries cannot be written from inside the TPU computation: %s' % (
        'pass the tensors to TPUEstimatorSpec(host_call=...)' if route == ESTIMATOR else
        'return the values as metrics and let the TensorBoard callback write them on the host'))
  others = sorted(set(t for t in op_types if t not in PY_FUNC_OPS and 'Summary' not in t))
  if others:
    fixes.append('replace %s with ops XLA compiles (see the Cloud TPU list of available TensorFlow ops), or move '
                 'that work into %s, which runs on the host' % ('/'.join(others), where))
  return '; '.join(fixes) + '.'


def precision(requested, variable_dtypes, compute_dtypes, output_dtype, how):
  """--precision against what the compiled step holds: variables, the dtypes the network computes in, its output.

  `variable_dtypes` and `compute_dtypes` are sets of dtype names, `output_dtype` the logits' dtype name, `how`
  where bfloat16 comes from in this route (bfloat16_scope, or the mixed_bfloat16 policy).
  """
  # Checks rule 20 (bfloat16).
  # float64 is step_dtypes' finding (rule 15); here only what bfloat16 (or float16) would do to the variables and
  # the logits.
  narrow = {'bfloat16', 'float16'}
  problems = []
  if variable_dtypes & narrow:
    problems.append('variables of %s (a checkpoint and the optimizer need float32)'
                    % '/'.join(sorted(variable_dtypes & narrow)))
  if output_dtype in narrow:
    problems.append('logits in %s (the softmax and loss need float32)' % output_dtype)
  # requested None (a user's model_fn, whose intent the check does not know): report what the step holds.
  if requested == 'bfloat16' and 'bfloat16' not in compute_dtypes:
    problems.append('no bfloat16 computation although --precision=bfloat16')
  if requested == 'float32' and 'bfloat16' in compute_dtypes:
    problems.append('bfloat16 computation although --precision=float32')
  if problems:
    return check_results.failed('precision', 'the step has %s.' % '; '.join(problems),
                          'compute the network in bfloat16 %s, keep the variables float32 and cast the logits to '
                          'float32 before the loss.' % how)
  if requested == 'bfloat16':
    return check_results.passed('precision', 'the network computes in bfloat16 (%s), its variables and logits stay '
                                       'float32, so checkpoints, the optimizer and the loss are float32 as with '
                                       '--precision=float32.' % how)
  if requested is None and 'bfloat16' in compute_dtypes:
    return check_results.passed('precision',
                                'the step computes partly in bfloat16 (%s) and keeps its variables and its '
                                       'output float32.' % how)
  return check_results.passed('precision', 'float32 throughout; --precision=bfloat16 would compute the network in '
                                     'bfloat16 (%s) with float32 variables and logits.' % how)
