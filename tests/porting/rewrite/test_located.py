"""The rewrite finds the LibCST node of every ast node the program reading gives it (rewrite/located.py): the one
reading decides, LibCST only edits. ast counts a column in UTF-8 bytes and, on Python 3.7, starts a chain on a
parenthesized value after the '('; LibCST counts characters and starts at the '('."""
import ast
import glob
import os
import textwrap

import libcst as cst
import pytest

from support.paths import PORT_FIXTURES
from support.paths import REPO_ROOT
from estimator_tpu.porting.program import files
from estimator_tpu.porting.rewrite import edits
from estimator_tpu.porting.rewrite import located

KINDS = (ast.Call, ast.Attribute, ast.Name, ast.Lambda, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.Return,
         ast.If, ast.With, ast.For, ast.Subscript)


def located_file(path):
  module, problem = files.read_module(path)
  assert problem is None, problem
  return module, located.LocatedFile(module)


def same(ast_node, cst_node, f):
  """Whether a LibCST node is the construct the ast node is, on the same line."""
  if isinstance(ast_node, ast.Name):
    return isinstance(cst_node, cst.Name) and cst_node.value == ast_node.id
  if isinstance(ast_node, (ast.FunctionDef, ast.ClassDef)):
    return cst_node.name.value == ast_node.name
  if isinstance(ast_node, ast.Attribute):
    return isinstance(cst_node, cst.Attribute) and cst_node.attr.value == ast_node.attr
  if isinstance(ast_node, ast.Call):
    return isinstance(cst_node, cst.Call) and located._cst_signature(cst_node) == located._ast_signature(ast_node) \
        and f.line(cst_node) == ast_node.lineno
  return type(cst_node).__name__ in [c.__name__ for c in located._KINDS[type(ast_node).__name__]]


def program_files():
  paths = sorted(glob.glob(os.path.join(PORT_FIXTURES, '*', '*.py')))
  return paths + [os.path.join(REPO_ROOT, p) for p in ('mnist.py', 'mnist_tpu.py', 'estimator_tpu/runner.py',
                                                        'estimator_tpu/porting/rewrite/located.py')]


@pytest.mark.parametrize('path', program_files(), ids=lambda p: os.path.relpath(p, REPO_ROOT))
def test_every_node_of_a_program_is_found_in_the_concrete_tree(path):
  module, f = located_file(path)
  nodes = [n for n in ast.walk(module.tree) if isinstance(n, KINDS)]
  assert len(nodes) > 20
  for node in nodes:
    assert same(node, f.node(node), f), (path, node.lineno, ast.dump(node)[:80])


HARD = '''\
import tensorflow as tf


@tf.function
def f(x):
\treturn (x + 1).numpy(x)["k"]

label = "é" + g(3)
value = f(1)(2).shape
chain = a.b.b
total = (config.get('task') or {}).get('type')
'''


def test_bytes_tabs_parentheses_and_nested_nodes_of_one_kind(tmp_path):
  path = tmp_path / 'hard.py'
  path.write_text(HARD, encoding='utf-8')
  module, f = located_file(str(path))
  calls = {edits.code_of(f.node(n)) for n in ast.walk(module.tree) if isinstance(n, ast.Call)}
  assert calls == {'g(3)', 'f(1)', 'f(1)(2)', '(x + 1).numpy(x)', "config.get('task')",
                   "(config.get('task') or {}).get('type')"}
  attributes = sorted(edits.code_of(f.node(n)) for n in ast.walk(module.tree) if isinstance(n, ast.Attribute))
  assert attributes == ["(config.get('task') or {}).get", '(x + 1).numpy', 'a.b', 'a.b.b', 'config.get',
                        'f(1)(2).shape', 'tf.function']
  definition = [n for n in module.tree.body if isinstance(n, ast.FunctionDef)][0]
  assert f.line(f.node(definition)) == 5  # the def, not its decorator (ast 3.7 says 4)
  # 'é' is two bytes in UTF-8 and one character: the call after it is where LibCST has it.
  call = [n for n in ast.walk(module.tree) if isinstance(n, ast.Call) and getattr(n.func, 'id', None) == 'g'][0]
  assert module.column_of(call) == f.column(f.node(call)) == len('label = "é" + ')


def test_what_the_trees_place_differently_is_said_not_guessed(tmp_path):
  path = tmp_path / 'strings.py'
  path.write_text(textwrap.dedent('''\
      text = """
      {x}
      """.format(x=1)
      '''))
  module, f = located_file(str(path))
  call = [n for n in ast.walk(module.tree) if isinstance(n, ast.Call)][0]
  try:
    node = f.node(call)
  except located.NotLocated:
    return  # Python 3.7 places a string that spans lines at its end: not found, and said so
  assert edits.code_of(node).endswith('.format(x=1)')


def test_the_statement_at_the_line_of_a_one_line_def_is_that_def(tmp_path):
  """A TODO above `def train_input_fn(): return input_function(X, Y)` (held-out-23's titanic program): the def is
  the statement on its line, its one-line body holds none of its own; a def whose body starts below stays itself and
  its body's lines are its inner statements'."""
  path = tmp_path / 'wrappers.py'
  path.write_text('def train_input_fn(): return make(1)\n\n\ndef eval_input_fn():\n  return make(2)\n')
  module, f = located_file(str(path))
  one_line = f.statement_at(1)
  assert isinstance(one_line, cst.FunctionDef) and one_line.name.value == 'train_input_fn'
  assert isinstance(f.statement_at(4), cst.FunctionDef) and isinstance(f.statement_at(5), cst.SimpleStatementLine)
