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
MAX_DEPTH = 4  # how many builders, assignments and partials deep a callable is followed


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
Fn = collections.namedtuple('Fn', ['module', 'node', 'bound_positional', 'bound_keywords', 'via'])
Fn.__new__.__defaults__ = (0, frozenset(), ())


class Unresolved(object):
  """A callable static analysis could not find; `reason` finishes the sentence "cannot tell statically: ...".
  `made_by` is the canonical name of the TensorFlow function that made it, when one did (numpy_input_fn ...)."""

  def __init__(self, reason, made_by=None):
    self.reason = reason
    self.made_by = made_by

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
    for statement in self.tree.body:
      if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        self.top_level[statement.name] = statement
      elif isinstance(statement, ast.Assign):
        for target in statement.targets:
          for name in pyast.assigned_names(target):
            self.assignments[name].append(statement.value)
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
    self._calls_by_name = None
    self._flag_definitions = None

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
    if isinstance(node, ast.Name):
      return self._resolve_name(module, fn, node, depth)
    if isinstance(node, ast.Attribute):
      method = self._own_method(module, fn, node)
      if method is not None:
        return [Fn(module, method, bound_positional=1)]
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
    if kind == 'value':
      return self.resolve_callables(owner_module, owner, target, depth + 1)
    if kind == 'import':
      found = self.find_def(target)
      if found and not isinstance(found[1], ast.ClassDef):
        return [Fn(found[0], found[1])]
      return [Unresolved('`%s` comes from %s' % (node.id, self._left_out(target) or
                                                  '%s, which is not among the scanned files' % target))]
    if kind == 'param':
      return self._resolve_parameter(node.id, target, depth)
    return [Unresolved('`%s` is not bound to a function the scanned files define' % node.id)]

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
      elif any(isinstance(t, Fn) and t.node is fn
               for t in self.resolve_callables(module, caller, call.func, max(depth + 1, MAX_DEPTH - 1))):
        sites.append((module, caller, call))
      if len(sites) >= limit:
        break
    return sites

  def calls_named(self, name):
    """(module, calling function or None, call) for every call of `name(...)` or `x.name(...)`."""
    if self._calls_by_name is None:
      self._calls_by_name = collections.defaultdict(list)
      for module in self.modules:
        scopes = [module.tree] + [n for n in ast.walk(module.tree) if isinstance(n, pyast.FUNCTION_NODES)]
        for scope in scopes:
          for node, _ in pyast.walk_local(scope):
            if isinstance(node, ast.Call):
              callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, 'attr', None)
              self._calls_by_name[callee].append((module, None if scope is module.tree else scope, node))
    return self._calls_by_name.get(name, [])

  def _own_method(self, module, fn, node):
    """The def of `self.name` when `fn` is a method of a class that defines `name` (not a property)."""
    if not (isinstance(node.value, ast.Name) and node.value.id == 'self') or fn is None:
      return None
    owner = module.parents.get(id(fn))
    if not isinstance(owner, ast.ClassDef):
      return None
    for statement in owner.body:
      if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == node.attr:
        if not statement.decorator_list:
          return statement
    return None

  def _same_class(self, module, caller, fn, call):
    if not (isinstance(call.func.value, ast.Name) and call.func.value.id in ('self', 'cls')) or caller is None:
      return False
    owner = module.parents.get(id(fn))
    return isinstance(owner, ast.ClassDef) and module.parents.get(id(caller)) is owner

  def _resolve_call_result(self, module, fn, call, depth):
    callee = self.canonical(module, fn, call.func)
    if callee and (callee == 'tensorflow' or callee.startswith('tensorflow.')):
      return [Unresolved('`%s` is made by TensorFlow at run time' % pyast.render(call), made_by=callee)]
    if callee == 'functools.partial' and call.args:
      results = []
      for target in self.resolve_callables(module, fn, call.args[0], depth + 1):
        if isinstance(target, Fn):
          bound = frozenset(kw.arg for kw in call.keywords if kw.arg)
          target = target._replace(bound_positional=target.bound_positional + len(call.args) - 1,
                                   bound_keywords=target.bound_keywords | bound)
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
    targets = self.resolve_callables(module, fn, call.func, depth=MAX_DEPTH - 1)
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
