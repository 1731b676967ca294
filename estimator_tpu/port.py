"""`python -m estimator_tpu.port`: the port report's command line (estimator_tpu/porting/report/)."""
import sys

from estimator_tpu.porting import cli

if __name__ == '__main__':
  sys.exit(cli.main())
