"""One rule registry: estimator_tpu/rules.py is docs/MIGRATION.md's table, and `grep -rn "rule N"` finds rule N in
the doc, in the code, and in both tools: the port report and the readiness check cite the rules they check."""
import glob
import os
import re

import pytest

from estimator_tpu import rules
from estimator_tpu.porting.report import codes
from estimator_tpu.porting.readiness import check_results
from support.paths import REPO_ROOT

MIGRATION = os.path.join(REPO_ROOT, 'docs', 'MIGRATION.md')
REPORT_DIR = os.path.join(REPO_ROOT, 'estimator_tpu', 'porting', 'report')
READINESS_DIR = os.path.join(REPO_ROOT, 'estimator_tpu', 'porting', 'readiness')
# Rules no code of a route differs by (docs/MIGRATION.md says why): what the code cites them in is the tools.
NOT_IN_ROUTE_CODE = {
    13: 'a tool: estimator_tpu/porting/readiness/',
    18: 'the model needs no change; the readiness check compiles it with XLA',
    19: 'a version fact: no tf.contrib in this code',
}
# Rules the port report cannot see in source, or that only concern the Keras route.
NOT_IN_PORT_REPORT = {
    10: 'Keras route (TF 2)', 11: 'Keras route (TF 2)', 12: 'Keras route (TF 2)', 13: 'the readiness check itself',
    16: 'batch sizes are values known at run time',
    20: 'an option of the TPU routes, not a change a port requires',
}
# Rules neither readiness check (TPUEstimator's, the Keras route's) has a line for.
NOT_IN_READINESS = {
    19: 'a version fact of the source, the port report\'s',
}


def read(path):
  with open(path) as f:
    return f.read()


def sources(folder):
  return '\n'.join(read(path) for path in sorted(glob.glob(os.path.join(folder, '*.py'))))


def cites(text, number):
  return re.search(r'\brule %d\b' % number, text) is not None


def test_the_table_is_the_rule_registry():
  table = [[cell.strip() for cell in line.split('|')[1:3]] for line in read(MIGRATION).splitlines()
           if re.match(r'^\| \d+ \|', line)]
  assert [(int(number), rule) for number, rule in table] == [
      (rule.number, '%s: %s' % (rule.name, rule.title)) for rule in rules.RULES]


def test_every_rule_has_its_detail_in_the_doc():
  headings = re.findall(r'^### (TPU rule \d+ \([^)]+\)): (.*)$', read(MIGRATION), re.M)
  assert [heading for heading, _ in headings] == [rules.tag(rule.number) for rule in rules.RULES]
  assert [title.lower() for _, title in headings] == [rule.title.lower() for rule in rules.RULES]


def route_code():
  paths = (['mnist.py', 'mnist_tpu.py', 'mnist_keras.py'] +
           glob.glob(os.path.join(REPO_ROOT, 'estimator_tpu', '*', '*.py')) +
           glob.glob(os.path.join(REPO_ROOT, 'flags', '*.py')))
  return '\n'.join(read(os.path.join(REPO_ROOT, path)) for path in paths if '/porting/' not in path)


@pytest.mark.parametrize('number', sorted(rules.BY_NUMBER))
def test_grep_finds_each_rule_in_the_doc_the_code_and_the_tools(number):
  assert cites(read(MIGRATION), number)
  if number not in NOT_IN_ROUTE_CODE:
    assert rules.tag(number) in route_code()
  if number not in NOT_IN_PORT_REPORT:
    assert cites(sources(REPORT_DIR), number)
  if number not in NOT_IN_READINESS:
    assert cites(sources(READINESS_DIR), number)
    assert number in check_results.CHECK_RULES.values()


def test_what_the_port_report_emits_is_cited_in_its_source():
  """Every rule the report's findings are about (by their codes, report/codes.py) appears as `rule N` in the
  report's own source."""
  source = sources(REPORT_DIR)
  made = re.findall(r"\.(?:required|advice|unknown|add)\(\s*[\w.]+,\s*[\w.\[\]]+,\s*'([a-z0-9-]+)'", source)
  emitted = {codes.rule_of(code) for code in made}
  assert emitted >= {1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15, 17, 18, 19}
  assert emitted <= set(rules.BY_NUMBER)
  assert [number for number in sorted(emitted) if not cites(source, number)] == []


def test_every_readiness_line_cites_a_rule_its_source_names():
  source = sources(READINESS_DIR)
  assert set(check_results.CHECK_RULES.values()) <= set(rules.BY_NUMBER)
  assert [name for name, number in sorted(check_results.CHECK_RULES.items()) if not cites(source, number)] == []
