"""Check results and how they are printed: one line per check, citing its rule, each failure with its fix."""
import collections
import sys

PASS = 'PASS'
FAIL = 'FAIL'
SKIP = 'SKIP'
# The TPU rule each check is about (estimator_tpu/rules.py, docs/MIGRATION.md): its line cites it.
CHECK_RULES = {
    'signatures': 3, 'train_input': 3, 'input_fn': 3, 'input_batch': 3,
    'input_shapes': 4, 'step_shapes': 4,
    'model_fn_spec': 5, 'eval_step': 5, 'predict_step': 5,
    'gradient_all_reduce': 6,
    'step_summaries': 7, 'host_call': 7,
    'checkpoint_cadence': 8,
    'global_step': 9, 'eval_coverage': 9,
    'topology': 14, 'evaluate': 14, 'predict': 14,
    'input_dtypes': 15, 'step_dtypes': 15,
    'batch_split': 16,
    'cloud_storage': 17, 'storage_access': 17,
    'tpu_reachable': 2, 'tpu_runtime': 2,
    'xla_compile': 18,
    'precision': 20,
    # `readiness --run` (readiness/program_run.py): the program's estimators and calls.
    'estimator': 1, 'run_config': 2, 'params': 3, 'eval_metric_names': 5, 'program': 13, 'export': 13,
    # The Keras route's own checks (mnist_keras.py --mode=check_tpu, readiness/keras_checks.py).
    'dataset_batch': 3, 'dataset_shapes': 4, 'dataset_dtypes': 15, 'summary_cadence': 8,
    'keras_layers': 10, 'strategy_scope': 11, 'keras_checkpoint': 12,
    'keras_train_step': 18, 'keras_eval_step': 18, 'keras_predict_step': 18,
}


class CheckResult(collections.namedtuple('CheckResult', ['name', 'status', 'message', 'fix'])):
  """One check: `status` is PASS, FAIL or SKIP (could not be checked, e.g. no TPU named); FAILs carry a fix."""

  @property
  def passed(self):
    return self.status != FAIL

  @property
  def rule(self):
    return CHECK_RULES[self.name]

  def line(self):
    text = '%s %s (rule %d): %s' % (self.status, self.name, self.rule, self.message)
    return text + (' Fix: %s' % self.fix if self.status == FAIL and self.fix else '')


def error_line(error):
  """The line of an exception's message that says what went wrong: its first, or for an error TensorFlow's autograph
  raised inside converted code (a Dataset.map function: 'in converted code:' on TF 1.15, 'in user code:' on TF 2, and
  a trace), its last."""
  lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
  if not lines:
    return '(no message)'
  return lines[-1] if lines[0].startswith(('in converted code', 'in user code')) else lines[0]


def passed(name, message):
  return CheckResult(name, PASS, message, None)


def failed(name, message, fix):
  return CheckResult(name, FAIL, message, fix)


def skipped(name, message):
  return CheckResult(name, SKIP, message, None)


def print_results(results, stream=None):
  """Writes one line per check and a summary; returns the exit status (0 only if no check failed)."""
  stream = stream or sys.stdout
  for result in results:
    stream.write(result.line() + '\n')
  counts = collections.Counter(result.status for result in results)
  stream.write('TPU readiness: %d passed, %d failed, %d skipped.\n' % (counts[PASS], counts[FAIL], counts[SKIP]))
  stream.flush()
  return 1 if counts[FAIL] else 0


def plural(count, noun):
  return '%d %s%s' % (count, noun, '' if count == 1 else 's')


def format_shape(shape):
  """[128, 784], [?, 784] or <unknown rank> for a TensorShape."""
  if shape.ndims is None:
    return '<unknown rank>'
  return '[%s]' % ', '.join('?' if d is None else str(d) for d in shape.as_list())
