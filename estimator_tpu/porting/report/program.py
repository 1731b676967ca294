"""The scanned files as one program: each module's import aliases, and names resolved to what they stand for.

Nothing is imported or run. A name means what the source binds it to: an import (`import tensorflow.compat.v1 as
tf` makes `tf.estimator.Estimator` the canonical `tensorflow.estimator.Estimator`), a def, or an assignment
whose value is resolved in turn. What cannot be followed (a parameter, a module that was not scanned, a value
computed at run time) resolves to an Unresolved that says why, so checks can say so instead of guessing.
"""
import ast
import collections
import os

from estimator_tpu.porting.report import pyast

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
MAX_DEPTH = 6  # how many builders, assignments and partials deep a callable is followed


def normalize(name):
  """The canonical spelling of a dotted name (see _CANONICAL_PREFIXES)."""
  if name in ('tensorflow.compat.v1', 'tensorflow.compat.v2'):
    return 'tensorflow'
  for prefix, replacement in _CANONICAL_PREFIXES:
    if name.startswith(prefix):
      return replacement + name[len(prefix):]
  return name


# A function static analysis found: its module and def (or lambda); what functools.partial bound; and `via`, the
# builder calls it came out of as (module, function, call, builder def), so a closure's values can be looked up.
Fn = collections.namedtuple('Fn', ['module', 'node', 'bound_positional', 'bound_keywords', 'via', 'partial'])
Fn.__new__.__defaults__ = (0, frozenset(), (), None)


class Unresolved(object):
  """A callable static analysis could not find; `reason` finishes the sentence "cannot tell statically: ...".
  `made_by` is the canonical name of the TensorFlow function that made it, when one did (numpy_input_fn ...)."""

  def __init__(self, reason, made_by=None, call=None):
    self.reason = reason
    self.made_by = made_by
    self.call = call  # (module, function, call) of the TensorFlow call that made it, when one did

  def __repr__(self):
    return 'Unresolved(%r)' % self.reason


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
  """One parsed file: its aliases, its top-level defs, and which function each def is nested in."""

  def __init__(self, path, tree, name):
    self.path = path
    self.tree = tree
    self.name = name
    self.package = name.rsplit('.', 1)[0] if '.' in name else ''
    if os.path.basename(path) == '__init__.py':
      self.package = name
    self.aliases = {}  # local name -> canonical dotted name
    self.top_level = {}  # name -> FunctionDef/ClassDef
    self.assignments = collections.defaultdict(list)  # module-level name -> [value nodes]
    self.enclosing = {}  # id(def or lambda node) -> the function it is nested in, or None
    self.parents = {}  # id(node) -> parent node
    self._index()

  def _index(self):
    for node in ast.walk(self.tree):
      for child in ast.iter_child_nodes(node):
        self.parents[id(child)] = node
    self._index_scopes(self.tree, None)
    for node in ast.walk(self.tree):
      if isinstance(node, ast.Import):
        for alias in node.names:
          if alias.asname:
            self.aliases[alias.asname] = normalize(alias.name)
          else:
            top = alias.name.split('.')[0]
            self.aliases[top] = top
      elif isinstance(node, ast.ImportFrom):
        base = self._absolute(node.module, node.level)
        for alias in node.names:
          if alias.name != '*':
            self.aliases[alias.asname or alias.name] = normalize('%s.%s' % (base, alias.name) if base else alias.name)
    for statement in module_statements(self.tree):
      if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        self.top_level[statement.name] = statement
      elif isinstance(statement, ast.Assign):
        for target in statement.targets:
          for name in pyast.assigned_names(target):
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

  def _absolute(self, module, level):
    if not level:
      return module or ''
    parts = self.package.split('.') if self.package else []
    parts = parts[:len(parts) - (level - 1)] if level > 1 else parts
    if module:
      parts.append(module)
    return '.'.join(parts)

  def _index_scopes(self, node, function):
    for child in ast.iter_child_nodes(node):
      if isinstance(child, pyast.FUNCTION_NODES):
        self.enclosing[id(child)] = function
        self._index_scopes(child, child)
      else:
        self._index_scopes(child, function)

  def canonical(self, node):
    """Canonical dotted name of a Name/Attribute chain rooted at an import alias or a top-level def, else None."""
    name = pyast.dotted(node)
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

  def line_of(self, node):
    return getattr(node, 'lineno', 1)


