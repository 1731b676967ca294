"""The one exception type for mistakes a user can fix (bad flags, bad data, unreachable TPU, ...), and how a
program ends on one."""
import os
import shlex
import shutil
import sys

# The exit status of a program stopped by Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED_STATUS = 130

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


class Interrupted(Exception):
  """Ctrl-C, told as one line: where the run stopped, what it kept, and the command that goes on from there."""


def exit_on_user_error(fn, *args):
  """Returns fn(*args); a UserError instead ends the program with one `error: ... Fix: ...` line and status 1, and
  Ctrl-C with one `stopped: ...` line (an Interrupted's, or a general one) and status 130, never a traceback."""
  try:
    return fn(*args)
  except UserError as e:
    sys.stderr.write('error: %s\n' % e)
    sys.exit(1)
  except Interrupted as e:
    sys.stderr.write('stopped: %s\n' % e)
    sys.exit(INTERRUPTED_STATUS)
  except KeyboardInterrupt:
    sys.stderr.write('stopped: Ctrl-C; every file is written under a temporary name until it is complete, so '
                     'nothing was left half-written. Run the same command again: %s\n' % this_command())
    sys.exit(INTERRUPTED_STATUS)


def training_interrupted(mode, model_dir, step, latest, saved, training=True):
  """What Ctrl-C left: the step training reached, the last checkpoint (`latest`, of step `saved`), and the command
  that resumes from it, with the --model_dir the run used (the default one is new each run, so the same command
  would start from zero)."""
  kept = ('the last checkpoint is %s (step %d)' % (latest, saved) if latest
          else 'no checkpoint was written yet in %s' % model_dir)
  if step is not None and saved is not None:
    step = max(step, saved)  # Ctrl-C may land among the hooks of a step, after its checkpoint, before our count
  at = ' at step %d' % step if step is not None and training else ''
  return Interrupted('Ctrl-C%s (--mode=%s); %s. To %s: %s' % (
      at, mode, kept, 'resume' if training else 'run it again', this_command(model_dir=model_dir)))


def preparation_interrupted(data_dir):
  """Ctrl-C while the TFRecords were being prepared: all three splits are published together once complete
  (records.write_splits), so none was, and whatever was written under temporary names has been removed."""
  return Interrupted('Ctrl-C while preparing the TFRecords in %s; no split was published (they appear together, '
                     'once all are complete) and the temporary files are removed. To prepare them: %s'
                     % (data_dir, this_command()))


def this_command(**flags):
  """The command line this program was started with, ready to paste, with --NAME=VALUE for each of `flags` in
  place of (or after) what the user gave for it: e.g. the model_dir a run actually used."""
  args = list(sys.argv)
  for name, value in sorted(flags.items()):
    given = ('--%s' % name, '--%s=' % name)
    kept = []
    skip = False
    for arg in args[1:]:
      if skip:
        skip = False
      elif arg == given[0]:
        skip = True  # --model_dir DIR: its value is the next argument
      elif not arg.startswith(given[1]):
        kept.append(arg)
    args = args[:1] + kept + ['--%s=%s' % (name, value)]
  # `python -m tools.prepare_data` sees its file's path in argv[0], which would not run as a script.
  spec = getattr(sys.modules.get('__main__'), '__spec__', None)
  program = ['-m', spec.name] if spec is not None and spec.name else args[:1]
  return ' '.join(shlex.quote(arg) for arg in [_python()] + program + args[1:])


def _python():
  """`python` if that is what runs this program from PATH, else the interpreter's full path."""
  name = os.path.basename(sys.executable)
  found = shutil.which(name)
  return name if found and os.path.realpath(found) == os.path.realpath(sys.executable) else sys.executable


def essence(error):
  """The line of a TensorFlow error message that says what went wrong, without node names and stack traces."""
  message = getattr(error, 'message', None) or str(error)
  for line in message.splitlines():
    if line.strip() and not line[0].isspace() and not line.startswith(_LOCATION_LINES):
      return line.strip()
  return type(error).__name__
