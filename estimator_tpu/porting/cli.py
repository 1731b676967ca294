"""`python -m estimator_tpu.port` (and the console script estimator-tpu-port): the port report, or with --write,
--diff or --verify the port itself.

The report (report/) reads source only and runs without LibCST; the port (rewrite/) and its proof (proof/) are
only reached when one of their options is given.
"""
import sys

from estimator_tpu.porting.report import cli as report_cli
from estimator_tpu.porting.rewrite import cli as rewrite_cli

PORT_OPTIONS = ('--write', '--diff', '--verify')


def ports(argv):
  """Whether the command asks for the port itself rather than the report."""
  return any(arg.split('=', 1)[0] in PORT_OPTIONS for arg in argv)


def main(argv=None, stdout=None, stderr=None):
  argv = sys.argv[1:] if argv is None else argv
  if ports(argv):
    return rewrite_cli.main(argv, stdout, stderr)
  return report_cli.main(argv, stdout, stderr)
