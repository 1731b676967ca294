"""One file of the program as `ast` reads it: its module name, its imports (canonical and as written), its
top-level definitions and module-level assignments, and the parent and enclosing function of every node.

A name means what the source binds it to: `import tensorflow.compat.v1 as tf` makes `tf.estimator.Estimator` the
canonical `tensorflow.estimator.Estimator`, whichever spelling of the API a file uses (see normalize).
"""
import ast
import collections
import os

from estimator_tpu.porting.program import syntax

# Spellings of one API that are the same object: TF 2's compat.v1 is TF 1's top level, and tensorflow_estimator
# is what `tf.estimator` re-exports.
_CANONICAL_PREFIXES = [
    ('tensorflow.compat.v1.', 'tensorflow.'),
    ('tensorflow.compat.v2.', 'tensorflow.'),
    ('tensorflow._api.v1.', 'tensorflow.'),
    ('tensorflow._api.v2.', 'tensorflow.'),
    ('tensorflow_core.', 'tensorflow.'),
    ('tensorflow_estimator.compat.v1.', 'tensorflow.'),
    ('tensorflow_estimator.', 'tensorflow.'),
]


# TensorFlow's own module of the tf.summary ops, which programs import by its path (`from tensorflow.python import
# summary`: in TF 1.15 that name is tensorflow/python/summary/summary.py, tf.summary itself).
_SUMMARY_MODULES = ('tensorflow.python.summary.summary.', 'tensorflow.python.summary.')


def normalize(name):
  """The canonical spelling of a dotted name (see _CANONICAL_PREFIXES)."""
  if name in ('tensorflow.compat.v1', 'tensorflow.compat.v2'):
    return 'tensorflow'
  for prefix in _SUMMARY_MODULES:
    if name.startswith(prefix) and '.' not in name[len(prefix):]:
      return 'tensorflow.summary.' + name[len(prefix):]
  for prefix, replacement in _CANONICAL_PREFIXES:
    if name.startswith(prefix):
      return replacement + name[len(prefix):]
  return name


def module_name_for(path):
  """Dotted module name of a file: its package folders (those with __init__.py) and its stem."""
  directory, filename = os.path.split(os.path.abspath(path))
  parts = [os.path.splitext(filename)[0]]
  if parts[0] == '__init__':
    parts = []
  while os.path.isfile(os.path.join(directory, '__init__.py')):
    directory, package = os.path.split(directory)
    parts.insert(0, package)
  return '.'.join(parts) or os.path.splitext(filename)[0]



def module_statements(tree):
  """The statements Python runs at module level: the top-level ones and those inside module-level `if`, `try`,
  `with` and loops (`if __name__ == '__main__':` blocks), not those of defs and classes."""
  pending = list(tree.body)
  while pending:
    statement = pending.pop(0)
    yield statement
    if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
      inner = list(statement.body) + list(getattr(statement, 'orelse', []))
      inner += list(getattr(statement, 'finalbody', []))
      for handler in getattr(statement, 'handlers', []):
        inner += handler.body
      pending[:0] = inner



