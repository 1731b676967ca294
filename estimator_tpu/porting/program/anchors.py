"""Where a fact or a finding is: its file, line and column, the kind of node, and the name it is about.

The column counts characters from the start of the line, 0-based, as LibCST's positions do (ast counts UTF-8
bytes: modules.Module.column_of converts), so a fixer finds the node again in the concrete syntax tree it edits.
"""
import ast
import collections

from estimator_tpu.porting.program import syntax

# kind: the node's class in Python 3.8+'s ast (literals are 'Constant' on every version). name: the canonical
# name of what the node names or calls (tensorflow.estimator.Estimator), a definition's own name, else None.
Anchor = collections.namedtuple('Anchor', ['path', 'line', 'column', 'kind', 'name'])


def anchor(program, module, node):
  """The Anchor of an ast node of one of the program's modules."""
  kind = 'Constant' if syntax.is_literal(node) else type(node).__name__
  return Anchor(module.path, getattr(node, 'lineno', 1), module.column_of(node), kind, _name(program, module, node))


def _name(program, module, node):
  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
    return node.name
  target = node.func if isinstance(node, ast.Call) else node
  if not isinstance(target, (ast.Name, ast.Attribute)):
    return None
  scope = program.enclosing_function(module, node) if program is not None else None
  canonical = program.canonical(module, scope, target) if program is not None else module.canonical(target)
  return canonical or syntax.dotted(target)
