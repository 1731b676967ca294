"""The files being ported, parsed with LibCST: positions, parents, import aliases, and names resolved to what they
stand for (imports, defs, assignments), across the files of the program.

LibCST keeps every byte of the source (comments, blank lines, formatting) in its tree, so a file printed back
unchanged is the file read, and a changed node changes only its own text.
"""
import ast
import collections
import io
import re
import tokenize

import libcst as cst
from libcst import metadata

# The port report's own rules for a file's module name, its aliases and an API's canonical spelling (the report
# never imports LibCST).
from estimator_tpu.porting.program import reading as report_program
from estimator_tpu.porting.program.modules import module_name_for
from estimator_tpu.porting.program import modules as report_modules

FUNCTIONS = (cst.FunctionDef, cst.Lambda)


DOTTED = re.compile(r'^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$')


def dotted(node):
  """'a.b.c' for a Name/Attribute chain, else None (LibCST's nodes; pyast.dotted reads ast's)."""
  if not isinstance(node, (cst.Name, cst.Attribute)):
    return None
  text = ''.join(cst.Module([]).code_for_node(node).split())
  return text if DOTTED.match(text) else None


def root_name(node):
  """The Name at the bottom of an attribute/subscript/call chain, else None."""
  if isinstance(node, cst.Name):
    return node.value
  inner = {cst.Attribute: 'value', cst.Subscript: 'value', cst.Call: 'func'}.get(type(node))
  return root_name(getattr(node, inner)) if inner else None


def read_source(path):
  """(text, encoding) of a Python file, honouring its coding declaration."""
  with open(path, 'rb') as f:
    data = f.read()
  encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
  return data.decode(encoding), encoding


