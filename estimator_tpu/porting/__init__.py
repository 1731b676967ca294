"""Tools for porting your own Estimator code to TPUEstimator, kept apart from the pattern they teach.

  report/     python -m estimator_tpu.port PATH ...: what legacy Estimator source must change, rule by rule
  rewrite/    python -m estimator_tpu.port --write OUT_DIR PATH ...: the port made in a copy, and proven (--verify)
  readiness/  python -m estimator_tpu.readiness, and mnist_tpu.py --mode=check_tpu: would it run on a TPU?

Both cite the numbered rules of estimator_tpu/rules.py (docs/MIGRATION.md).
"""
