"""Check results and how they are printed: one line per check, each failure with its fix."""
import collections
import sys

PASS = 'PASS'
FAIL = 'FAIL'
SKIP = 'SKIP'


class CheckResult(collections.namedtuple('CheckResult', ['name', 'status', 'message', 'fix'])):
  """One check: `status` is PASS, FAIL or SKIP (could not be checked, e.g. no TPU named); FAILs carry a fix."""

  @property
  def passed(self):
    return self.status != FAIL

  def line(self):
    text = '%s %s: %s' % (self.status, self.name, self.message)
    return text + (' Fix: %s' % self.fix if self.status == FAIL and self.fix else '')


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