class Module(object):
  """One parsed file: its text, its aliases, its top-level defs, and which function each def is nested in."""

  def __init__(self, path, tree, name, text=None, encoding='utf-8'):
    self.path = path
    self.tree = tree
    self.name = name
    self.text = text  # the source as read (the rewrite edits this text; None for files read only for context)
    self.encoding = encoding
    self.python2 = False  # Python 2 source, read as Python 3 (files.python2_as_python3): `text` is the conversion
    self.package = name.rsplit('.', 1)[0] if '.' in name else ''
    if os.path.basename(path) == '__init__.py':
      self.package = name
    self.aliases = {}  # local name -> canonical dotted name
    self.written_imports = {}  # local name -> the module or name imported, as written (tensorflow.compat.v1)
    self.top_level = {}  # name -> FunctionDef/ClassDef
    self.assignments = collections.defaultdict(list)  # module-level name -> [value nodes]
    self.enclosing = {}  # id(def or lambda node) -> the function it is nested in, or None
    self.parents = {}  # id(node) -> parent node
    self._lines = None
    self._index()

  @property
  def root(self):
    """The folder this module's dotted name starts in (pkg/sub/m.py named sub.m: pkg)."""
    folder = os.path.dirname(os.path.abspath(self.path))
    inside = self.name.count('.') + (1 if os.path.basename(self.path) == '__init__.py' else 0)
    for _ in range(inside):
      folder = os.path.dirname(folder)
    return folder

  def statement_of(self, node):
    """The statement a node is part of (itself for a statement), else None."""
    while node is not None and not isinstance(node, ast.stmt):
      node = self.parents.get(id(node))
    return node

  def _index(self):
    for node in ast.walk(self.tree):
      for child in ast.iter_child_nodes(node):
        self.parents[id(child)] = node
    self._index_scopes(self.tree, None)
    for node in syntax.in_source_order(self.tree):
      if isinstance(node, ast.Import):
        for alias in node.names:
          self.written_imports[alias.asname or alias.name.split('.')[0]] = alias.name if alias.asname else \
              alias.name.split('.')[0]
      elif isinstance(node, ast.ImportFrom) and not node.level:
        for alias in node.names:
          if alias.name != '*':
            self.written_imports[alias.asname or alias.name] = '%s.%s' % (node.module, alias.name)
    for node in ast.walk(self.tree):
      if isinstance(node, ast.Import):
        for alias in node.names:
          if alias.asname:
            self.aliases[alias.asname] = normalize(alias.name)
          else:
            top = alias.name.split('.')[0]
            self.aliases[top] = top
      elif isinstance(node, ast.ImportFrom):
        base = self.absolute(node.module, node.level)
        for alias in node.names:
          if alias.name != '*':
            self.aliases[alias.asname or alias.name] = normalize('%s.%s' % (base, alias.name) if base else alias.name)
    for statement in module_statements(self.tree):
      if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        self.top_level[statement.name] = statement
      elif isinstance(statement, ast.Assign):
        for target in statement.targets:
          for name in syntax.assigned_names(target):
            self.assignments[name].append(statement.value)
      elif isinstance(statement, ast.AnnAssign) and statement.value is not None and \
          isinstance(statement.target, ast.Name):
        self.assignments[statement.target.id].append(statement.value)
    # `FLAGS = flags.FLAGS`, `tpu = tf.contrib.tpu`: module-level names for dotted imports are aliases too.
    for _ in range(2):
      for name, values in self.assignments.items():
        if len(values) == 1 and name not in self.aliases:
          canonical = self.canonical(values[0])
          if canonical and '.' in canonical:
            self.aliases[name] = canonical

  def absolute(self, module, level):
    """The absolute dotted name of an import of `module` at `level` (from .x import ...: level 1) here."""
    if not level:
      return module or ''
    parts = self.package.split('.') if self.package else []
    parts = parts[:len(parts) - (level - 1)] if level > 1 else parts
    if module:
      parts.append(module)
    return '.'.join(parts)

  def _index_scopes(self, node, function):
    for child in ast.iter_child_nodes(node):
      if isinstance(child, syntax.FUNCTION_NODES):
        self.enclosing[id(child)] = function
        self._index_scopes(child, child)
      else:
        self._index_scopes(child, function)

  def column_of(self, node):
    """A node's column in characters from the start of its line, 0-based (as LibCST counts); ast counts UTF-8
    bytes."""
    offset = getattr(node, 'col_offset', 0)
    if self.text is None or not offset:
      return offset
    if self._lines is None:
      self._lines = self.text.splitlines()
    line = getattr(node, 'lineno', 1)
    text = self._lines[line - 1] if 0 < line <= len(self._lines) else ''
    return len(text.encode('utf-8')[:offset].decode('utf-8', 'ignore'))

  def canonical(self, node):
    """Canonical dotted name of a Name/Attribute chain rooted at an import alias or a top-level def, else None."""
    name = syntax.dotted(node)
    if not name:
      return None
    head, _, rest = name.partition('.')
    if head in self.aliases:
      base = self.aliases[head]
    elif head in self.top_level:
      base = '%s.%s' % (self.name, head)
    else:
      return None
    return normalize('%s.%s' % (base, rest) if rest else base)

