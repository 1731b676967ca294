"""`python -m estimator_tpu.port` (and the console script estimator-tpu-port): the port report, or with --write,
--diff or --verify the port itself and its proof.

  python -m estimator_tpu.port PATH [PATH ...] [--format=json]      the report (report/): what must change
  python -m estimator_tpu.port --write OUT_DIR PATH [PATH ...]      the ported copy, every file of PATH in OUT_DIR
  python -m estimator_tpu.port --diff PATH [PATH ...]               the port as a unified diff; nothing is written
  python -m estimator_tpu.port --verify PORTED_DIR PATH [PATH ...] --model_fn=MODULE:NAME ...
                                                                    the proof of a port on the user's program

The report reads source only and runs without LibCST; the port (rewrite/) needs LibCST and is imported only once it
is known to be there. Exit status of the port: 0 ported with nothing left (or nothing to port), 1 ported with TODOs
left (the port report still lists them as required) or a --verify check failed, 2 bad input: one
`error: ... Fix: ...` line, nothing written, 3 the port failed on an edit of its own: one `error:` line naming the
file, nothing written (the report still lists the changes to make by hand).
"""
import argparse
import sys

from estimator_tpu.porting.proof import verify
from estimator_tpu.porting.report import cli as report_cli
from estimator_tpu.porting.rewrite import changes
from estimator_tpu.runtime.errors import UserError

PORT_OPTIONS = ('--write', '--diff', '--verify')


def ports(argv):
  """Whether the command asks for the port itself rather than the report."""
  return any(arg.split('=', 1)[0] in PORT_OPTIONS for arg in argv)


def main(argv=None, stdout=None, stderr=None):
  argv = sys.argv[1:] if argv is None else argv
  stdout = stdout or sys.stdout
  stderr = stderr or sys.stderr
  if ports(argv):
    return port_main(argv, stdout, stderr)
  return report_cli.main(argv, stdout, stderr)


EXIT_DONE, EXIT_TODOS, EXIT_BAD_INPUT, EXIT_PORT_FAILED = 0, 1, 2, 3
PROGRAM = 'python -m estimator_tpu.port'


def parse_port_args(argv):
  parser = argparse.ArgumentParser(
      prog=PROGRAM, description='Ports legacy tf.estimator code to TPUEstimator: every change with one right '
      'answer is made in a copy (each with its `# TPU rule N (name): why` comment), the rest is left with a '
      '`# TODO(tpu port, rule N): ...` (estimator_tpu/rules.py, docs/MIGRATION.md).',
      epilog='Exit status: 0 ported and nothing left to do (or nothing to port), 1 TODOs left or a --verify check '
             'failed, 2 bad input (nothing is written).')
  parser.add_argument('paths', nargs='+', metavar='PATH', help='the program: Python files or folders')
  mode = parser.add_mutually_exclusive_group(required=True)
  mode.add_argument('--write', metavar='OUT_DIR', help='write the ported copy of every file into OUT_DIR (new or '
                    'empty), at its place relative to the current folder')
  mode.add_argument('--diff', action='store_true', help='print the port as a unified diff; write nothing')
  mode.add_argument('--verify', metavar='PORTED_DIR', help='check the port in PORTED_DIR against PATH: '
                    'the port report, training and evaluation under TPUEstimator on this CPU, the same metrics '
                    'and losses as the original from its checkpoint, the readiness check')
  verify.add_arguments(parser)
  return parser.parse_args(argv)


def port_main(argv, stdout, stderr):
  """--write, --diff or --verify."""
  args = parse_port_args(argv)
  try:
    return run(args, stdout)
  except UserError as e:
    stderr.write('error: %s\n' % e)
    return EXIT_BAD_INPUT
  except changes.PortFailed as e:
    stderr.write('error: %s Nothing was written. This is a fault of the port: the report (python -m '
                 'estimator_tpu.port %s) lists the changes to make by hand.\n' % (e, ' '.join(args.paths)))
    return EXIT_PORT_FAILED


def run(args, stdout):
  try:
    import libcst  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  except ImportError:
    raise UserError('the port needs LibCST, which is not installed.',
                    "pip install 'libcst==0.4.9' on Python 3.7, 'libcst>=1,<2' on 3.9+ (setup.py installs it).")
  # The modules that need LibCST, imported once it is known to be there.
  from estimator_tpu.porting.rewrite import engine  # pylint: disable=g-import-not-at-top
  from estimator_tpu.porting.rewrite import output  # pylint: disable=g-import-not-at-top
  if args.verify:
    return verify.main(args, stdout)
  if args.write:
    output.check_out_dir(args.write)  # before any work: a bad OUT_DIR is one line, at once
  result = engine.port(args.paths)
  if not result.changed:
    stdout.write('Nothing to port: the port report requires no change in %s (already TPUEstimator code?); %s.\n'
                 % (', '.join(args.paths), 'nothing was written' if args.write else 'no diff'))
    return EXIT_DONE
  if args.diff:
    stdout.write(output.diff(result))
    stdout.write(''.join('# ' + line + '\n' for line in output.summary(result).splitlines()))
  else:
    output.write(result, args.write)
    stdout.write(output.summary(result, args.write))
  return EXIT_TODOS if output.todo_lines(result) else EXIT_DONE