class Program(object):
  """All scanned modules, with lookups across them."""

  def __init__(self, modules):
    self.modules = list(modules)
    self.by_name = {}
    for module in self.modules:
      self.by_name.setdefault(module.name, module)
    self._locals_cache = {}
    self._calls = None
    self._calls_by_name = None
    self._arguments_by_name = None
    self._flag_definitions = None
    self._module_of = None

  def mentions(self, text):
    """Whether a scanned file names `text`: in a string (os.environ['TF_CONFIG'], a docstring), an attribute or a
    name (tf.train.ClusterSpec)."""
    for module in self.modules:
      for node in ast.walk(module.tree):
        value = pyast.literal(node)
        if isinstance(value, str) and text in value:
          return True
        if (isinstance(node, ast.Attribute) and node.attr == text) or (isinstance(node, ast.Name) and node.id == text):
          return True
    return False

  def enclosing_function(self, module, node):
    """The def or lambda a node is written in, None at module level."""
    parent = module.parents.get(id(node))
    while parent is not None and not isinstance(parent, pyast.FUNCTION_NODES):
      parent = module.parents.get(id(parent))
    return parent

  def module_of(self, node):
    """The scanned module a def, lambda or class is written in."""
    if self._module_of is None:
      self._module_of = {}
      for module in self.modules:
        for child in ast.walk(module.tree):
          if isinstance(child, pyast.SCOPE_NODES):
            self._module_of[id(child)] = module
    return self._module_of.get(id(node))

  def find_module(self, dotted_name):
    """The scanned module named `dotted_name`, or one whose name ends with it (fixtures outside a package)."""
    if dotted_name in self.by_name:
      return self.by_name[dotted_name]
    matches = [m for m in self.modules
               if m.name.endswith('.' + dotted_name) or dotted_name.endswith('.' + m.name)]
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

  def flag_definition(self, name):
    """(module, DEFINE_* call, default expression) of the flag --name, else None. Looked for in the scanned files,
    then in the project modules they import (read, not checked: flags are often defined in a module of their own
    that a port report need not cover)."""
    if self._flag_definitions is None:
      self._flag_definitions = {}
      for module in self.modules + self._imported_modules():
        for node in ast.walk(module.tree):
          if isinstance(node, ast.Call) and _defines_a_flag(module.canonical(node.func)):
            flag, default = pyast.argument(node, 0, 'name'), pyast.argument(node, 1, 'default')
            flag = pyast.literal(flag) if flag is not None else None
            if isinstance(flag, str) and default is not None:
              self._flag_definitions.setdefault(flag, (module, node, default))
          elif isinstance(node, ast.Call):
            flag, default = _argparse_option(node)
            if flag:
              self._flag_definitions.setdefault(flag, (module, node, default))
    return self._flag_definitions.get(name)

  def _imported_modules(self, hops=2, limit=50):
    """Project modules the scanned files import (and those import), parsed from disk but not scanned."""
    known = set(m.name for m in self.modules)
    found, frontier = [], list(self.modules)
    for _ in range(hops):
      imported = []
      for module in frontier:
        for canonical in sorted(set(module.aliases.values())):
          source = None if canonical.split('.')[0] in ('tensorflow', 'absl') else self.source_file_for(canonical)
          if source and source[0] not in known and len(found) < limit:
            known.add(source[0])
            parsed = _parse_quietly(source[1], source[0])
            if parsed is not None:
              found.append(parsed)
              imported.append(parsed)
      frontier = imported
    return found

  def source_file_for(self, dotted_name):
    """(module name, path) of the file on disk that defines module `dotted_name`, or the module holding the name
    `dotted_name`, looked for beside the scanned files' top packages; else None. Something to name when a scan
    left a file out."""
    parts = dotted_name.split('.')
    for root in self._roots():
      for end in (len(parts), len(parts) - 1):
        base = os.path.join(root, *parts[:end]) if end else None
        for candidate in ((base + '.py', os.path.join(base, '__init__.py')) if base else ()):
          if os.path.isfile(candidate):
            relative = os.path.relpath(candidate)
            return '.'.join(parts[:end]), (candidate if relative.startswith(os.pardir) else relative)
    return None

  def _left_out(self, canonical):
    """'module (path), which is not among the scanned files' for a project name whose file a scan left out."""
    if not canonical or canonical.split('.')[0] in ('tensorflow', 'absl') or self.find_def(canonical):
      return None
    found = self.source_file_for(canonical)
    return '%s (%s), which is not among the scanned files' % found if found else None

  def _roots(self):
    """The folders the scanned modules' dotted names start from."""
    roots = []
    for module in self.modules:
      root = os.path.dirname(os.path.abspath(module.path))
      for _ in range(module.name.count('.')):
        root = os.path.dirname(root)
      if root not in roots:
        roots.append(root)
    return roots

  # --- names inside functions -----------------------------------------------------------------------------------

  def local_bindings(self, module, fn):
    """name -> [(kind, node)] for what a function binds itself: 'def', 'value' (an assigned expression),
    'param', 'other' (loop variables, with-targets, imports...)."""
    key = id(fn)
    if key not in self._locals_cache:
      bindings = collections.defaultdict(list)
      for name in pyast.param_names(fn):
        bindings[name].append(('param', fn))
      for node, _ in pyast.walk_local(fn):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn:
          bindings[node.name].append(('def', node))
        elif isinstance(node, ast.Assign):
          for target in node.targets:
            names = pyast.assigned_names(target)
            kind = 'value' if isinstance(target, ast.Name) else 'other'
            for name in names:
              bindings[name].append((kind, node.value))
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
          bindings[node.target.id].append(('value', node.value) if isinstance(node, ast.AnnAssign) and node.value
                                          else ('other', node))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
          for name in pyast.assigned_names(node.target):
            bindings[name].append(('other', node))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
          for name in pyast.assigned_names(node.optional_vars):
            bindings[name].append(('other', node))
        elif isinstance(node, ast.Import):
          for alias in node.names:
            local = alias.asname or alias.name.split('.')[0]
            bindings[local].append(('import', normalize(alias.name) if alias.asname else local))
        elif isinstance(node, ast.ImportFrom):
          base = module._absolute(node.module, node.level)
          for alias in node.names:
            if alias.name != '*':
              full = '%s.%s' % (base, alias.name) if base else alias.name
              bindings[alias.asname or alias.name].append(('import', normalize(full)))
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
        kind, node = bindings[-1]
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

  def canonical(self, module, fn, node):
    """Canonical name of a Name/Attribute chain, unless a local variable shadows its root."""
    root = pyast.root_name(node)
    scope = fn if root else None
    while scope is not None:
      bindings = self.local_bindings(module, scope).get(root)
      if bindings:
        kind, bound = bindings[-1]
        name = pyast.dotted(node)
        if kind != 'import' or not name:
          return None  # a local variable: its value is not an import
        rest = name.partition('.')[2]
        return normalize('%s.%s' % (bound, rest) if rest else bound)
      scope = module.enclosing.get(id(scope))
    return module.canonical(node)

  # --- callables --------------------------------------------------------------------------------------------------

  def resolve_callables(self, module, fn, node, depth=0):
    """The functions an expression (a model_fn= or input_fn= argument, ...) can stand for.

    Returns a list of Fn and Unresolved. Follows names, assignments, builder calls (to what the builder
    returns), functools.partial, conditional expressions and imported project modules.
    """
    if depth > MAX_DEPTH:
      return [Unresolved('`%s` is built through too many steps to follow' % pyast.render(node))]
    if isinstance(node, ast.Lambda):
      return [Fn(module, node)]
    if isinstance(node, ast.IfExp):
      return (self.resolve_callables(module, fn, node.body, depth + 1) +
              self.resolve_callables(module, fn, node.orelse, depth + 1))
    if isinstance(node, ast.BoolOp):
      # `use_synthetic and synthetic_input_fn() or input_fn`: the callables among the operands.
      results = [r for value in node.values for r in self.resolve_callables(module, fn, value, depth + 1)]
      found = [r for r in results if isinstance(r, Fn)]
      return found or results
    if isinstance(node, ast.Name):
      return self._resolve_name(module, fn, node, depth)
    if isinstance(node, ast.Attribute):
      method = self._own_method(module, fn, node)
      if method is not None:
        return [Fn(method[0], method[1], bound_positional=1)]
      method = self.bound_method(module, fn, node, depth)
      if method is not None:
        return [method]
      canonical = self.canonical(module, fn, node)
      found = self.find_def(canonical)
      if found and not isinstance(found[1], ast.ClassDef):
        return [Fn(found[0], found[1])]
      elsewhere = self._left_out(canonical)
      if elsewhere:
        return [Unresolved('`%s` comes from %s' % (pyast.render(node), elsewhere))]
      return [Unresolved('`%s` is not a function defined in the scanned files' % pyast.render(node))]
    if isinstance(node, ast.Call):
      return self._resolve_call_result(module, fn, node, depth)
    return [Unresolved('`%s` is computed at run time' % pyast.render(node))]

  def _resolve_name(self, module, fn, node, depth):
    kind, target, owner_module, owner = self.lookup(module, fn, node.id)
    if kind == 'def':
      return [Fn(owner_module, target)]
    if kind in ('value', 'other'):
      found = self.assignments(owner_module, owner, node.id)
      if owner_module is module and owner is fn:
        # In the scope that assigns it: the assignment that reaches this use (the last one above it).
        above = [(value, path) for value, path in found if getattr(value, 'lineno', 0) <= node.lineno]
        found = above[-1:] or found
      results = []
      for value, path in found:
        results += self._resolve_path(owner_module, owner, value, path, depth + 1)
      if results or kind == 'value':
        return results or [Unresolved('`%s` is computed at run time' % node.id)]
    if kind == 'import':
      found = self.find_def(target)
      if found and not isinstance(found[1], ast.ClassDef):
        return [Fn(found[0], found[1])]
      return [Unresolved('`%s` comes from %s' % (node.id, self._left_out(target) or
                                                  '%s, which is not among the scanned files' % target))]
    if kind == 'param':
      return self._resolve_parameter(node.id, target, depth)
    return [Unresolved('`%s` is not bound to a function the scanned files define' % node.id)]

  def _resolve_path(self, module, fn, value, path, depth):
    """The callables element `path` of a value holds (`train_fn, eval_fn = make_input_fns()`: path (1,))."""
    if not path:
      return self.resolve_callables(module, fn, value, depth)
    if depth > MAX_DEPTH:
      return []
    if isinstance(value, (ast.Tuple, ast.List)) and isinstance(path[0], int) and path[0] < len(value.elts):
      return self._resolve_path(module, fn, value.elts[path[0]], path[1:], depth + 1)
    if isinstance(value, ast.Name):
      kind, _, owner_module, owner = self.lookup(module, fn, value.id)
      if kind not in ('value', 'other'):
        return []
      results = []
      for inner, inner_path in self.assignments(owner_module, owner, value.id):
        results += self._resolve_path(owner_module, owner, inner, tuple(inner_path) + tuple(path), depth + 1)
      return results
    if isinstance(value, ast.Call):
      results = []
      for builder in self.resolve_callables(module, fn, value.func, depth + 1):
        if isinstance(builder, Fn) and not isinstance(builder.node, ast.Lambda):
          for returned in self.returned_values(builder.node):
            results += self._resolve_path(builder.module, builder.node, returned, path, depth + 1)
      return results
    return []

  def assignments(self, module, fn, name):
    """(value, path) of every assignment to `name` in a scope (fn None: module level), a tuple target giving the
    path of the name in it; `for name in values` gives (values, ('*',))."""
    if fn is None:
      statements = [n for s in module_statements(module.tree) if not isinstance(s, pyast.SCOPE_NODES)
                    for n in ast.walk(s)]
    else:
      statements = [n for n, _ in pyast.walk_local(fn)]
    found = []
    for node in statements:
      if isinstance(node, ast.Assign):
        for target in node.targets:
          target_path = path_in(target, name)
          if target_path is not None:
            found.append((node.value, target_path))
      elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) and \
          node.target.id == name and node.value is not None:
        found.append((node.value, ()))
      elif isinstance(node, (ast.For, ast.comprehension)) and path_in(node.target, name) is not None:
        found.append((node.iter, ('*',)))
    return found

  def _resolve_parameter(self, name, fn, depth):
    """What the scanned callers of `fn` pass as its parameter `name` (build_estimator(model_fn) ...)."""
    results = []
    for module, caller, call in self.call_sites(fn, depth):
      value = bind_arguments(call, fn, _implicit_arguments(fn, call)).get(name)
      if value is not None:
        results += self.resolve_callables(module, caller, value, depth + 1)
    if not results:
      results.append(Unresolved('`%s` is a parameter of %s, and no scanned call passes it a function'
                                % (name, 'a lambda' if isinstance(fn, ast.Lambda) else fn.name + '()')))
    return results

  def call_sites(self, fn, depth=0, limit=20):
    """(module, calling function, call) for the scanned calls of a def, by name and then resolved."""
    if isinstance(fn, ast.Lambda):
      return []
    sites = []
    for module, caller, call in self.calls_named(fn.name):
      if isinstance(call.func, ast.Attribute) and not self.canonical(module, caller, call.func):
        if _implicit_arguments(fn, call) and self._same_class(module, caller, fn, call):
          sites.append((module, caller, call))  # self.method(...) in the method's own class
        else:
          method = self.bound_method(module, caller, call.func, depth)
          if method is not None and method.node is fn:
            sites.append((module, caller, call))  # obj.method(...), obj an instance of the method's class
      elif any(isinstance(t, Fn) and t.node is fn
               for t in self.resolve_callables(module, caller, call.func, max(depth + 1, MAX_DEPTH - 1))):
        sites.append((module, caller, call))
      if len(sites) >= limit:
        break
    return sites + self._indirect_call_sites(fn, depth)[:max(0, limit - len(sites))]

  def _indirect_call_sites(self, fn, depth):
    """Calls of a def through a parameter: `run_loop(build_estimator_fn=build_estimator)`, then
    `build_estimator_fn(...)` inside run_loop."""
    sites = []
    for module, caller, call, argument in self.passed_as_argument(fn.name):
      if not any(isinstance(t, Fn) and t.node is fn
                 for t in self.resolve_callables(module, caller, argument, MAX_DEPTH - 1)):
        continue
      for receiver in self.resolve_callables(module, caller, call.func, MAX_DEPTH - 1):
        if not isinstance(receiver, Fn) or isinstance(receiver.node, ast.Lambda):
          continue
        bound = bind_arguments(call, receiver.node, _implicit_arguments(receiver.node, call))
        names = [name for name, value in bound.items() if value is argument]
        for name in names:
          for inner_module, inner_caller, inner_call in self.calls_named(name):
            if isinstance(inner_call.func, ast.Name) and inner_module is receiver.module and \
                self._within(inner_module, inner_caller, receiver.node):
              sites.append((inner_module, inner_caller, inner_call))
    return sites

  def _within(self, module, scope, outer):
    while scope is not None:
      if scope is outer:
        return True
      scope = module.enclosing.get(id(scope))
    return False

  def passed_as_argument(self, name):
    """(module, calling function, call, argument) for every call that passes the name `name` as an argument."""
    self.calls_named(name)  # builds both indexes
    return self._arguments_by_name.get(name, [])

  def calls(self):
    """(module, calling function or None, call) for every call of the scanned code, each scope's in order."""
    if self._calls is None:
      self._calls = []
      for module in self.modules:
        scopes = [module.tree] + [n for n in ast.walk(module.tree) if isinstance(n, pyast.FUNCTION_NODES)]
        for scope in scopes:
          caller = None if scope is module.tree else scope
          self._calls += [(module, caller, node) for node, _ in pyast.walk_local(scope) if isinstance(node, ast.Call)]
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

  def _own_method(self, module, fn, node):
    """(module, def) of `self.name` when `fn` is a method of a class that (or a scanned base of which) defines
    `name` (not a property)."""
    if not (isinstance(node.value, ast.Name) and node.value.id == 'self') or fn is None:
      return None
    owner = module.parents.get(id(fn))
    if not isinstance(owner, ast.ClassDef):
      return None
    found = self.find_method(module, owner, node.attr)
    return found if found and not found[1].decorator_list else None

  def find_method(self, module, class_node, name, depth=0):
    """(module, def) of method `name` of a class, looked for in the class and then its scanned bases."""
    for statement in class_node.body:
      if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
        return module, statement
    if depth < 4:
      for base in class_node.bases:
        found = self.find_def(module.canonical(base))
        if found and isinstance(found[1], ast.ClassDef):
          method = self.find_method(found[0], found[1], name, depth + 1)
          if method:
            return method
    return None

  def class_of(self, module, fn, node, depth=0):
    """(module, ClassDef) of the scanned class whose instance an expression holds (`ds = Cifar10DataSet(...)`;
    `ds`), else None."""
    if depth > 3:
      return None
    if isinstance(node, ast.Call):
      canonical = self.canonical(module, fn, node.func)
      found = self.find_def(canonical) if canonical else None
      if found is None and isinstance(node.func, ast.Name):
        kind, bound, owner_module, _ = self.lookup(module, fn, node.func.id)
        found = (owner_module, bound) if kind in ('class', 'def') else None
      return found if found and isinstance(found[1], ast.ClassDef) else None
    if isinstance(node, ast.Name):
      kind, bound, owner_module, owner = self.lookup(module, fn, node.id)
      if kind == 'value':
        return self.class_of(owner_module, owner, bound, depth + 1)
      if kind == 'other':  # `train, evaluation = [Input(training) for training in (True, False)]`
        for value, path in self.assignments(owner_module, owner, node.id):
          while path and isinstance(value, (ast.Tuple, ast.List, ast.ListComp)):
            index, path = path[0], path[1:]
            if isinstance(value, ast.ListComp):
              value = value.elt
            elif isinstance(index, int) and index < len(value.elts):
              value = value.elts[index]
            else:
              break
          found = self.class_of(owner_module, owner, value, depth + 1) if not path else None
          if found:
            return found
    return None

  def bound_method(self, module, fn, node, depth=0):
    """An Fn for `obj.method` when `obj` holds an instance of a scanned class (self bound), else None."""
    if isinstance(node.value, ast.Name) and node.value.id in ('self', 'cls'):
      return None
    found = self.class_of(module, fn, node.value)
    if found is None:
      return None
    method = self.find_method(found[0], found[1], node.attr)
    if method is None:
      return None
    static = any(pyast.dotted(d) == 'staticmethod' for d in method[1].decorator_list)
    return Fn(method[0], method[1], bound_positional=0 if static else 1)

  def _same_class(self, module, caller, fn, call):
    if not (isinstance(call.func.value, ast.Name) and call.func.value.id in ('self', 'cls')) or caller is None:
      return False
    owner = module.parents.get(id(fn))
    return isinstance(owner, ast.ClassDef) and module.parents.get(id(caller)) is owner

  def _resolve_call_result(self, module, fn, call, depth):
    callee = self.canonical(module, fn, call.func)
    if callee and (callee == 'tensorflow' or callee.startswith('tensorflow.')):
      return [Unresolved('`%s` is made by TensorFlow at run time' % pyast.render(call), made_by=callee,
                         call=(module, fn, call))]
    if callee == 'functools.partial' and call.args:
      results = []
      for target in self.resolve_callables(module, fn, call.args[0], depth + 1):
        if isinstance(target, Fn):
          bound = frozenset(kw.arg for kw in call.keywords if kw.arg)
          target = target._replace(bound_positional=target.bound_positional + len(call.args) - 1,
                                   bound_keywords=target.bound_keywords | bound, partial=(module, call))
        results.append(target)
      return results
    results = []
    for builder in self.resolve_callables(module, fn, call.func, depth + 1):
      if isinstance(builder, Unresolved):
        results.append(builder)  # its reason names the builder that could not be found
        continue
      if isinstance(builder.node, ast.Lambda):
        results.append(Unresolved('`%s` returns a value only known at run time' % pyast.render(call)))
        continue
      returned = self.returned_values(builder.node)
      if not returned:
        results.append(Unresolved('%s() returns nothing static analysis can follow' % builder.node.name))
      for value in returned:
        for target in self.resolve_callables(builder.module, builder.node, value, depth + 1):
          if isinstance(target, Fn):
            target = target._replace(via=target.via + ((module, fn, call, builder.node),))
          results.append(target)
    return results

  def returned_values(self, fn):
    """The expressions a function returns (its own return statements, not nested functions')."""
    if isinstance(fn, ast.Lambda):
      return [fn.body]
    return [node.value for node, _ in pyast.walk_local(fn) if isinstance(node, ast.Return) and node.value]

  def called_defs(self, module, fn, call):
    """The project functions a call runs (not classes, not lambdas), for following calls one level down."""
    if isinstance(call.func, ast.Lambda):
      return []
    targets = self.resolve_callables(module, fn, call.func, depth=MAX_DEPTH - 3)
    return [t for t in targets if isinstance(t, Fn) and not isinstance(t.node, ast.Lambda)]

  def constructs(self, module, fn, call, predicate, depth=0):
    """True when a call builds something `predicate(canonical name)` accepts, directly or via a project function
    that returns such a construction (e.g. build_estimator())."""
    canonical = self.canonical(module, fn, call.func)
    if canonical and predicate(canonical):
      return True
    if depth >= 2:
      return False
    for target in self.called_defs(module, fn, call):
      for value in self.returned_values(target.node):
        if isinstance(value, ast.Call) and self.constructs(target.module, target.node, value, predicate, depth + 1):
          return True
        if isinstance(value, ast.Name):
          kind, bound, owner_module, owner = self.lookup(target.module, target.node, value.id)
          if kind == 'value' and isinstance(bound, ast.Call) and self.constructs(
              owner_module, owner, bound, predicate, depth + 1):
            return True
    return False


