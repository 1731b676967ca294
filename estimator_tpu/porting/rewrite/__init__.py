"""`python -m estimator_tpu.port --write OUT_DIR PATH ...`: the port made, not only listed.

The port report (estimator_tpu/porting/report) finds what legacy Estimator code must change; this package makes
every change that has one right answer in a copy of the code, with LibCST, so that everything it does not change
stays byte for byte (comments, formatting), and leaves a `# TODO(tpu port, rule N): ...` at each finding that
needs a human decision. Each change carries a `# TPU rule N (name): why` comment.

  engine     one port: findings -> fixers -> the ported text of each file, the changes and the TODOs
  source, program, analysis   the code read with LibCST: names, calls, estimators, input_fns and batch sizes
  estimators, inputs, model_fns, contrib   the fixers, by what they change
  edits, templates            how changes are written
  output     --write (all files or none), --diff, the summary
  verify     --verify: the proof that the port changed nothing but what the TPU requires

Needs LibCST (setup.py installs it); the port report alone does not.
"""


def port(paths, base=None):
  """Ports the program in `paths`; returns an engine.Result (nothing is written)."""
  from estimator_tpu.porting.rewrite import engine  # pylint: disable=g-import-not-at-top
  return engine.Port(paths, base).run()
