"""Command line of the port report: python -m estimator_tpu.port PATH [PATH ...] [--format=text|json] (porting/cli.py
hands --write, --diff and --verify to the port, whose command line it also is)."""
import argparse
import sys

from estimator_tpu.porting.report import findings
from estimator_tpu.porting.report.scan import scan as scan_paths


def parse_args(argv):
  parser = argparse.ArgumentParser(
      prog='python -m estimator_tpu.port',
      description='Lists what legacy tf.estimator code must change to run with TPUEstimator, from its source '
                  '(nothing is imported or run). Each finding cites its rule: estimator_tpu/rules.py, '
                  'docs/MIGRATION.md.',
      epilog='Exit status: 0 nothing required, 1 something required, 2 bad input (a path that does not exist or a '
             'file that does not parse; the other files are still checked, and 2 wins over 1).')
  parser.add_argument('paths', nargs='+', metavar='PATH', help='Python files or folders (searched for *.py)')
  parser.add_argument('--format', choices=('text', 'json'), default='text', help='text (default) or json')
  # The port itself (estimator_tpu/porting/rewrite, which needs LibCST): see `--write OUT_DIR --help`.
  parser.add_argument('--write', metavar='OUT_DIR', help='port: write the ported copy into OUT_DIR instead')
  parser.add_argument('--diff', action='store_true', help='port: print the port as a unified diff instead')
  parser.add_argument('--verify', metavar='PORTED_DIR', help='port: prove the port in PORTED_DIR instead')
  return parser.parse_args(argv)


def main(argv=None, stdout=None, stderr=None):
  stdout = stdout or sys.stdout
  stderr = stderr or sys.stderr
  argv = sys.argv[1:] if argv is None else argv
  args = parse_args(argv)
  report = scan_paths(args.paths)
  for bad in report.bad_inputs:
    stderr.write(findings.format_bad_input(bad) + '\n')
  stdout.write(findings.format_json(report) if args.format == 'json' else findings.format_text(report))
  return report.exit_status()

