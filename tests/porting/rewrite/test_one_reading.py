"""The port reads the program once: each file parsed once with ast (the program model, estimator_tpu/porting/program)
and once with LibCST (the tree it edits), and the rewrite decides from the reading's facts and the findings' codes,
never from a finding's words."""
import ast
import glob
import os
import re

import libcst as cst

from support.paths import PORT_FIXTURES
from support.paths import REPO_ROOT
from estimator_tpu.porting.rewrite import engine

REWRITE = os.path.join(REPO_ROOT, 'estimator_tpu', 'porting', 'rewrite')


def test_each_file_is_parsed_once_by_ast_and_once_by_libcst(monkeypatch):
  folder = os.path.join(PORT_FIXTURES, 'premade_strings')
  parsed, trees = [], []
  real_parse, real_module = ast.parse, cst.parse_module

  def counting_parse(source, filename='<unknown>', *args, **kwargs):
    if filename.endswith('.py'):  # a file's parse (LibCST's own parser generator parses grammar strings too)
      parsed.append(os.path.basename(filename))
    return real_parse(source, filename, *args, **kwargs)

  def counting_module(source, *args, **kwargs):
    trees.append(source)
    return real_module(source, *args, **kwargs)

  monkeypatch.setattr(ast, 'parse', counting_parse)
  monkeypatch.setattr(cst, 'parse_module', counting_module)
  monkeypatch.chdir(folder)
  result = engine.Port(['census.py', 'run_loop.py']).run()
  assert result.files and sorted(parsed) == ['census.py', 'run_loop.py']
  assert sorted(trees) == sorted(f.original for f in result.files)


def rewrite_sources():
  return sorted(glob.glob(os.path.join(REWRITE, '**', '*.py'), recursive=True))


def test_the_rewrite_never_reads_a_message_nor_parses_with_ast():
  sources = rewrite_sources()
  assert len(sources) > 10
  for path in sources:
    with open(path) as f:
      text = f.read()
    code = '\n'.join(line.split('#')[0] for line in text.splitlines())  # not the comments
    assert '.message' not in code, path
    assert not re.search(r'\bast\.parse\(|\bcompile\(', code), path


def test_fixers_take_findings_by_code_and_the_codes_exist():
  from estimator_tpu.porting.report import codes  # pylint: disable=g-import-not-at-top
  named = set()
  for path in rewrite_sources():
    with open(path) as f:
      named.update(re.findall(r"'([a-z0-9]+(?:-[a-z0-9]+)+)'", f.read()))
  taken = named & set(codes.BY_CODE)
  assert len(taken) >= 15
  looks_like_a_code = set(n for n in named if n.count('-') >= 2 and not n.startswith(('tpu-', 'port-')))
  assert looks_like_a_code <= set(codes.BY_CODE), looks_like_a_code - set(codes.BY_CODE)
