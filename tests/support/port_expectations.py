"""The expectations of each port fixture (tests/porting/fixtures/NAME/expected.json), in one file per fixture:

  about      what the fixture reproduces (a kind of code real programs showed the port tools, docs/PORT_REPORT.md)
  findings   every finding of the port report on the fixture's folder: its file, the line it is at (`at`: a snippet
             of that line, the `nth` line holding it when several do), its code (estimator_tpu/porting/report/
             codes.py), its severity, and why it is there
  scan       what `--write` is given, from the folder (a fixture without it is one the port changes nothing in)
  todos      [file, rule] of every TODO the port must leave
  imports    the TensorFlow majors where the ported files import
  proof      the entry points, params and data of --verify (tests/porting/entries is on the path), on the
             TensorFlows listed (why_not says why not on the others)
  program    the ported program's own command, run in the data folder
  runs       the scripts the ported program is, run in order as `python SCRIPT.py` in a copy of the folder with the
             ported files in place (its own command: (c) where the proof cannot run)

Used by tests/porting/report (the findings), tests/porting/rewrite (the port and its proof) and
tests/bench/test_port_yardstick.py.
"""
import json
import os

from support.paths import PORT_FIXTURES


def names():
  return sorted(n for n in os.listdir(PORT_FIXTURES) if os.path.isfile(os.path.join(PORT_FIXTURES, n, 'expected.json')))


def load(name):
  with open(os.path.join(PORT_FIXTURES, name, 'expected.json')) as f:
    return json.load(f)


def line_of(path, snippet, nth=1):
  """The line of a file that holds `snippet` (the nth such line)."""
  with open(path) as f:
    lines = [number for number, text in enumerate(f, 1) if snippet in text]
  assert len(lines) >= nth, 'snippet %r is on lines %s of %s' % (snippet, lines, path)
  assert nth > 1 or len(lines) == 1, 'snippet %r is on lines %s of %s: say which (nth)' % (snippet, lines, path)
  return lines[nth - 1]


def findings(name):
  """Sorted (file, line, code, severity) of the findings a fixture expects."""
  folder = os.path.join(PORT_FIXTURES, name)
  return sorted((f['file'], line_of(os.path.join(folder, f['file']), f['at'], f.get('nth', 1)), f['code'],
                 f['severity']) for f in load(name)['findings'])


def manifests():
  """{name: expected} of the fixtures the port writes (those with a `scan`)."""
  return dict((name, load(name)) for name in names() if 'scan' in load(name))
