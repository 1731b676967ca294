"""The one exception type for mistakes a user can fix (bad flags, bad data, unreachable TPU, ...), and how a
program ends on one."""
import sys

# Parts of TensorFlow's error messages that say where an op was defined rather than what went wrong.
_LOCATION_LINES = ('Graph execution error', 'Detected at node', 'Node:', 'Original stack trace', '[[',
                   'Errors may have originated', 'Caused by op')


class UserError(Exception):
  """A problem the user caused and can fix; its message names both.

  Entry points catch it, print the message on one line and exit non-zero, so a user mistake never ends in
  a bare traceback.
  """

  def __init__(self, problem, fix):
    super(UserError, self).__init__('%s Fix: %s' % (problem.rstrip(), fix))
    self.problem = problem
    self.fix = fix


def exit_on_user_error(fn, *args):
  """Returns fn(*args); a UserError instead ends the program with one `error: ... Fix: ...` line and status 1."""
  try:
    return fn(*args)
  except UserError as e:
    sys.stderr.write('error: %s\n' % e)
    sys.exit(1)


def essence(error):
  """The line of a TensorFlow error message that says what went wrong, without node names and stack traces."""
  message = getattr(error, 'message', None) or str(error)
  for line in message.splitlines():
    if line.strip() and not line[0].isspace() and not line.startswith(_LOCATION_LINES):
      return line.strip()
  return type(error).__name__
