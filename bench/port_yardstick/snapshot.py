"""What the port tools print and write on every fixture and yardstick program, kept in a folder, so that two versions
of the tools can be compared with `diff -r` (a refactor must leave it the same).

  python -m bench.port_yardstick.snapshot --out DIR [--tool ROOT] [--project ROOT] [--checkouts DIR] [--only SUBSTRING]

For each program: the report (`--format=json`, the fields every version has, and the text), `--diff`, and `--write`
(its summary and the files it wrote), each with its exit status, under DIR/<program>/. The tools are ROOT's
(default: this repository), run with this Python; the programs are tests/porting/fixtures (each folder as its
expected.json scans it, and as a folder), this project's own Estimator and TPUEstimator programs as --project has
them (give both versions the same copy), and programs.json's programs in --checkouts (as python -m
bench.port_yardstick.clone makes it), where there.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from bench.port_yardstick import score

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(REPO_ROOT, 'tests', 'porting', 'fixtures')
# The fields of a report's findings in every version of the tools (later ones add code, fix, anchor).
FIELDS = ('path', 'line', 'rule', 'name', 'title', 'severity', 'message')


def cases(checkouts, project):
  found = []
  for name in sorted(os.listdir(FIXTURES)):
    folder = os.path.join(FIXTURES, name)
    with open(os.path.join(folder, 'expected.json')) as f:
      scan = json.load(f).get('scan') or sorted(p for p in os.listdir(folder) if p.endswith('.py'))
    found += [('fixture-' + name, folder, scan), ('fixture-folder-' + name, FIXTURES, [name])]
  found += [('project-estimator', project, ['mnist.py', 'estimator_tpu/estimator']),
            ('project-tpu', project, ['mnist_tpu.py', 'estimator_tpu/tpu', 'estimator_tpu/model.py', 'flags'])]
  if checkouts:
    for program in score.load_programs(score.PROGRAMS):
      cwd = os.path.join(score.repository_folder(checkouts, program['repository']), program['folder'])
      if all(os.path.exists(os.path.join(cwd, p)) for p in program['paths']):
        found.append(('yardstick-' + program['name'], cwd, program['paths']))
  return found


def old_fields(text):
  try:
    document = json.loads(text)
  except ValueError:
    return text
  document['findings'] = [dict((k, f[k]) for k in FIELDS if k in f) for f in document.get('findings', [])]
  return json.dumps(document, indent=1, sort_keys=True)


def record(path, completed, transform=lambda text: text, replace=()):
  out, err = completed.stdout, completed.stderr
  for old, new in replace:
    out, err = out.replace(old, new), err.replace(old, new)
  with open(path, 'w') as f:
    f.write('exit %d\n--- stdout\n%s\n--- stderr\n%s' % (completed.returncode, transform(out), err))


def main(argv=None):
  parser = argparse.ArgumentParser(prog='python -m bench.port_yardstick.snapshot', description=__doc__.split('\n')[0])
  parser.add_argument('--out', required=True)
  parser.add_argument('--tool', default=REPO_ROOT, help='the root of the version of the tools to run')
  parser.add_argument('--project', default=REPO_ROOT, help='the copy of this project whose programs are ported')
  parser.add_argument('--checkouts', help='the repositories of programs.json (bench/port_yardstick/clone.py)')
  parser.add_argument('--only', default='', help='only the programs whose name holds this')
  args = parser.parse_args(argv)
  env = dict(os.environ, PYTHONPATH=os.path.abspath(args.tool))
  for name, cwd, paths in cases(args.checkouts, os.path.abspath(args.project)):
    if args.only not in name:
      continue
    out = os.path.join(args.out, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)

    def port(*options):
      return subprocess.run([sys.executable, '-m', 'estimator_tpu.port'] + list(options), cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)

    record(os.path.join(out, 'report.json'), port(*(paths + ['--format=json'])), old_fields)
    record(os.path.join(out, 'report.txt'), port(*paths))
    record(os.path.join(out, 'diff.txt'), port('--diff', *paths))
    scratch = tempfile.mkdtemp()
    target = os.path.join(scratch, 'ported')
    record(os.path.join(out, 'write.txt'), port('--write', target, *paths), replace=((target, 'OUT'),))
    if os.path.isdir(target):
      shutil.copytree(target, os.path.join(out, 'written'))
    shutil.rmtree(scratch, ignore_errors=True)
    print(name, flush=True)
  return 0


if __name__ == '__main__':
  sys.exit(main())