class SourceFile(object):
  """One parsed file: the LibCST module (its nodes are the keys of the metadata), positions, parents, aliases."""

  def __init__(self, path, text, encoding='utf-8'):
    self.path = path
    self.text = text
    self.encoding = encoding
    self.name = module_name_for(path)
    wrapper = metadata.MetadataWrapper(cst.parse_module(text))
    self.module = wrapper.module
    self.positions = wrapper.resolve(metadata.PositionProvider)
    self.parents = wrapper.resolve(metadata.ParentNodeProvider)
    self.aliases = {}  # local name -> canonical dotted name
    self.raw_aliases = {}  # local name -> the module or name imported, as written (tensorflow.compat.v1)
    self.top_level = {}  # name -> FunctionDef / ClassDef
    self.assignments = collections.defaultdict(list)  # module-level name -> [value]
    self._bindings = {}
    self._index()

  # --- indexing ---------------------------------------------------------------------------------------------------

  def _index(self):
    for statement in self.module.body:
      if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        self.top_level[statement.name.value] = statement
    for statement in _module_level(self.module.body):  # `if __name__ == '__main__':` blocks bind these too
      for small in statement.body:
        if isinstance(small, cst.Assign):
          for target in small.targets:
            if isinstance(target.target, cst.Name):
              self.assignments[target.target.value].append(small.value)
    # The aliases as the port report reads them (imports, and `FLAGS = flags.FLAGS`-style module-level names).
    read = report_modules.Module(self.path, ast.parse(self.text, filename=self.path), self.name)
    self.read = read  # the report's reading of this file
    self._canonical = {}
    self.aliases = dict(read.aliases)
    for node in self.positions:  # and as written: `tf` for tensorflow or for tensorflow.compat.v1
      if isinstance(node, cst.Import):
        for alias in node.names:
          name = dotted(alias.name)
          local = alias.asname.name.value if alias.asname is not None else name.split('.')[0]
          self.raw_aliases[local] = name if alias.asname is not None else local
      elif isinstance(node, cst.ImportFrom) and not node.relative and not isinstance(node.names, cst.ImportStar):
        for alias in node.names:
          local = alias.asname.name.value if alias.asname is not None else alias.name.value
          self.raw_aliases[local] = '%s.%s' % (dotted(node.module), dotted(alias.name))

  # --- positions and structure ------------------------------------------------------------------------------------

  def line(self, node):
    return self.positions[node].start.line

  def column(self, node):
    return self.positions[node].start.column

  def end_line(self, node):
    return self.positions[node].end.line

  def nodes_at(self, line, kinds):
    """Nodes of the given types that start on `line`, outermost first."""
    found = [n for n, p in self.positions.items() if p.start.line == line and isinstance(n, kinds)]
    return sorted(found, key=lambda n: (self.positions[n].start.column, -self._size(n)))

  def _size(self, node):
    p = self.positions[node]
    return (p.end.line - p.start.line) * 10000 + p.end.column - p.start.column

  def parent(self, node):
    return self.parents.get(node)

  def enclosing(self, node, kinds):
    """The nearest ancestor of one of `kinds`, else None."""
    node = self.parents.get(node)
    while node is not None and not isinstance(node, kinds):
      node = self.parents.get(node)
    return node

  def function_of(self, node):
    return self.enclosing(node, FUNCTIONS)

  def statement_of(self, node):
    """The statement (SimpleStatementLine or compound statement) a node is part of."""
    while node is not None and not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
      node = self.parents.get(node)
    return node

  def block_of(self, statement):
    """The list of statements `statement` is in, and its owner (IndentedBlock or Module)."""
    owner = self.parents.get(statement)
    return (owner.body if isinstance(owner, (cst.IndentedBlock, cst.Module)) else None), owner

  def indent_of(self, statement):
    """The indentation (in columns) of a statement."""
    return self.column(statement)

  def source_of(self, node):
    return self.module.code_for_node(node)

  # --- names --------------------------------------------------------------------------------------------------------

  def names_used(self):
    """Every name the file binds or reads (for new names that clash with none)."""
    return set(n.value for n in self.positions if isinstance(n, cst.Name))

  def canonical(self, node):
    """Canonical dotted name of a Name/Attribute chain rooted at an import alias or a top-level def, else None:
    the port report's answer for the same chain."""
    name = dotted(node)
    if not name:
      return None
    if name not in self._canonical:
      self._canonical[name] = self.read.canonical(ast.parse(name, mode='eval').body)
    return self._canonical[name]

  def local_bindings(self, fn):
    """name -> [(kind, node)] a function binds itself: 'param', 'value' (an Assign value), 'def', 'other'."""
    if fn not in self._bindings:
      self._bindings[fn] = self._local_bindings(fn)
    return self._bindings[fn]

  def _local_bindings(self, fn):
    bindings = collections.defaultdict(list)
    if isinstance(fn, (cst.FunctionDef, cst.Lambda)):
      for param in all_params(fn.params):
        bindings[param.name.value].append(('param', param))
    body = fn.body if isinstance(fn, cst.FunctionDef) else None
    if body is None:
      return bindings
    for node in walk_local(body):
      if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        bindings[node.name.value].append(('def', node))
      elif isinstance(node, cst.Assign):
        for target in node.targets:
          kind = 'value' if isinstance(target.target, cst.Name) else 'other'
          for name in assigned_names(target.target):
            bindings[name].append((kind, node.value))
      elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        for name in assigned_names(node.target):
          bindings[name].append(('other', node))
      elif isinstance(node, (cst.For, cst.CompFor)):
        for name in assigned_names(node.target):
          bindings[name].append(('other', node))
      elif isinstance(node, cst.WithItem) and node.asname is not None:
        for name in assigned_names(node.asname.name):
          bindings[name].append(('other', node))
    return bindings

  def lookup(self, fn, name):
    """(kind, node, owner function or None) of `name` used inside `fn` (None: module level)."""
    scope = fn
    while scope is not None:
      bound = self.local_bindings(scope).get(name)
      if bound:
        kind, node = bound[-1]
        return kind, node, scope
      scope = self.function_of(scope)
    if name in self.top_level:
      return 'def', self.top_level[name], None
    if name in self.aliases:
      return 'import', self.aliases[name], None
    if name in self.assignments:
      return 'value', self.assignments[name][-1], None
    return None, None, None

  def free_names(self, node):
    """Names an expression reads (not attribute names, not keyword names, not lambda parameters)."""
    names = []
    for child in walk(node):
      if isinstance(child, cst.Name) and self._is_read(child, node) and child.value not in names:
        names.append(child.value)
    return names

  def _is_read(self, name, top):
    parent = self.parents.get(name)
    if isinstance(parent, cst.Attribute) and parent.attr is name:
      return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
      return False
    if isinstance(parent, cst.Param):
      return False
    fn = self.function_of(name)
    while fn is not None and fn is not top:
      if isinstance(fn, cst.Lambda) and name.value in [p.name.value for p in all_params(fn.params)]:
        return False
      fn = self.function_of(fn)
    return True


