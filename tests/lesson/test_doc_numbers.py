"""Numbers in the docs that describe the code, checked against the code as it is now, so that they cannot drift.

The twin-diff sizes of the README are checked in test_twins.py, next to the twins. Here: the summary line of every
port report the docs show (`N file(s) checked: ...`) is what `python -m estimator_tpu.port` prints today for the
same command, and docs/TESTING.md gives no test counts, which change with every test added (the README's measured
numbers carry their date and the command that repeats them).
"""
import glob
import os
import re
import shlex
import subprocess
import sys

import pytest

from support.paths import REPO_ROOT

DOCS = sorted(glob.glob(os.path.join(REPO_ROOT, 'docs', '*.md'))) + [os.path.join(REPO_ROOT, 'README.md')]
PROMPT = '$ python -m estimator_tpu.port '
SUMMARY = re.compile(r'^\d+ file\(s\) checked: .*$')


def shown_port_reports():
  """[(doc, command arguments, summary line)] of each port report shown with its summary in a docs code block."""
  shown = []
  for doc in DOCS:
    with open(doc) as f:
      lines = f.read().splitlines()
    for number, line in enumerate(lines):
      if not line.startswith(PROMPT):
        continue
      command, follow = line[len(PROMPT):], number + 1
      while command.endswith('\\'):
        command, follow = command[:-1] + ' ' + lines[follow].strip(), follow + 1
      summary = None
      while follow < len(lines) and not lines[follow].startswith(('```', '$ ')):
        if SUMMARY.match(lines[follow]):
          summary = lines[follow]
        follow += 1
      if summary:
        shown.append((os.path.relpath(doc, REPO_ROOT), shlex.split(command), summary))
  return shown


def test_the_docs_show_port_reports_with_their_summary():
  assert len(shown_port_reports()) >= 2  # MIGRATION.md's report on mnist.py and on mnist_tpu.py


@pytest.mark.parametrize('doc,args,summary', shown_port_reports())
def test_each_port_report_summary_in_the_docs_is_what_the_port_prints_now(doc, args, summary):
  result = subprocess.run([sys.executable, '-m', 'estimator_tpu.port'] + args, cwd=REPO_ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
  printed = [line for line in result.stdout.splitlines() if SUMMARY.match(line)]
  assert printed == [summary], '%s shows `%s` for `python -m estimator_tpu.port %s`; it prints %s' % (
      doc, summary, ' '.join(args), printed)


def test_testing_md_gives_no_test_counts_that_drift():
  with open(os.path.join(REPO_ROOT, 'docs', 'TESTING.md')) as f:
    text = f.read()
  assert not re.findall(r'\d+ (?:passed|skipped|failed)', text)


# --- docs/RUNNING.md's saved_model_cli example runs as written, on the TensorFlow running the tests ---

RUNNING = os.path.join(REPO_ROOT, 'docs', 'RUNNING.md')
EXPORT_EXAMPLE_DIR = '/tmp/mnist_model/export/<timestamp>'


def saved_model_cli_example():
  """The commands of RUNNING.md's sh block that runs saved_model_cli, continuation lines joined."""
  with open(RUNNING) as f:
    blocks = re.findall(r'```sh\n(.*?)```', f.read(), re.S)
  (block,) = [block for block in blocks if 'saved_model_cli run' in block]
  return [shlex.split(command) for command in block.replace('\\\n', ' ').splitlines() if command.strip()]


def test_the_saved_model_cli_example_runs_as_written(tmp_path, tiny_model):
  export_dir = str(tmp_path / 'export')
  subprocess.run([sys.executable, os.path.join(REPO_ROOT, 'mnist_tpu.py'), '--use_tpu=false', '--master=',
                  '--mode=export', '--checkpoint_path=%s' % tiny_model[1], '--export_dir=%s' % export_dir],
                 cwd=REPO_ROOT, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
  (timestamp,) = os.listdir(export_dir)
  scratch = str(tmp_path / 'scratch')
  os.makedirs(scratch)
  outputs = []
  for command in saved_model_cli_example():
    # As written, but for the places: the export just made, and a scratch folder for /tmp.
    command = [arg.replace('/tmp/images.npy', os.path.join(scratch, 'images.npy'))
               .replace(EXPORT_EXAMPLE_DIR, os.path.join(export_dir, timestamp)) for arg in command]
    program = {'python': sys.executable,
               'saved_model_cli': os.path.join(os.path.dirname(sys.executable), 'saved_model_cli')}[command[0]]
    result = subprocess.run([program] + command[1:], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    outputs.append(result.stdout)
  assert 'Result for output key class_ids:' in outputs[-1] and 'Result for output key probabilities:' in outputs[-1]
