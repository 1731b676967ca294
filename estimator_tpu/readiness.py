"""`python -m estimator_tpu.readiness`: the readiness check's command line (estimator_tpu/porting/readiness/):
on named functions (cli.py), or with --run on a whole program (program_run.py)."""
import sys

from estimator_tpu.porting.readiness import cli
from estimator_tpu.porting.readiness import program_run


def main(argv=None):
  argv = sys.argv[1:] if argv is None else argv
  own = argv[:argv.index('--')] if '--' in argv else argv
  if '--run' in own:
    return program_run.main(argv)
  return cli.main(argv)


if __name__ == '__main__':
  sys.exit(main())
