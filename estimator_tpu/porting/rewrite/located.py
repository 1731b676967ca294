"""A file of the program as LibCST holds it, for editing: the concrete syntax tree of the text the program reading
parsed (program/modules.Module.text), with positions and parents, and the LibCST node of any ast node of it.

The program model (estimator_tpu/porting/program) reads the code; LibCST only edits it. A fact or a finding names
an ast node, or its anchor (line, column in characters, kind); `node()` finds the LibCST node that starts there,
so that everything the rewrite decides comes from the one reading, and everything it writes keeps the user's
bytes (comments, formatting) where it changes nothing.
"""
import ast
import collections
import sys

import libcst as cst
from libcst import metadata

# ast node classes -> the LibCST classes of the same construct.
_KINDS = {
    'Call': (cst.Call,), 'Attribute': (cst.Attribute,), 'Name': (cst.Name,), 'Subscript': (cst.Subscript,),
    'Lambda': (cst.Lambda,), 'FunctionDef': (cst.FunctionDef,), 'AsyncFunctionDef': (cst.FunctionDef,),
    'ClassDef': (cst.ClassDef,), 'Dict': (cst.Dict,), 'List': (cst.List,), 'Tuple': (cst.Tuple,),
    'IfExp': (cst.IfExp,), 'BinOp': (cst.BinaryOperation,), 'BoolOp': (cst.BooleanOperation,),
    'Assign': (cst.Assign,), 'AugAssign': (cst.AugAssign,), 'AnnAssign': (cst.AnnAssign,), 'Expr': (cst.Expr,),
    'Return': (cst.Return,), 'Delete': (cst.Del,), 'Pass': (cst.Pass,), 'Import': (cst.Import,),
    'ImportFrom': (cst.ImportFrom,), 'Raise': (cst.Raise,), 'Assert': (cst.Assert,), 'If': (cst.If,),
    'For': (cst.For,), 'While': (cst.While,), 'With': (cst.With,), 'Try': (cst.Try,),
    'Constant': (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float, cst.Imaginary, cst.Name,
                 cst.FormattedString),
}
# Python 3.7's ast puts a chain on a parenthesized value (`(a + b).c`) after the '(': 3.8+ and LibCST at it.
LEGACY_POSITIONS = sys.version_info < (3, 8)
STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)
FUNCTIONS = (cst.FunctionDef, cst.Lambda)


class NotLocated(Exception):
  """An ast node with no LibCST node at its place (a construct the two trees place differently)."""


