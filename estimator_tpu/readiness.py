"""`python -m estimator_tpu.readiness`: the readiness check's command line (estimator_tpu/porting/readiness/)."""
import sys

from estimator_tpu.porting.readiness import cli

if __name__ == '__main__':
  sys.exit(cli.main())