def all_params(params):
  return list(params.posonly_params if hasattr(params, 'posonly_params') else []) + list(params.params) + \
      list(params.kwonly_params)


def positional_names(fn):
  return [p.name.value for p in (list(getattr(fn.params, 'posonly_params', [])) + list(fn.params.params))]


def walk(node):
  """Every node under `node` (itself included), depth first."""
  stack = [node]
  while stack:
    current = stack.pop()
    yield current
    stack.extend(reversed(current.children))


def walk_local(node):
  """Nodes under `node` that run in its own scope: nested defs, classes and lambdas are yielded, not entered."""
  stack = list(reversed(node.children))
  while stack:
    current = stack.pop()
    yield current
    if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
      stack.extend(reversed(current.children))


def assigned_names(target):
  if isinstance(target, cst.Name):
    return [target.value]
  if isinstance(target, (cst.Tuple, cst.List)):
    names = []
    for element in target.elements:
      names += assigned_names(element.value)
    return names
  if isinstance(target, cst.StarredElement):
    return assigned_names(target.value)
  return []


def _module_level(statements):
  """The simple statements that run at module level: top-level ones and those in top-level if/try/with/for/while
  blocks (not in functions or classes)."""
  for statement in statements:
    if isinstance(statement, cst.SimpleStatementLine):
      yield statement
    elif isinstance(statement, (cst.If, cst.Try, cst.With, cst.For, cst.While, cst.Else, cst.ExceptHandler,
                                cst.Finally)):
      for child in statement.children:
        if isinstance(child, cst.IndentedBlock):
          for inner in _module_level(child.body):
            yield inner
        elif isinstance(child, (cst.If, cst.Else, cst.ExceptHandler, cst.Finally)):  # elif, else, except, finally
          for inner in _module_level([child]):
            yield inner


def argument(call, position, keyword):
  """The expression given for a parameter, by keyword or at its position (None: not passed or unknown)."""
  for arg in call.args:
    if arg.keyword is not None and arg.keyword.value == keyword:
      return arg.value
  positional = [a for a in call.args if a.keyword is None and not a.star]
  if position is not None and position < len(positional):
    return positional[position].value
  return None


def arg_node(call, position, keyword):
  """The Arg node that passes a parameter (see argument)."""
  for arg in call.args:
    if arg.keyword is not None and arg.keyword.value == keyword:
      return arg
  positional = [a for a in call.args if a.keyword is None and not a.star]
  if position is not None and position < len(positional):
    return positional[position]
  return None


def has_star_args(call):
  return any(a.star for a in call.args)


def literal(node):
  """Python value of a simple literal (numbers, strings, True/False/None), else NO_VALUE."""
  if isinstance(node, cst.Name) and node.value in ('True', 'False', 'None'):
    return {'True': True, 'False': False, 'None': None}[node.value]
  if isinstance(node, cst.Integer):
    return int(node.value, 0)
  if isinstance(node, cst.Float):
    return float(node.value)
  if isinstance(node, cst.SimpleString):
    return node.evaluated_value
  if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
    value = literal(node.expression)
    return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else NO_VALUE
  return NO_VALUE


NO_VALUE = object()


def bind_arguments(call, fn):
  """{parameter name: argument expression} for a call of a def or lambda."""
  names = positional_names(fn)
  bound = {}
  positional = [a for a in call.args if a.keyword is None]
  for name, arg in zip(names, positional):
    if arg.star:
      break
    bound[name] = arg.value
  for arg in call.args:
    if arg.keyword is not None:
      bound[arg.keyword.value] = arg.value
  return bound
