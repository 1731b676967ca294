"""Tools for porting your own Estimator code to TPUEstimator, kept apart from the pattern they teach.

  program/    the one reading of a program (ast, each file parsed once): its estimators, what they are given, the
              modes of each model_fn branch, the batch sites of each input_fn; every fact anchored to its node
  report/     python -m estimator_tpu.port PATH ...: what must change, rule by rule, each finding with its code
  rewrite/    python -m estimator_tpu.port --write OUT_DIR PATH ...: the port made in a copy (LibCST edits at the
              nodes the findings are anchored at)
  proof/      python -m estimator_tpu.port --verify ...: the proof that a port changed nothing but what the TPU needs
  readiness/  python -m estimator_tpu.readiness, and mnist_tpu.py --mode=check_tpu: would it run on a TPU?
  cli.py      the command line of python -m estimator_tpu.port

All cite the numbered rules of estimator_tpu/rules.py (docs/MIGRATION.md).
"""
