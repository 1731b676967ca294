"""The port report on each kind of miss and false finding that real programs showed it (docs/PORT_REPORT.md), each
reproduced in a fixture of our own (tests/porting/port_fixtures/): the exact findings, rule, line and severity.

Nothing here needs TensorFlow: the tool reads source only. test_port_fixtures_run.py runs the fixtures themselves.
"""
import os

import pytest

from support.paths import PORT_FIXTURES
from support.port_patterns import PATTERNS
from support.port_patterns import R
from support.port_patterns import U
from support.programs import run_main
from estimator_tpu.porting.report import scan_paths
from estimator_tpu.porting.report.cli import main as port_main


def findings_of(paths, root):
  report = scan_paths(paths)
  return report, sorted((os.path.relpath(f.path, root), f.line, f.rule, f.severity) for f in report.findings)


@pytest.mark.parametrize('fixture', sorted(PATTERNS))
def test_each_pattern_gives_exactly_these_findings(fixture):
  folder = os.path.join(PORT_FIXTURES, fixture)
  report, found = findings_of([folder], folder)
  assert found == sorted(PATTERNS[fixture])
  assert report.bad_inputs == []
  assert report.exit_status() == (1 if any(severity == R for _, _, _, severity in PATTERNS[fixture]) else 0)
  assert all(' -> ' in f.message and '\n' not in f.message for f in report.findings), report.findings


def test_hooks_from_a_module_left_out_still_meet_the_tensors_model_fn_names():
  folder = os.path.join(PORT_FIXTURES, 'logging_hooks')
  report, found = findings_of([os.path.join(folder, 'train.py')], folder)
  assert found == sorted(PATTERNS['logging_hooks'])
  message = [f.message for f in report.findings if f.line == 38][0]
  assert 'hooks (' in message and "names 'learning_rate'" in message


def test_a_folder_without_python_files_is_one_error_line(tmp_path):
  (tmp_path / 'notes.txt').write_text('no code here\n')
  status, out, err = run_main(port_main, [str(tmp_path)])
  assert (status, out) == (2, '')
  assert err == 'error: %s: holds no Python file. Fix: give the folder of the program or its .py files.\n' % tmp_path


def test_a_cannot_tell_beside_a_definite_finding_of_its_rule_is_dropped():
  from estimator_tpu.porting.report import findings
  both = [findings.Finding('a.py', 3, 4, R, 'batch without drop_remainder'),
          findings.Finding('a.py', 3, 4, U, 'whether drop_remainder is True'),
          findings.Finding('a.py', 3, 3, U, 'whether the batch size is params')]
  assert [(f.rule, f.severity) for f in findings.Report(both, ['a.py'], []).findings] == [(3, U), (4, R)]
