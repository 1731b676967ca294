"""The one exception type for mistakes a user can fix (bad flags, bad data, unreachable TPU, ...)."""
import sys


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