def _parse_quietly(path, name):
  """A Module for a file read only for context, or None when it cannot be read (that is not the report's input)."""
  try:
    with open(path, 'rb') as f:
      return Module(path, ast.parse(f.read(), filename=path), name)
  except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
    return None


def _defines_a_flag(canonical):
  """absl.flags.DEFINE_integer, tf.flags.DEFINE_string, ... (not DEFINE_validator and the like)."""
  if not canonical or 'flags' not in canonical:
    return False
  kind = canonical.rsplit('.', 1)[-1]
  return kind.startswith('DEFINE_') and kind[len('DEFINE_'):] in (
      'integer', 'float', 'string', 'bool', 'boolean', 'enum', 'list', 'multi_string', 'multi_integer')


def path_in(target, name):
  """The index path of `name` in an assignment target, () for the name itself, None when it is not there."""
  if isinstance(target, ast.Name):
    return () if target.id == name else None
  if isinstance(target, (ast.Tuple, ast.List)):
    for index, element in enumerate(target.elts):
      inner = path_in(element.value if type(element).__name__ == 'Starred' else element, name)
      if inner is not None:
        return (index,) + inner
  return None


def _argparse_option(call):
  """(dest, default expression) of `parser.add_argument('--eval-steps', default=None)`, else (None, None). An
  option without default= defaults to None (False/True for store_true/store_false), as argparse does."""
  if not (isinstance(call.func, ast.Attribute) and call.func.attr == 'add_argument' and call.args):
    return None, None
  options = [pyast.literal(a) for a in call.args]
  longs = [o for o in options if isinstance(o, str) and o.startswith('--')]
  dest = pyast.literal(pyast.keyword(call, 'dest')) if pyast.keyword(call, 'dest') is not None else None
  if not isinstance(dest, str):
    if not longs:
      return None, None
    dest = longs[0][2:].replace('-', '_')
  default = pyast.keyword(call, 'default')
  if default is None:
    action = pyast.literal(pyast.keyword(call, 'action')) if pyast.keyword(call, 'action') is not None else None
    value = {'store_true': False, 'store_false': True}.get(action)
    default = ast.copy_location(ast.Constant(value=value), call)
    default.kind = None
  return dest, default


def _implicit_arguments(fn, call):
  """1 when `self` or `cls` is passed implicitly (obj.method(...)), else 0."""
  names = pyast.positional_names(fn)
  return 1 if names and names[0] in ('self', 'cls') and isinstance(call.func, ast.Attribute) else 0


def bind_arguments(call, fn, skip_positional=0):
  """{parameter name: argument expression} for a call of a def (what can be told without running it)."""
  names = pyast.positional_names(fn)[skip_positional:]
  bound = {}
  for name, value in zip(names, call.args):
    if type(value).__name__ == 'Starred':
      break
    bound[name] = value
  for kw in call.keywords:
    if kw.arg:
      bound[kw.arg] = kw.value
  return bound
