"""The port report on what real programs showed it (docs/PORT_REPORT.md) beyond each fixture's exact findings (those
are tests/porting/fixtures/NAME/expected.json, checked by test_report.py): a file scanned without its neighbour,
a folder without Python, a `cannot tell` beside a definite finding.

Nothing here needs TensorFlow: the tool reads source only. test_fixtures_run.py runs the fixtures themselves.
"""
import os

from support import port_expectations
from support.paths import PORT_FIXTURES
from support.programs import run_main
from estimator_tpu.porting.cli import main as port_main
from estimator_tpu.porting.report import REQUIRED as R
from estimator_tpu.porting.report import UNKNOWN as U
from estimator_tpu.porting.report import scan_paths


def findings_of(paths, root):
  report = scan_paths(paths)
  return report, sorted((os.path.relpath(f.path, root), f.line, f.code, f.severity) for f in report.findings)


def test_hooks_from_a_module_left_out_still_meet_the_tensors_model_fn_names():
  folder = os.path.join(PORT_FIXTURES, 'logging_hooks')
  report, found = findings_of([os.path.join(folder, 'train.py')], folder)
  assert found == port_expectations.findings('logging_hooks')
  message = [f.message for f in report.findings if f.line == 38][0]
  assert 'hooks (' in message and "names 'learning_rate'" in message


def test_a_folder_without_python_files_is_one_error_line(tmp_path):
  (tmp_path / 'notes.txt').write_text('no code here\n')
  status, out, err = run_main(port_main, [str(tmp_path)])
  assert (status, out) == (2, '')
  assert err == 'error: %s: holds no Python file. Fix: give the folder of the program or its .py files.\n' % tmp_path


def test_a_cannot_tell_beside_a_definite_finding_of_its_rule_is_dropped():
  from estimator_tpu.porting.report import findings
  both = [findings.Finding('a.py', 3, 4, R, 'batch without drop_remainder', 'batch-without-drop-remainder', None),
          findings.Finding('a.py', 3, 4, U, 'whether drop_remainder is True', 'batch-drop-remainder-unseen', None),
          findings.Finding('a.py', 3, 3, U, 'whether the batch size is params', 'batch-size-not-params', None)]
  assert [(f.rule, f.severity) for f in findings.Report(both, ['a.py'], []).findings] == [(3, U), (4, R)]
