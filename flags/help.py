"""--help for the programs: their own flags, grouped by what they are about, and nothing else.

absl's --help lists only the flags defined in the main module, and the programs define theirs in this package,
one module per concern, so absl's would list none; --helpfull lists every flag of absl and TensorFlow too (over
250 lines). `parse_flags` is the flags parser the programs give app.run: --help (-h, --helpshort) prints the
program's docstring and then one group per flags/ module that defined some of its flags, headed by that module's
first docstring line, and exits 0; everything else, --helpfull included, is absl's.
"""
import sys
import textwrap

from absl import app
from absl import flags

HELP_ARGS = ('-h', '-help', '--help', '-helpshort', '--helpshort', '-?')
WIDTH = 100
PACKAGE = __name__.rsplit('.', 1)[0] + '.'  # 'flags.'


def parse_flags(argv, fv=flags.FLAGS):
  """app.run's flags parser: grouped help for --help, absl's parsing for everything else."""
  if any(arg in HELP_ARGS for arg in argv[1:]):
    sys.stdout.write(program_help(fv, getattr(sys.modules.get('__main__'), '__doc__', None)))
    sys.exit(0)
  return app.parse_flags_with_usage(argv)


def program_help(fv, doc=None):
  """The help text: `doc`, then the flags of each flags/ module, in the order the program defined them."""
  parts = [doc.strip() + '\n'] if doc else []
  for module, module_flags in flag_groups(fv):
    parts.append('\n%s\n' % group_title(module))
    for flag in module_flags:
      parts.append(describe(flag))
  parts.append('\n--helpfull also lists the flags of absl and TensorFlow.\n')
  return ''.join(parts)


def flag_groups(fv):
  """[(module name, [flag, ...])] for the flags/ modules that defined flags in `fv`, in definition order."""
  return [(module, module_flags) for module, module_flags in fv.flags_by_module_dict().items()
          if module.startswith(PACKAGE) and module_flags]


def group_title(module):
  """The first line of the module's docstring: what its flags are about."""
  doc = getattr(sys.modules.get(module), '__doc__', None) or module
  return doc.strip().splitlines()[0]


def describe(flag):
  """`  --name=DEFAULT` (`  --name` when it has none) and the flag's help, wrapped and indented."""
  default = flag.default_as_str or ''  # absl quotes it: "'2000'"
  default = default[1:-1] if len(default) > 1 and default[0] == default[-1] == "'" else default
  head = '  --%s' % flag.name if flag.default is None else '  --%s=%s' % (flag.name, default)
  body = textwrap.fill(flag.help or '', WIDTH, initial_indent=' ' * 6, subsequent_indent=' ' * 6)
  return '%s\n%s\n' % (head, body)