class LocatedFile(object):
  """One module of the program (program/modules.Module) as a LibCST tree, with its positions and parents."""

  def __init__(self, module):
    self.module = module
    self.path = module.path
    self.text = module.text
    self.encoding = module.encoding
    wrapper = metadata.MetadataWrapper(cst.parse_module(module.text))
    self.tree = wrapper.module
    self.positions = wrapper.resolve(metadata.PositionProvider)
    self.parents = wrapper.resolve(metadata.ParentNodeProvider)
    self._lines = self.text.splitlines()
    self._at = collections.defaultdict(list)  # (line, column as ast places it) -> nodes there, outermost first
    for node, position in self.positions.items():
      start = position.start
      self._at[(start.line, start.column)].append(node)
      moved = self._ast_column(start.line, start.column)
      if moved != start.column:
        self._at[(start.line, moved)].append(node)
    for nodes in self._at.values():
      nodes.sort(key=self._size, reverse=True)
    self._found = {}

  def _ast_column(self, line, column):
    """Where ast puts a node that LibCST starts at (line, column): the same place, except on Python 3.7, which puts
    a node whose leftmost part is parenthesized (or a comprehension) after the '(' or '['."""
    if not LEGACY_POSITIONS:
      return column
    text = self._lines[line - 1] if 0 < line <= len(self._lines) else ''
    while column < len(text) and text[column] in '([ \t':
      column += 1
    return column

  def _size(self, node):
    position = self.positions[node]
    return (position.end.line - position.start.line, position.end.column - position.start.column)

  # --- ast node -> LibCST node --------------------------------------------------------------------------------------

  def node(self, ast_node):
    """The LibCST node of an ast node of this file; NotLocated when there is none."""
    key = id(ast_node)
    if key not in self._found:
      self._found[key] = self._locate(ast_node)
    return self._found[key]

  def _locate(self, ast_node):
    kind = 'Constant' if type(ast_node).__name__ in ('Num', 'Str', 'Bytes', 'NameConstant') else \
        type(ast_node).__name__
    classes = _KINDS.get(kind)
    if classes is None:
      raise NotLocated('%s:%d: no LibCST counterpart for ast.%s' % (self.path, ast_node.lineno, kind))
    if isinstance(ast_node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
      return self._definition(ast_node, classes)
    line, column = ast_node.lineno, self.module.column_of(ast_node)
    signature = _ast_signature(ast_node)
    depth = self._depth(ast_node, kind, signature)
    found = [n for n in self._at.get((line, column), ()) if isinstance(n, classes) and
             _cst_signature(n) == signature]
    if len(found) > depth:
      return found[depth]
    raise NotLocated('%s:%d:%d: no LibCST %s there' % (self.path, line, column, kind))

  def _depth(self, ast_node, kind, signature):
    """How many nodes of the same kind and signature that start at the same place enclose this one (`a.b.b`: the
    inner attribute is at depth 1)."""
    depth, parent = 0, self.module.parents.get(id(ast_node))
    while parent is not None and getattr(parent, 'lineno', None) == ast_node.lineno and \
        getattr(parent, 'col_offset', None) == ast_node.col_offset:
      if type(parent).__name__ == kind and _ast_signature(parent) == signature:
        depth += 1
      parent = self.module.parents.get(id(parent))
    return depth

  def _definition(self, ast_node, classes):
    """A def or class by its name, on the lines from ast's line (its first decorator on Python 3.7) to its body."""
    last = ast_node.body[0].lineno if ast_node.body else ast_node.lineno
    for node, position in self.positions.items():
      if isinstance(node, classes) and node.name.value == ast_node.name and \
          ast_node.lineno <= position.start.line <= last:
        return node
    raise NotLocated('%s:%d: no LibCST def %s there' % (self.path, ast_node.lineno, ast_node.name))

  # --- positions and structure of the LibCST tree ----------------------------------------------------------------

  def line(self, node):
    return self.positions[node].start.line

  def column(self, node):
    return self.positions[node].start.column

  def end_line(self, node):
    return self.positions[node].end.line

  def parent(self, node):
    return self.parents.get(node)

  def enclosing(self, node, kinds):
    """The nearest ancestor of one of `kinds`, else None."""
    node = self.parents.get(node)
    while node is not None and not isinstance(node, kinds):
      node = self.parents.get(node)
    return node

  def statement_of(self, node):
    """The statement (SimpleStatementLine or compound statement) a node is part of."""
    while node is not None and not isinstance(node, STATEMENTS):
      node = self.parents.get(node)
    return node

  def indent_of(self, statement):
    """The indentation (in columns) of a statement."""
    return self.column(statement)

  def statement_at(self, line):
    """The innermost statement that starts on `line`, or that spans it."""
    best = None
    for node, position in self.positions.items():
      if isinstance(node, STATEMENTS) and position.start.line <= line <= position.end.line:
        if isinstance(node, cst.BaseCompoundStatement) and line > self.line(node.body) - 1 and \
            self.line(node.body) <= line and not isinstance(node.body, cst.SimpleStatementSuite):
          continue  # in the body of a compound statement: an inner one is meant (a one-line body has none)
        if best is None or self.line(node) >= self.line(best):
          best = node
    return best

  def names_used(self):
    """Every name the file binds or reads (for new names that clash with none)."""
    return set(n.value for n in self.positions if isinstance(n, cst.Name))


def _ast_signature(node):
  """What tells apart nodes of one kind that start at one place: a name, an attribute, what a call calls."""
  if isinstance(node, ast.Name):
    return node.id
  if isinstance(node, ast.Attribute):
    return node.attr
  if isinstance(node, ast.Call):
    return _ast_signature(node.func) if isinstance(node.func, (ast.Name, ast.Attribute)) else '()'
  value = getattr(node, 'value', 0) if type(node).__name__ in ('Constant', 'NameConstant') else 0
  if value is None or isinstance(value, bool):
    return repr(value)  # None, True, False: a Name in LibCST's tree
  return None


def _cst_signature(node):
  if isinstance(node, cst.Name):
    return node.value
  if isinstance(node, cst.Attribute):
    return node.attr.value
  if isinstance(node, cst.Call):
    return _cst_signature(node.func) if isinstance(node.func, (cst.Name, cst.Attribute)) else '()'
  return None
