"""`python -m estimator_tpu.port --write OUT_DIR PATH ...`: the port made, not only listed.

The program is read once (estimator_tpu/porting/program) and the port report (estimator_tpu/porting/report) finds
what must change; this package makes every change that has one right answer in a copy of the code, with LibCST,
so that everything it does not change stays byte for byte (comments, formatting), and leaves a
`# TODO(tpu port, rule N): ...` at each required finding that needs a human decision. Each change carries a
`# TPU rule N (name): why` comment.

  engine     one port: the reading, the findings, the fixers in order, a TODO for every finding left
  located    the program's files as LibCST trees, and the LibCST node at any ast node or anchor
  plans      which estimator each input feeds, and how each batch size becomes params['batch_size']
  fixers/    the fixers, one module per rule (or rules) they port
  edits, templates   how changes are written
  records    the changes, the TODOs, the files before and after
  output     --write (all files or none), --diff, the summary (the command line: estimator_tpu/porting/cli.py;
             --verify, the proof of a port: estimator_tpu/porting/proof)

Needs LibCST (setup.py installs it); the port report alone does not.
"""


def port(paths, base=None):
  """Ports the program in `paths`; returns a changes.Result (nothing is written)."""
  from estimator_tpu.porting.rewrite import engine  # pylint: disable=g-import-not-at-top -- needs LibCST
  return engine.port(paths, base)
