"""What input_fn(params) yields at the per-core batch size: a Dataset of static shapes and TPU dtypes."""
import tensorflow.compat.v1 as tf
# What TPU infeed takes is TensorFlow's own list, checked when the infeed is built (infeed_dequeue_tuple); there
# is no public API for it.
from tensorflow.python.tpu.ops import tpu_ops

from estimator_tpu.porting.readiness import results
from estimator_tpu.runtime.errors import UserError

# TF 1.15: bool, int32, int64, bfloat16, float32, complex64, uint32; TF 2.15 adds uint8 and int8.
INFEED_DTYPES = tpu_ops._SUPPORTED_INFEED_DTYPES  # pylint: disable=protected-access
TPU_DTYPES = tuple(sorted(INFEED_DTYPES, key=lambda dtype: dtype.name))
DTYPE_FIXES = {
    tf.float64: 'cast float64 to float32 in input_fn (the TPU has no float64)',
    tf.uint8: 'cast uint8 to float32 (pixels) or int32 in input_fn (TF 1.15\'s TPU infeed has no uint8; TF 2.15\'s '
              'has, so the cast also keeps the input portable)',
    tf.string: 'decode strings into numbers in input_fn (tf.io.parse_example, tf.io.decode_raw, a vocabulary '
               'lookup); the TPU has no string type',
}


def check_input(input_fn, params):
  """Returns (results, batch): checks of input_fn's Dataset, and one (features, labels) batch as numpy (or None)."""
  # Checks rule 3 (params).
  with tf.Graph().as_default():
    try:
      dataset = input_fn(params)
    except UserError as e:
      return [results.failed('input_fn', e.problem, e.fix)], None
    except Exception as e:  # pylint: disable=broad-except -- user code: report it as a check, not a traceback
      return [input_fn_error('input_fn(params) raised %s: %s' % (type(e).__name__, e))], None
    if not isinstance(dataset, tf.data.Dataset):
      return [results.failed('input_fn', 'input_fn returned %s, not a tf.data.Dataset.' % type(dataset).__name__,
                             'return a tf.data.Dataset of (features, labels); on TPU, TPUEstimator feeds each '
                             'host from one (PER_HOST_V2 input).')], None
    components = named_components(tf.data.get_output_shapes(dataset), tf.data.get_output_types(dataset))
    checks = [check_static_shapes(components), check_batch_dimension(components, params['batch_size']),
              check_dtypes(components)]
    batch, error = read_one_batch(dataset)
  if error is not None:
    checks.append(input_fn_error('reading one batch failed: %s' % error))
  return checks, batch


def input_fn_error(message):
  # Checks rule 3 (params).
  return results.failed('input_fn', message, "make input_fn(params) return a tf.data.Dataset of (features, labels) "
                                             "batched with params['batch_size'] that reads without errors.")


def named_components(shapes, types):
  """[(name, shape, dtype)] with readable names: features['image'], labels, ..."""
  if isinstance(shapes, tuple) and len(shapes) == 2:
    parts = [('features', shapes[0], types[0]), ('labels', shapes[1], types[1])]
  else:
    parts = [('features', shapes, types)]
  named = []
  for prefix, shape, dtype in parts:
    named.extend(_flatten_named(prefix, shape, dtype))
  return named


def _flatten_named(prefix, shapes, types):
  if isinstance(shapes, dict):
    return [item for key in sorted(shapes) for item in _flatten_named("%s['%s']" % (prefix, key), shapes[key],
                                                                     types[key])]
  if isinstance(shapes, (tuple, list)):
    return [item for i, (shape, dtype) in enumerate(zip(shapes, types))
            for item in _flatten_named('%s[%d]' % (prefix, i), shape, dtype)]
  return [(prefix, shapes, types)]


def check_static_shapes(components):
  # Checks rule 4 (static shapes).
  dynamic = [(name, shape) for name, shape, _ in components if not shape.is_fully_defined()]
  if dynamic:
    return results.failed(
        'input_shapes', '%s: TPU infeed needs fully static shapes.' % ', '.join(
            '%s has shape %s' % (name, results.format_shape(shape)) for name, shape in dynamic),
        "batch with dataset.batch(params['batch_size'], drop_remainder=True) and give every other dimension a "
        'fixed size (tf.reshape or set_shape in the map function).')
  return results.passed('input_shapes', 'static: %s.' % ', '.join(
      '%s %s' % (name, results.format_shape(shape)) for name, shape, _ in components))


def check_batch_dimension(components, batch_size):
  """On TPU, params['batch_size'] is the per-core batch; an input_fn that ignores it feeds every core too much."""
  # Checks rule 3 (params).
  wrong = [(name, shape[0]) for name, shape, _ in components
           if shape.ndims and shape[0] is not None and shape[0] != batch_size]
  if wrong:
    return results.failed(
        'input_batch', "%s, but params['batch_size'] is %d per core." % (', '.join(
            '%s has batch dimension %d' % pair for pair in wrong), batch_size),
        "batch with params['batch_size']: TPUEstimator sets it to the per-core batch on TPU.")
  return results.passed('input_batch', "batches of params['batch_size'] = %d (per core)." % batch_size)


def check_dtypes(components):
  # Checks rule 15 (TPU dtypes).
  bad = [(name, dtype) for name, _, dtype in components if dtype not in TPU_DTYPES]
  if bad:
    fixes = []
    for _, dtype in bad:
      fix = DTYPE_FIXES.get(dtype, 'cast %s to float32 or int32 in input_fn' % dtype.name)
      if fix not in fixes:
        fixes.append(fix)
    return results.failed(
        'input_dtypes', '%s: the TPU takes %s.' % (', '.join('%s is %s' % (name, dtype.name) for name, dtype in bad),
                                                   '/'.join(d.name for d in TPU_DTYPES)),
        '; '.join(fixes) + '.')
  return results.passed('input_dtypes', '%s: all in the TPU infeed\'s dtypes of TensorFlow %s (%s).' % (
      ', '.join('%s %s' % (name, dtype.name) for name, _, dtype in components), tf.__version__,
      ', '.join(dtype.name for dtype in TPU_DTYPES)))


def first_batch(input_fn, params):
  """((features, labels) as numpy, None) of input_fn(params)'s first batch, or (None, the error's first line)."""
  with tf.Graph().as_default():
    try:
      dataset = input_fn(dict(params))
    except UserError as e:
      return None, e.problem
    except Exception as e:  # pylint: disable=broad-except -- user code
      return None, '%s: %s' % (type(e).__name__, e)
    return read_one_batch(dataset)


def read_one_batch(dataset):
  """Returns ((features, labels) as numpy, None), or (None, the error's first line). Call in dataset's graph."""
  try:
    iterator = tf.data.make_initializable_iterator(dataset)
  except (ValueError, TypeError) as e:
    return None, str(e)
  element = iterator.get_next()
  with tf.Session() as session:
    try:
      session.run(iterator.initializer)
      value = session.run(element)
    except tf.errors.OpError as e:
      return None, e.message.splitlines()[0]
  if not (isinstance(value, tuple) and len(value) == 2):
    value = (value, None)
  return value, None
