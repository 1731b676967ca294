"""bench/port_yardstick: the committed program list and hand judgments are complete and consistent, and the scorer
counts true, false, missed and unjudged findings as docs/PORT_REPORT.md says (on a pattern fixture standing in for
a cloned repository: the real repositories are not here, and the measurement itself is not a test)."""
import collections
import json
import os
import shutil
import subprocess
import sys

from support import port_expectations
from support.paths import PORT_FIXTURES
from support.paths import REPO_ROOT
from bench.port_yardstick import score
from estimator_tpu.porting.report import codes


def test_the_program_list_and_the_judgments_match():
  with open(score.PROGRAMS) as f:
    programs = json.load(f)
  names = [p['name'] for p in programs]
  assert sorted(names) == sorted(n[:-len('.json')] for n in os.listdir(score.JUDGMENTS))
  unported = [p for p in programs if not p['control']]
  assert len(unported) >= 10 and len(set(p['repository'] for p in unported)) >= 4
  assert sum(1 for p in programs if p['control']) >= 3
  for program in programs:
    assert len(program['commit']) == 40 and program['set'] in score.SETS, program
    required, not_required = score.load_judgments(score.JUDGMENTS, program['name'])  # asserts no key twice
    assert all(why for _, why in required.values()) and all(not_required.values())
    assert all(isinstance(count, int) and count >= 1 and isinstance(why, str) for count, why in required.values())
    assert bool(required) != program['control'], program['name']  # a control needs nothing
    if 'kind' in program or 'run' in program:  # programs added from the held-out round on say how they run
      assert program['kind'] and program['run']['command'] and program['run']['reads'], program['name']
      assert isinstance(program['run']['synthesisable'], bool), program['name']
      assert program['run']['original_ran'] in (None, True, False), program['name']
      with open(os.path.join(score.JUDGMENTS, program['name'] + '.json')) as f:
        assert json.load(f).get('judged_before_running_the_report') is True, program['name']
    with open(os.path.join(score.JUDGMENTS, program['name'] + '.json')) as f:
      doc = json.load(f)
    late = [e for kind in ('required', 'not_required') for e in doc[kind] if 'judged_after_first_run' in e]
    # A finding the first run showed unjudged is marked (true), and only in a program judged before that run.
    assert all(e['judged_after_first_run'] is True for e in late), program['name']
    assert not late or doc.get('judged_before_running_the_report') is True, program['name']


def run_score(tmp_path, required, not_required=()):
  checkouts, judgments = tmp_path / 'checkouts', tmp_path / 'judgments'
  shutil.copytree(PORT_FIXTURES, str(checkouts / 'local' / 'fixtures'))
  judgments.mkdir(exist_ok=True)
  programs = [{'name': 'main_block', 'repository': 'local/fixtures', 'commit': '0' * 40, 'folder': 'main_block',
               'paths': ['ner_tagger.py'], 'control': False, 'set': 'development'}]
  (tmp_path / 'programs.json').write_text(json.dumps(programs))
  counts = collections.Counter(required)
  doc = {'required': [{'path': p, 'line': l, 'rule': r, 'count': n, 'why': 'a change'} for (p, l, r), n in
                      counts.items()],
         'not_required': [{'path': p, 'line': l, 'rule': r, 'why': 'no change'} for p, l, r in not_required]}
  (judgments / 'main_block.json').write_text(json.dumps(doc))
  saved = str(tmp_path / 'scores.json')
  completed = subprocess.run([sys.executable, '-m', 'bench.port_yardstick.score', '--checkouts', str(checkouts),
                              '--programs', str(tmp_path / 'programs.json'), '--judgments', str(judgments),
                              '--save', saved], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True, timeout=120)
  with open(saved) as f:
    return completed, json.load(f)['summary']


def test_the_scorer_counts_true_false_missed_and_unjudged(tmp_path):
  required = [(path, line, codes.rule_of(code)) for path, line, code, severity in
              port_expectations.findings('main_block') if severity == 'required']
  completed, summary = run_score(tmp_path, required)
  assert completed.returncode == 0, completed.stdout + completed.stderr
  assert (summary['true'], summary['false'], summary['missed'], summary['unjudged']) == (len(required), 0, 0, 0)
  assert (summary['precision'], summary['recall']) == (1.0, 1.0)

  # One change too many judged at a line (missed), one finding judged not required (false), one not judged.
  extra = [('ner_tagger.py', 44, 4)]
  false = [('ner_tagger.py', 40, 15)]
  rest = [key for key in required if key not in false and key != ('ner_tagger.py', 64, 3)]
  completed, summary = run_score(tmp_path / 'second', rest + extra, not_required=false)
  assert completed.returncode == 1  # an unjudged finding: precision cannot be told
  assert (summary['true'], summary['false'], summary['missed'], summary['unjudged']) == (len(rest), 1, 1, 1)


def test_a_snapshot_of_the_tools_is_the_same_twice_and_keeps_the_fields_every_version_has(tmp_path):
  """bench/port_yardstick/snapshot.py: what two versions of the port tools are compared on (docs/PORT_REPORT.md)."""
  outputs = []
  for name in ('first', 'second'):
    out = str(tmp_path / name)
    completed = subprocess.run([sys.executable, '-m', 'bench.port_yardstick.snapshot', '--out', out, '--only',
                                'fixture-custom_estimator'], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert completed.returncode == 0, completed.stderr
    outputs.append(out)
  folder = os.path.join(outputs[0], 'fixture-custom_estimator')
  assert sorted(os.listdir(folder)) == ['diff.txt', 'report.json', 'report.txt', 'write.txt', 'written']
  with open(os.path.join(folder, 'report.json')) as f:
    status, printed = f.read().split('\n--- stdout\n')
  document = json.loads(printed.split('\n--- stderr\n')[0])
  assert status == 'exit 1' and document['findings']
  assert all(sorted(finding) == sorted(['path', 'line', 'rule', 'name', 'title', 'severity', 'message'])
             for finding in document['findings'])
  with open(os.path.join(folder, 'write.txt')) as f:
    assert 'in OUT' in f.read()  # the scratch folder's name is not kept
  assert subprocess.run(['diff', '-r'] + outputs, stdout=subprocess.PIPE).returncode == 0
