"""The program as read: its files (modules.Module, each parsed once by files.read_module), and the questions about
names that every check and every fixer asks, answered once here.

Nothing is imported or run. `lookup` says where a name used in a function is bound (a parameter, a local value, a
def, an import, a module-level value); `canonical` gives the API a name chain stands for; `assignments` every
value a name is given in a scope; `calls` every call of the program, by scope. What a callable expression stands
for is callables.py's (program.callables), files beside the program neighbours.py's (program.neighbours).
"""
import ast
import collections
import os

from estimator_tpu.porting.program import callables as callables_lib
from estimator_tpu.porting.program import files
from estimator_tpu.porting.program import modules as modules_lib
from estimator_tpu.porting.program import neighbours as neighbours_lib
from estimator_tpu.porting.program import syntax


def read(paths):
  """(Program, bad inputs) for the Python files under `paths`, each read and parsed once."""
  found, bad = files.find_files(paths)
  parsed = []
  for path in found:
    module, problem = files.read_module(path)
    if module is None:
      bad.append(problem)
    else:
      parsed.append(module)
  return Program(parsed), bad


# Statements that bind names: what reading.assignments looks through.
BINDING_NODES = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.comprehension)

class Program(object):
  """All scanned modules, with lookups across them."""

  def __init__(self, modules):
    self.modules = list(modules)
    self.by_name = {}
    for module in self.modules:
      self.by_name.setdefault(module.name, module)
    for _ in range(2):  # a star import of a module that star-imports another
      for module in self.modules:
        self._star_imports(module)
    self.callables = callables_lib.Callables(self)
    self.neighbours = neighbours_lib.Neighbours(self)
    self._locals_cache = {}
    self._calls = None
    self._calls_by_name = None
    self._arguments_by_name = None
    self._module_of = None
    self._binders = {}  # id(scope) -> the statements of a scope that can bind a name (assignments, for targets)
    self._returns = {}  # id(fn) -> the expressions it returns
    self.memo = {}  # facts computed once per program (program/inputs.py's readings ...)

  def _star_imports(self, module):
    """`from config import *` of a scanned module binds its public names here, as Python does: its defs and
    classes, its module-level values and what it imports (`__all__` when it lists them)."""
    for statement in modules_lib.module_statements(module.tree):
      if not (isinstance(statement, ast.ImportFrom) and any(a.name == '*' for a in statement.names)):
        continue
      base = module.absolute(statement.module, statement.level)
      source = self.find_module(base) if base else None
      if source is None or source is module:
        continue
      listed = source.assignments.get('__all__')
      names = syntax.literal(listed[-1]) if listed else None
      public = set(source.top_level) | set(source.assignments) | set(source.aliases)
      for name in sorted(public):
        if name.startswith('_') or (isinstance(names, (list, tuple)) and name not in names):
          continue
        if name in module.top_level or name in module.assignments or name in module.aliases:
          continue  # bound in the module itself (later statements win; good enough for a reading)
        module.aliases[name] = source.aliases[name] if name in source.aliases and name not in source.top_level \
            and name not in source.assignments else '%s.%s' % (source.name, name)

  def mentions(self, text):
    """Whether a scanned file names `text`: in a string (os.environ['TF_CONFIG'], a docstring), an attribute or a
    name (tf.train.ClusterSpec)."""
    for module in self.modules:
      for node in ast.walk(module.tree):
        value = syntax.literal(node)
        if isinstance(value, str) and text in value:
          return True
        if (isinstance(node, ast.Attribute) and node.attr == text) or (isinstance(node, ast.Name) and node.id == text):
          return True
    return False

  def enclosing_function(self, module, node):
    """The def or lambda a node is written in, None at module level."""
    parent = module.parents.get(id(node))
    while parent is not None and not isinstance(parent, syntax.FUNCTION_NODES):
      parent = module.parents.get(id(parent))
    return parent

  def module_of(self, node):
    """The scanned module a def, lambda or class is written in."""
    if self._module_of is None:
      self._module_of = {}
      for module in self.modules:
        for child in ast.walk(module.tree):
          if isinstance(child, syntax.SCOPE_NODES):
            self._module_of[id(child)] = module
    return self._module_of.get(id(node))

  def find_module(self, dotted_name):
    """The scanned module named `dotted_name`, or one whose name ends with it (fixtures outside a package)."""
    if dotted_name in self.by_name:
      return self.by_name[dotted_name]
    matches = [m for m in self.modules
               if m.name.endswith('.' + dotted_name) or (dotted_name.endswith('.' + m.name) and
                                                         _in_folders(m, dotted_name[:-len(m.name) - 1]))]
    return matches[0] if len(matches) == 1 else None

  def find_def(self, canonical):
    """(module, FunctionDef/ClassDef) for a canonical `module.name`, else None."""
    if not canonical or '.' not in canonical:
      return None
    module_name, _, name = canonical.rpartition('.')
    module = self.find_module(module_name)
    if module is None or name not in module.top_level:
      return None
    return module, module.top_level[name]

  def find_value(self, canonical):
    """(module, expression) of what a scanned module assigns at module level to a canonical `module.name` (its last
    assignment), else None: `from inputs import train_input_fn`, where inputs.py assigns it a lambda."""
    module_name, _, name = (canonical or '').rpartition('.')
    module = self.find_module(module_name) if module_name else None
    if module is None or name not in module.assignments:
      return None
    return module, module.assignments[name][-1]

  def find_definition(self, canonical):
    """(module, FunctionDef/ClassDef) for a canonical `module.name`: in the program's files, else in a project
    module beside them (read for its definitions); else None."""
    if not canonical or '.' not in canonical or canonical.split('.')[0] in ('tensorflow', 'absl', 'numpy'):
      return None
    found = self.find_def(canonical)
    if found is not None:
      return found
    module_name, _, name = canonical.rpartition('.')
    module = self.neighbours.module_named(module_name)
    return (module, module.top_level[name]) if module is not None and name in module.top_level else None

  def local_bindings(self, module, fn):
    """name -> [(kind, node)] for what a function binds itself: 'def', 'value' (an assigned expression),
    'param', 'other' (loop variables, with-targets, imports...)."""
    key = id(fn)
    if key not in self._locals_cache:
      bindings = collections.defaultdict(list)
      for name in syntax.param_names(fn):
        bindings[name].append(('param', fn))
      for node, _ in syntax.walk_local(fn):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
          bindings[node.name].append(('def', node))
        elif isinstance(node, ast.Assign):
          for target in node.targets:
            names = syntax.assigned_names(target)
            kind = 'value' if isinstance(target, ast.Name) else 'other'
            for name in names:
              bindings[name].append((kind, node.value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
          bindings[node.target.id].append(('value', node.value) if isinstance(node, ast.AnnAssign) and node.value
                                          else ('other', node))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
          for name in syntax.assigned_names(node.target):
            bindings[name].append(('other', node))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
          for name in syntax.assigned_names(node.optional_vars):
            bindings[name].append(('other', node))
        elif isinstance(node, ast.Import):
          for alias in node.names:
            local = alias.asname or alias.name.split('.')[0]
            bindings[local].append(('import', modules_lib.normalize(alias.name) if alias.asname else local))
        elif isinstance(node, ast.ImportFrom):
          base = module.absolute(node.module, node.level)
          for alias in node.names:
            if alias.name != '*':
              full = '%s.%s' % (base, alias.name) if base else alias.name
              bindings[alias.asname or alias.name].append(('import', modules_lib.normalize(full)))
      self._locals_cache[key] = bindings
    return self._locals_cache[key]

  def lookup(self, module, fn, name):
    """Where `name`, used inside `fn` (None: at module level), is bound: (kind, node, module, owner function).

    Kinds: 'def', 'class', 'value', 'param', 'other', 'import' (node is the canonical name), or None.
    """
    scope = fn
    while scope is not None:
      bindings = self.local_bindings(module, scope).get(name)
      if bindings:
        kind, node = self._binding(bindings)
        return kind, node, module, scope
      scope = module.enclosing.get(id(scope))
    if name in module.top_level:
      node = module.top_level[name]
      return ('class' if isinstance(node, ast.ClassDef) else 'def'), node, module, None
    if name in module.aliases:
      return 'import', module.aliases[name], module, None
    if name in module.assignments:
      return 'value', module.assignments[name][-1], module, None
    return None, None, module, None

  def _binding(self, bindings):
    """The binding a name is read through: its last, except that a name several imports bind (`import mjsynth as
    pipe` in one branch, `import maptextsynth as pipe` in another) is the scanned module's."""
    if len(bindings) > 1 and all(kind == 'import' for kind, _ in bindings):
      scanned = [binding for binding in bindings if self.find_module(binding[1]) is not None]
      if scanned:
        return scanned[-1]
    return bindings[-1]

  def canonical(self, module, fn, node, depth=0):
    """Canonical name of a Name/Attribute chain, unless a local variable shadows its root; a local bound once to
    a dotted name of an import is an alias (`fc_cat = tf.feature_column.categorical_column_with_vocabulary_list`
    in a function)."""
    root = syntax.root_name(node)
    scope = fn if root else None
    while scope is not None:
      bindings = self.local_bindings(module, scope).get(root)
      if bindings:
        kind, bound = self._binding(bindings)
        name = syntax.dotted(node)
        if not name:
          return None
        rest = name.partition('.')[2]
        if kind == 'value' and len(bindings) == 1 and depth < 3 and isinstance(bound, (ast.Name, ast.Attribute)) \
            and syntax.root_name(bound) != root:
          base = self.canonical(module, scope, bound, depth + 1)
          if base and '.' in base:
            return modules_lib.normalize('%s.%s' % (base, rest) if rest else base)
        if kind != 'import':
          return None  # a local variable: its value is not an import
        return modules_lib.normalize('%s.%s' % (bound, rest) if rest else bound)
      scope = module.enclosing.get(id(scope))
    return module.canonical(node)

  def assignments(self, module, fn, name):
    """(value, path) of every assignment to `name` in a scope (fn None: module level), a tuple target giving the
    path of the name in it; `for name in values` gives (values, ('*',))."""
    found = []
    for node in self._binding_statements(module, fn):
      if isinstance(node, ast.Assign):
        for target in node.targets:
          target_path = callables_lib.path_in(target, name)
          if target_path is not None:
            found.append((node.value, target_path))
      elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) and \
          node.target.id == name and node.value is not None:
        found.append((node.value, ()))
      elif isinstance(node, (ast.For, ast.comprehension)) and callables_lib.path_in(node.target, name) is not None:
        found.append((node.iter, ('*',)))
    return found

  def _binding_statements(self, module, fn):
    """The nodes of a scope (fn None: module level) that can bind a name, in order; read once per scope (the trees
    are never changed)."""
    scope = module.tree if fn is None else fn
    cached = self._binders.get(id(scope))
    if cached is None or cached[0] is not scope:  # (the scope kept beside its nodes: an id is only unique while alive)
      if fn is None:
        nodes = [n for s in modules_lib.module_statements(module.tree) if not isinstance(s, syntax.SCOPE_NODES)
                 for n in ast.walk(s)]
      else:
        nodes = [n for n, _ in syntax.walk_local(fn)]
      cached = self._binders[id(scope)] = (scope, [n for n in nodes if isinstance(n, BINDING_NODES)])
    return cached[1]

  def passed_as_argument(self, name):
    """(module, calling function, call, argument) for every call that passes the name `name` as an argument."""
    self.calls_named(name)  # builds both indexes
    return self._arguments_by_name.get(name, [])

  def calls(self):
    """(module, calling function or None, call) for every call of the scanned code, each scope's in order."""
    if self._calls is None:
      self._calls = []
      for module in self.modules:
        scopes = [module.tree] + [n for n in ast.walk(module.tree) if isinstance(n, syntax.FUNCTION_NODES)]
        for scope in scopes:
          caller = None if scope is module.tree else scope
          self._calls += [(module, caller, node) for node, _ in syntax.walk_local(scope) if isinstance(node, ast.Call)]
    return self._calls

  def calls_named(self, name):
    """(module, calling function or None, call) for every call of `name(...)` or `x.name(...)`."""
    if self._calls_by_name is None:
      self._calls_by_name = collections.defaultdict(list)
      self._arguments_by_name = collections.defaultdict(list)
      for module, caller, node in self.calls():
        callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, 'attr', None)
        self._calls_by_name[callee].append((module, caller, node))
        for argument in list(node.args) + [kw.value for kw in node.keywords]:
          if isinstance(argument, ast.Name):
            self._arguments_by_name[argument.id].append((module, caller, node, argument))
    return self._calls_by_name.get(name, [])

  def returned_values(self, fn):
    """The expressions a function returns (its own return statements, not nested functions')."""
    if isinstance(fn, ast.Lambda):
      return [fn.body]
    cached = self._returns.get(id(fn))
    if cached is None or cached[0] is not fn:
      cached = self._returns[id(fn)] = (fn, [node.value for node, _ in syntax.walk_local(fn)
                                             if isinstance(node, ast.Return) and node.value])
    return list(cached[1])


def _in_folders(module, package):
  """Whether a module read under a shorter name lies in folders named as the rest of a dotted name says
  (`trainer.model` for trainer/model.py scanned from inside trainer/); `official.mnist` is not a scanned mnist.py
  whose folder is no `official`: that is another package's module (tensorflow/models' official.mnist)."""
  folders = module.root.split(os.sep)
  parts = package.split('.')
  return folders[-len(parts):] == parts
