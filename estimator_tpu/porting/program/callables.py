"""What an expression can stand for when it is called: the functions of the program a model_fn= or input_fn=
argument, a builder's result or a parameter can hold, and the calls that reach a function.

Followed: names, assignments, builder calls (to what the builder returns), functools.partial, conditional
expressions, bound methods of the program's classes, parameters (to what the scanned callers pass) and imported
project modules, up to MAX_DEPTH steps. What cannot be followed resolves to an Unresolved that says why, so
checks can say so instead of guessing.
"""
import ast
import collections

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import containers
from estimator_tpu.porting.program import syntax

MAX_DEPTH = 6  # how many builders, assignments and partials deep a callable is followed
CLASS_DEPTH = 6  # how many names, calls and returned values deep the class of an instance is followed

# A function static analysis found: its module and def (or lambda); what functools.partial bound; and `via`, the
# builder calls it came out of as (module, function, call, builder def), so a closure's values can be looked up.
Fn = collections.namedtuple('Fn', ['module', 'node', 'bound_positional', 'bound_keywords', 'via', 'partial'])
Fn.__new__.__defaults__ = (0, frozenset(), (), None)


class Unresolved(object):
  """A callable static analysis could not find; `reason` finishes the sentence "cannot tell statically: ...".
  `made_by` is the canonical name of the TensorFlow function that made it, when one did (numpy_input_fn ...)."""

  def __init__(self, reason, made_by=None, call=None, left_out=None, via=()):
    self.reason = reason
    self.made_by = made_by
    self.call = call  # (module, function, call) of the TensorFlow call that made it, when one did
    self.left_out = left_out  # (module name, path) of the project file that defines it, when the scan left it out
    # The project calls whose return handed it on, innermost first, as Fn.via: (module, fn, call, def called).
    self.via = via

  def __repr__(self):
    return 'Unresolved(%r)' % self.reason


# Statements whose body may or may not run: an assignment inside one does not hide the assignments above it.
_BRANCHING = (ast.If, ast.For, ast.While, ast.Try, ast.ExceptHandler) + \
    ((ast.TryStar,) if hasattr(ast, 'TryStar') else ())


def reaching(module, found, use):
  """The (value, path) assignments of `found` (one scope's, in order) that can reach `use`, a name read in that
  scope: the last one above it, and the ones above that while the later ones sit in a branch that does not hold
  the use (`if fake: fn = a` / `else: fn = b`, then fn(): both can reach)."""
  around = _ancestors(module, use)  # what holds the read: `x = x / 255.0` reads the x assigned before it
  above = [(value, path) for value, path in found
           if getattr(value, 'lineno', 0) <= use.lineno and id(value) not in around]
  reached = []
  for value, path in reversed(above):
    reached.append((value, path))
    # `x += y` builds on the x before it; an assignment in a branch without the read may not have run.
    if not isinstance(module.parents.get(id(value)), ast.AugAssign) and not _in_branch_without(module, value, around):
      break
  return reached[::-1]


def entry_value_reaches(program, module, fn, use):
  """Whether a parameter of `fn` read there can still hold what the caller passed: `fn` binds the name as a
  parameter, and no assignment above the read in `fn` surely ran (`if multi_gpu: model_fn = wrap(model_fn)`, then
  Estimator(model_fn=model_fn): the caller's model_fn or the wrapped one; the read inside the wrapping call too)."""
  bindings = program.local_bindings(module, fn).get(use.id, []) if fn is not None else []
  if not any(kind == 'param' for kind, _ in bindings) or not getattr(use, 'lineno', None):
    return False
  around = _ancestors(module, use)
  return all(isinstance(module.parents.get(id(value)), ast.AugAssign) or _in_branch_without(module, value, around)
             for value, _ in program.assignments(module, fn, use.id)
             if getattr(value, 'lineno', 0) <= use.lineno and id(value) not in around)


def reaching_from_entry(program, module, fn, use, owner_module, owner, with_defs=False):
  """(assignments, entry): reaching_assignments, and whether the parameter's entry value can reach the read too
  (entry_value_reaches; then the assignment the read is part of is left out of the assignments)."""
  found = reaching_assignments(program, module, fn, use, owner_module, owner, with_defs)
  entry = owner_module is module and owner is fn and entry_value_reaches(program, module, fn, use)
  if entry:
    around = _ancestors(module, use)
    found = [(value, path) for value, path in found if id(value) not in around]
  return found, entry


def reaching_assignments(program, module, fn, use, owner_module, owner, with_defs=False):
  """(value, path) of the assignments to the name `use` reads (bound in `owner` of `owner_module`): in the scope
  that assigns it, those that can reach the read (see reaching); from another scope, all of them. `with_defs`: a
  def of that name in a function is one of them (its node, path ()), as one branch defines what another assigns."""
  found = program.assignments(owner_module, owner, use.id)
  if with_defs and owner is not None:
    defs = [(node, ()) for kind, node in program.local_bindings(owner_module, owner).get(use.id, []) if kind == 'def']
    if defs:
      found = sorted(found + defs, key=lambda pair: getattr(pair[0], 'lineno', 0))
  if owner_module is module and owner is fn and getattr(use, 'lineno', None):
    found = reaching(module, found, use) or found
  return found


def _ancestors(module, node):
  """id() of the nodes holding `node`, up to its function or class."""
  found = set()
  parent = module.parents.get(id(node))
  while parent is not None and not isinstance(parent, syntax.SCOPE_NODES):
    found.add(id(parent))
    parent = module.parents.get(id(parent))
  return found


def _in_branch_without(module, node, holding_use):
  """Whether `node` is inside a branching statement (of its own function) that does not hold the use (whose
  ancestors are `holding_use`)."""
  parent = module.parents.get(id(node))
  while parent is not None and not isinstance(parent, syntax.SCOPE_NODES):
    if isinstance(parent, _BRANCHING) and id(parent) not in holding_use:
      return True
    parent = module.parents.get(id(parent))
  return False


class Callables(object):
  """The callable questions about one reading.Program."""

  def __init__(self, program):
    self.program = program
    self._returning = set()  # id() of the calls class_of is following into the functions they run
    self._classes = {}  # (id(fn), id(node)) -> class_of(module, fn, node), for the questions asked from outside
    self._aliases_of = None  # id(ClassDef) -> the module-level names assigned that class (_aliases), read once

  def resolve(self, module, fn, node, depth=0):
    """The functions an expression (a model_fn= or input_fn= argument, ...) can stand for.

    Returns a list of Fn and Unresolved. Follows names, assignments, builder calls (to what the builder
    returns), functools.partial, conditional expressions and imported project modules.
    """
    if depth > MAX_DEPTH:
      return [Unresolved('`%s` is built through too many steps to follow' % syntax.render(node))]
    if isinstance(node, ast.Lambda):
      return [Fn(module, node)]
    if isinstance(node, ast.IfExp):
      return (self.resolve(module, fn, node.body, depth + 1) +
              self.resolve(module, fn, node.orelse, depth + 1))
    if isinstance(node, ast.BoolOp):
      # `use_synthetic and synthetic_input_fn() or input_fn`: the callables among the operands.
      results = [r for value in node.values for r in self.resolve(module, fn, value, depth + 1)]
      found = [r for r in results if isinstance(r, Fn)]
      return found or results
    if isinstance(node, ast.Name):
      return self._resolve_name(module, fn, node, depth)
    if isinstance(node, ast.Attribute):
      method = self._own_method(module, fn, node)
      if method is not None:
        # `self.train_op(loss)` in a base class's method runs the method of the class the program made: a
        # subclass's override (an abstract estimator class whose subclasses give the optimizer) or its own.
        found = self.runs_on_self(module, enclosing_class(module, fn), node.attr, method)
        return [Fn(m[0], m[1], bound_positional=0 if _decorated(m[1], 'staticmethod') else 1) for m in found]
      held = self._held_by_self(module, fn, node, depth)
      if held:
        return held
      method = self.bound_method(module, fn, node, depth)
      if method is not None:
        return [method]
      method = self._super_method(module, fn, node)
      if method is not None:
        return [method]
      chosen = self._chosen_module_functions(module, fn, node)
      if chosen:
        return chosen
      canonical = self.program.canonical(module, fn, node)
      found = self.program.find_def(canonical)
      if found and not isinstance(found[1], ast.ClassDef):
        return [Fn(found[0], found[1])]
      method = self._class_method(canonical)
      if method is not None:
        return [method]
      elsewhere = self.program.neighbours.left_out(canonical)
      if elsewhere:
        return [Unresolved('`%s` comes from %s' % (syntax.render(node), elsewhere),
                           left_out=self.program.neighbours.source_file_for(canonical))]
      return [Unresolved('`%s` is not a function defined in the scanned files' % syntax.render(node))]
    if isinstance(node, ast.Call):
      return self._resolve_call_result(module, fn, node, depth)
    if isinstance(node, ast.Subscript):
      found = self._resolve_item(module, fn, node, depth)
      if found:
        return found
    return [Unresolved('`%s` is computed at run time' % syntax.render(node))]

  def _resolve_item(self, module, fn, node, depth):
    """`input_fns['train']`: the callables a dict display holds at that key, and those the program stores there
    (containers.stored_at); `MODEL_MAP[params['model_type']]`, a key known at run time only: every callable the
    display holds."""
    results = []
    key = syntax.subscript_key(node)
    if isinstance(node.value, ast.Name):
      kind, _, owner_module, owner = self.program.lookup(module, fn, node.value.id)
      if kind in ('value', 'other'):
        for value, path in reaching_assignments(self.program, module, fn, node.value, owner_module, owner):
          if not path and isinstance(value, ast.Dict):
            items = value.values if key is syntax.NO_VALUE else containers.displayed_at(value, key)
            for item in items:
              results += self.resolve(owner_module, owner, item, depth + 1)
    for owner_module, owner, value in containers.stored_at(self.program, module, fn, node):
      results += self.resolve(owner_module, owner, value, depth + 1)
    return results

  def _resolve_name(self, module, fn, node, depth):
    kind, target, owner_module, owner = self.program.lookup(module, fn, node.id)
    if kind == 'def':
      return [Fn(owner_module, target)]
    if kind in ('value', 'other'):
      found, entry = reaching_from_entry(self.program, module, fn, node, owner_module, owner, with_defs=True)
      results = self._resolve_parameter(node.id, fn, depth) if entry else []
      for value, path in found:
        if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)):
          results.append(Fn(owner_module, value))  # `if fast: def input_fn(): ...` / `else: input_fn = ...`
          continue
        results += self._resolve_path(owner_module, owner, value, path, depth + 1)
      if entry:  # the wrapped and the unwrapped function are one function
        results = [r for i, r in enumerate(results) if r not in results[:i]]
      if results or kind == 'value':
        return results or [Unresolved('`%s` is computed at run time' % node.id)]
    if kind == 'import':
      found = self.program.find_def(target)
      if found and not isinstance(found[1], ast.ClassDef):
        return [Fn(found[0], found[1])]
      # `from input_fn import train_input_fn`, a module-level value there (`train_input_fn = lambda: ...`)
      imported = self.program.find_value(target)
      if imported is not None:
        return self.resolve(imported[0], None, imported[1], depth + 1)
      elsewhere = self.program.neighbours.left_out(target)
      return [Unresolved('`%s` comes from %s' % (node.id, elsewhere or
                                                  '%s, which is not among the scanned files' % target),
                         left_out=self.program.neighbours.source_file_for(target) if elsewhere else None)]
    if kind == 'param':
      return self._resolve_parameter(node.id, target, depth)
    return [Unresolved('`%s` is not bound to a function the scanned files define' % node.id)]

  def _chosen_module_functions(self, module, fn, node):
    """`model.get_inputs` where a function imports one of several modules as `model` by a condition (`if name ==
    'simple': import pkg.simple as model` / `elif ...: import pkg.intermediate as model`): the function of each."""
    if not isinstance(node.value, ast.Name):
      return []
    kind, _, owner_module, owner = self.program.lookup(module, fn, node.value.id)
    if kind != 'import' or owner is None:
      return []
    imported = [bound for each, bound in self.program.local_bindings(owner_module, owner).get(node.value.id, [])
                if each == 'import']
    if len(set(imported)) < 2:
      return []
    found = [self.program.find_def('%s.%s' % (name, node.attr)) for name in sorted(set(imported))]
    return [Fn(f[0], f[1]) for f in found if f and not isinstance(f[1], ast.ClassDef)]

  def _resolve_path(self, module, fn, value, path, depth):
    """The callables element `path` of a value holds (`train_fn, eval_fn = make_input_fns()`: path (1,))."""
    if not path:
      return self.resolve(module, fn, value, depth)
    if depth > MAX_DEPTH:
      return []
    if isinstance(value, (ast.Tuple, ast.List)) and isinstance(path[0], int) and path[0] < len(value.elts):
      return self._resolve_path(module, fn, value.elts[path[0]], path[1:], depth + 1)
    if isinstance(value, ast.Name):
      kind, _, owner_module, owner = self.program.lookup(module, fn, value.id)
      if kind not in ('value', 'other'):
        return []
      results = []
      for inner, inner_path in self.program.assignments(owner_module, owner, value.id):
        results += self._resolve_path(owner_module, owner, inner, tuple(inner_path) + tuple(path), depth + 1)
      return results
    if isinstance(value, ast.Call):
      results = []
      for builder in self.resolve(module, fn, value.func, depth + 1):
        if isinstance(builder, Fn) and not isinstance(builder.node, ast.Lambda):
          for returned in self.program.returned_values(builder.node):
            results += self._resolve_path(builder.module, builder.node, returned, path, depth + 1)
      return results
    return []

  def _resolve_parameter(self, name, fn, depth):
    """What the scanned callers of `fn` pass as its parameter `name` (build_estimator(model_fn) ...)."""
    results = []
    for module, caller, _, value in self.passed(fn, name, depth):
      if value is not None:
        results += self.resolve(module, caller, value, depth + 1)
    if not results:
      results.append(Unresolved('`%s` is a parameter of %s, and no scanned call passes it a function'
                                % (name, 'a lambda' if isinstance(fn, ast.Lambda) else fn.name + '()')))
    return results

  def passed(self, fn, name, depth=0):
    """(module, calling function, call, argument) for every scanned call of `fn`: what it passes as the parameter
    `name` (None when it leaves it to its default)."""
    return [(module, caller, call, arguments(call, fn).get(name)) for module, caller, call in self.call_sites(fn, depth)]

  def arguments(self, call, fn):
    """arguments() below, for modules that reach this one only through the program (containers)."""
    return arguments(call, fn)

  def call_sites(self, fn, depth=0, limit=20):
    """(module, calling function, call) for the scanned calls of a def, by name and then resolved."""
    if isinstance(fn, ast.Lambda):
      return []
    sites = []
    for module, caller, call in self.program.calls_named(fn.name):
      if isinstance(call.func, ast.Attribute) and not self.program.canonical(module, caller, call.func):
        if implicit_arguments(fn, call) and self._same_class(module, caller, fn, call):
          sites.append((module, caller, call))  # self.method(...) in the method's own class
        else:
          method = self.bound_method(module, caller, call.func, depth) or self._super_method(
              module, caller, call.func)
          if method is not None and method.node is fn:
            # obj.method(...), obj an instance of the method's class; super().method(...) in a subclass
            sites.append((module, caller, call))
      elif any(isinstance(t, Fn) and t.node is fn
               for t in self.resolve(module, caller, call.func, max(depth + 1, MAX_DEPTH - 1))):
        sites.append((module, caller, call))
      if len(sites) >= limit:
        break
    sites += self._constructions(fn)[:max(0, limit - len(sites))]
    return sites + self._indirect_call_sites(fn, depth)[:max(0, limit - len(sites))]

  def _constructions(self, fn):
    """The calls that construct the class whose __init__ `fn` is (`DatasetHandler('train', args)`)."""
    if fn.name != '__init__':
      return []
    module = self.program.module_of(fn)
    owner = module.parents.get(id(fn)) if module is not None else None
    if not isinstance(owner, ast.ClassDef):
      return []
    sites = [(call_module, caller, call) for call_module, caller, call in self.program.calls_named(owner.name)
             if self._constructed(call_module, caller, call) is owner]
    for alias in self._aliases(owner):
      sites += [(call_module, caller, call) for call_module, caller, call in self.program.calls_named(alias)
                if isinstance(call.func, ast.Name) and
                any(built[1] is owner for built in self.classes_built(call_module, caller, call))]
    return sites

  def _aliases(self, owner):
    """Module-level names the program assigns the class `owner` to (`Model = ModelBiMPM` under a flag)."""
    if self._aliases_of is None:
      self._aliases_of = collections.defaultdict(list)
      for other in self.program.modules:
        for name, assigned in other.assignments.items():
          for value in assigned:
            named = self._class_named(other, None, value, 0) if isinstance(value, (ast.Name, ast.Attribute)) else None
            if named and name != named[1].name and name not in self._aliases_of[id(named[1])]:
              self._aliases_of[id(named[1])].append(name)
    return self._aliases_of.get(id(owner), [])

  def _indirect_call_sites(self, fn, depth):
    """Calls of a def through a parameter: `run_loop(build_estimator_fn=build_estimator)`, then
    `build_estimator_fn(...)` inside run_loop."""
    sites = []
    for module, caller, call, argument in self.program.passed_as_argument(fn.name):
      if not any(isinstance(t, Fn) and t.node is fn
                 for t in self.resolve(module, caller, argument, MAX_DEPTH - 1)):
        continue
      for receiver in self.resolve(module, caller, call.func, MAX_DEPTH - 1):
        if not isinstance(receiver, Fn) or isinstance(receiver.node, ast.Lambda):
          continue
        bound = arguments(call, receiver.node)
        names = [name for name, value in bound.items() if value is argument]
        for name in names:
          for inner_module, inner_caller, inner_call in self.program.calls_named(name):
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

  def _own_method(self, module, fn, node):
    """(module, def) of `self.name` when `fn` is a method of a class that (or a scanned base of which) defines
    `name` (not a property)."""
    if not (isinstance(node.value, ast.Name) and node.value.id == 'self') or fn is None:
      return None
    owner = enclosing_class(module, fn)
    if owner is None:
      return None
    found = self.find_method(module, owner, node.attr)
    return found if found and _runs_when_called(found[1]) else None

  def subclasses(self, class_node):
    """(module, ClassDef) of the scanned classes derived from a class, directly or not."""
    table = self.program.memo.get('subclasses')
    if table is None:
      table = self.program.memo['subclasses'] = collections.defaultdict(list)
      for each in self.program.modules:
        for node in ast.walk(each.tree):
          if isinstance(node, ast.ClassDef):
            for base in node.bases:
              found = self.program.find_def(each.canonical(base))
              if found and isinstance(found[1], ast.ClassDef):
                table[id(found[1])].append((each, node))
    found, todo = [], list(table.get(id(class_node), ()))
    while todo and len(found) < 50:
      sub = todo.pop(0)
      if all(sub[1] is not f[1] for f in found):
        found.append(sub)
        todo += table.get(id(sub[1]), ())
    return found

  def runs_on_self(self, module, class_node, name, own):
    """(module, def) of each method `self.name()` can run in a method of `class_node`, whose own (or inherited)
    method is `own`: the method of each class the program instantiates among the class and its scanned subclasses;
    when it instantiates none of them where this reading sees (a factory, another file), the class's own method
    unless it is abstract, and every override."""
    family = [(module, class_node)] + self.subclasses(class_node) if class_node is not None else []
    made = self._instantiated()
    chosen = [self.find_method(m, c, name) for m, c in family if id(c) in made]
    if not chosen:
      chosen = ([] if _abstract(own[1]) and len(family) > 1 else [own]) + [
          self.find_method(m, c, name) for m, c in family[1:]]
    found = []
    for method in chosen:
      if method and _runs_when_called(method[1]) and \
          all(method[1] is not f[1] for f in found) and not (_abstract(method[1]) and len(chosen) > 1):
        found.append(method)
    return found or [own]

  def _instantiated(self):
    """id() of every scanned class a call of the program constructs (`MnistEstimator()`)."""
    made = self.program.memo.get('instantiated')
    if made is None:
      made = self.program.memo['instantiated'] = set()
      for module, caller, call in self.program.calls():
        made_class = self._constructed(module, caller, call)
        if made_class is not None:
          made.add(id(made_class))
    return made

  def _constructed(self, module, caller, call):
    """The scanned ClassDef a call constructs (`MnistEstimator()`, `handlers.Handler('train')`), else None."""
    if not isinstance(call.func, (ast.Name, ast.Attribute)):
      return None
    found = self.program.find_def(self.program.canonical(module, caller, call.func))
    return found[1] if found and isinstance(found[1], ast.ClassDef) else None

  def find_method(self, module, class_node, name, depth=0):
    """(module, def) of method `name` of a class, looked for in the class and then its scanned bases; the last def
    of that name in a class body is the one Python keeps."""
    for statement in reversed(class_node.body):
      if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and statement.name == name:
        return module, statement
    if depth < 4:
      for base in class_node.bases:
        found = self.program.find_def(module.canonical(base))
        if found and isinstance(found[1], ast.ClassDef):
          method = self.find_method(found[0], found[1], name, depth + 1)
          if method:
            return method
    return None

  def class_of(self, module, fn, node, depth=0):
    """(module, ClassDef) of the scanned class whose instance an expression holds (`ds = Cifar10DataSet(...)`;
    `ds`), else None."""
    if depth == 0:
      key = (id(fn), id(node))
      if key not in self._classes:
        self._classes[key] = None  # (asked again while it is answered: no answer from there)
        self._classes[key] = self._class_of(module, fn, node, 0)
      return self._classes[key]
    return self._class_of(module, fn, node, depth)

  def _class_of(self, module, fn, node, depth):
    if depth > CLASS_DEPTH:
      return None
    if isinstance(node, ast.Call):
      found = self._class_named(module, fn, node.func, depth)
      if found:
        return found
      # `model = self.select_model(flags)`: a function of the program that returns an instance it makes
      if id(node) in self._returning:
        return None  # (a call met again while it is followed: recursion)
      self._returning.add(id(node))
      try:
        for callee in self.called_defs(module, fn, node):
          for value in self.program.returned_values(callee.node):
            made = self.class_of(callee.module, callee.node, value, depth + 1)
            if made:
              return made
      finally:
        self._returning.discard(id(node))
      return None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == 'self':
      return self._attribute_class(module, fn, node.attr, depth)
    if isinstance(node, ast.Name):
      kind, bound, owner_module, owner = self.program.lookup(module, fn, node.id)
      if kind == 'import':  # `from solution import train`, where solution.py assigns train at module level
        module_name, _, name = bound.rpartition('.')
        source = self.program.find_module(module_name) if module_name else None
        if source is not None and source is not module and name in source.assignments:
          return self.class_of(source, None, ast.Name(id=name, ctx=ast.Load()), depth + 1)
      elif kind == 'value' and owner is not None:
        return self.class_of(owner_module, owner, bound, depth + 1)
      elif kind in ('value', 'other'):
        # `train, test = data.split(...)`, `train, evaluation = [Input(training) for training in (True, False)]`
        for value, path in reversed(self.program.assignments(owner_module, owner, node.id)):
          found = self._class_at(owner_module, owner, value, path, depth + 1)
          if found:
            return found
    return None

  def classes_built(self, module, fn, call):
    """Every scanned class a call may build: class_of's, and each class a name holds that the program assigns a
    class in several places (`Model = ModelBiMPM` or `Model = ModelSiameseLSTM` by a flag, then `Model(...)`)."""
    made = self.class_of(module, fn, call)
    found = [made] if made else []
    if isinstance(call.func, ast.Name):
      kind, _, owner_module, owner = self.program.lookup(module, fn, call.func.id)
      if kind in ('value', 'other'):
        for value, path in self.program.assignments(owner_module, owner, call.func.id):
          named = self._class_named(owner_module, owner, value, 0) if not path and isinstance(
              value, (ast.Name, ast.Attribute)) else None
          if named and all(named[1] is not other[1] for other in found):
            found.append(named)
    return found

  def _class_named(self, module, fn, node, depth, passed=True):
    """(module, ClassDef) of the scanned class an expression names (`Net`, `models.Net`), or, for a parameter, the
    class its scanned callers pass (`model = model_class(params)` in a factory's closure, the factory called with
    the class: build_model_fn_from_class(SkipThought)); else None."""
    canonical = self.program.canonical(module, fn, node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    found = self.program.find_def(canonical) if canonical else None
    if found is None and isinstance(node, ast.Name):
      kind, bound, owner_module, _ = self.program.lookup(module, fn, node.id)
      found = (owner_module, bound) if kind == 'class' else None
      if kind == 'param' and passed:
        for caller_module, caller, _, value in self.passed(bound, node.id, depth):
          found = self._class_named(caller_module, caller, value, depth, passed=False) if value is not None else None
          if found:
            return found
    return found if found and isinstance(found[1], ast.ClassDef) else None

  def _class_at(self, module, fn, value, path, depth):
    """class_of for the part `path` (tuple indexes) of `value`: an element of a tuple, list or comprehension
    written there, or of the tuple a call of the program returns (`return (self._new(left), self._new(right))`)."""
    while path and isinstance(value, (ast.Tuple, ast.List, ast.ListComp)):
      index, path = path[0], path[1:]
      if isinstance(value, ast.ListComp):
        value = value.elt
      elif isinstance(index, int) and index < len(value.elts):
        value = value.elts[index]
      else:
        return None
    if not path:
      return self.class_of(module, fn, value, depth)
    if not isinstance(value, ast.Call) or depth > CLASS_DEPTH or id(value) in self._returning:
      return None
    self._returning.add(id(value))
    try:
      for callee in self.called_defs(module, fn, value):
        for returned in self.program.returned_values(callee.node):
          found = self._class_at(callee.module, callee.node, returned, path, depth + 1)
          if found:
            return found
    finally:
      self._returning.discard(id(value))
    return None

  def _attribute_class(self, module, fn, name, depth):
    """The scanned class of `self.name` in a method `fn`: what a method of its class (or a scanned base) assigns
    to self.name (`self.model = BiLSTMCRFModel()` in __init__)."""
    owner = enclosing_class(module, fn) if fn is not None else None
    if owner is None:
      return None
    for method in owner.body:
      if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
        continue
      for node in ast.walk(method):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == 'self' and
            t.attr == name for t in node.targets):
          found = self.class_of(module, method, node.value, depth + 1)
          if found:
            return found
    return None

  def _class_method(self, canonical):
    """An Fn for `Class.method` (canonical `module.Class.method`) of a scanned class when the method is a static
    or class method, which a call on the class runs with nothing bound but `cls` (Utils.make_input_fn); else
    None."""
    owner, _, name = (canonical or '').rpartition('.')
    found = self.program.find_def(owner) if owner else None
    if not found or not isinstance(found[1], ast.ClassDef):
      return None
    method = self.find_method(found[0], found[1], name)
    if method is None:
      return None
    if _decorated(method[1], 'staticmethod'):
      return Fn(method[0], method[1], bound_positional=0)
    if _decorated(method[1], 'classmethod'):
      return Fn(method[0], method[1], bound_positional=1)
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
    return Fn(method[0], method[1], bound_positional=0 if _decorated(method[1], 'staticmethod') else 1)

  def _held_by_self(self, module, fn, node, depth):
    """The functions `self.name` holds in a method when its class assigns one there (`self.preprocess =
    preprocessing.preprocess_image`, or a function its constructor is handed: `self.loss_func = loss_func`)."""
    if not (isinstance(node.value, ast.Name) and node.value.id == 'self') or fn is None:
      return []
    found = []
    for method, value in self_assignments(module, fn, node.attr):
      found += [t for t in self.resolve(module, method, value, depth + 1) if isinstance(t, Fn)]
    return found

  def _super_method(self, module, fn, node):
    """An Fn for `super().name` / `super(Class, self).name` in a method: `name` of the first scanned base of its
    class that defines it (self bound), else None."""
    if not (isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and
            node.value.func.id == 'super') or fn is None:
      return None
    owner = enclosing_class(module, fn)
    for base in owner.bases if owner is not None else ():
      found = self.program.find_def(module.canonical(base))
      method = self.find_method(found[0], found[1], node.attr) if found and isinstance(
          found[1], ast.ClassDef) else None
      if method is not None:
        return Fn(method[0], method[1], bound_positional=0 if _decorated(method[1], 'staticmethod') else 1)
    return None

  def _same_class(self, module, caller, fn, call):
    if not (isinstance(call.func.value, ast.Name) and call.func.value.id in ('self', 'cls')) or caller is None:
      return False
    owner = module.parents.get(id(fn))
    return isinstance(owner, ast.ClassDef) and module.parents.get(id(caller)) is owner

  def _resolve_call_result(self, module, fn, call, depth):
    if isinstance(call.func, ast.Attribute) and call.func.attr == 'get' and call.args and \
        isinstance(call.func.value, ast.Name):
      # `HOOKS.get(name)` of a dict display: as HOOKS[name] (_resolve_item)
      found = self._resolve_item(module, fn, ast.Subscript(value=call.func.value, slice=call.args[0]), depth)
      if found:
        return found
    callee = self.program.canonical(module, fn, call.func)
    wrapped = syntax.argument(call, 0, 'model_fn') if callee in apis.MODEL_FN_WRAPPERS else None
    if wrapped is not None:
      # the model_fn it calls (once per tower): the estimator's modes are that function's
      found = [t for t in self.resolve(module, fn, wrapped, depth + 1) if isinstance(t, Fn)]
      if found:
        return found
    if callee and (callee == 'tensorflow' or callee.startswith('tensorflow.')):
      return [Unresolved('`%s` is made by TensorFlow at run time' % syntax.render(call), made_by=callee,
                         call=(module, fn, call))]
    if callee == 'functools.partial' and call.args:
      results = []
      for target in self.resolve(module, fn, call.args[0], depth + 1):
        if isinstance(target, Fn):
          bound = frozenset(kw.arg for kw in call.keywords if kw.arg)
          target = target._replace(bound_positional=target.bound_positional + len(call.args) - 1,
                                   bound_keywords=target.bound_keywords | bound, partial=(module, call))
        results.append(target)
      return results
    results = []
    for builder in self.resolve(module, fn, call.func, depth + 1):
      if isinstance(builder, Unresolved):
        results.append(builder)  # its reason names the builder that could not be found
        continue
      if isinstance(builder.node, ast.Lambda):
        results.append(Unresolved('`%s` returns a value only known at run time' % syntax.render(call)))
        continue
      returned = self.program.returned_values(builder.node)
      if not returned:
        results.append(Unresolved('%s() returns nothing static analysis can follow' % builder.node.name))
      for value in returned:
        for target in self.resolve(builder.module, builder.node, value, depth + 1):
          if isinstance(target, Fn):
            target = target._replace(via=target.via + ((module, fn, call, builder.node),))
          elif target.call is not None:
            target = Unresolved(target.reason, target.made_by, target.call, target.left_out,
                                target.via + ((module, fn, call, builder.node),))
          results.append(target)
    return results

  def called_defs(self, module, fn, call):
    """The project functions a call runs (not classes, not lambdas), for following calls one level down."""
    if isinstance(call.func, ast.Lambda):
      return []
    targets = self.resolve(module, fn, call.func, depth=MAX_DEPTH - 3)
    found = [t for t in targets if isinstance(t, Fn) and not isinstance(t.node, ast.Lambda)]
    if not found and isinstance(call.func, ast.Name):
      # `model = model_class(...)` then `model(inputs, training)`: the instance's class's __call__ (its own or a
      # scanned base's: official/resnet's Model, the Keras-less model classes of TF 1 programs)
      made = self.class_of(module, fn, call.func)
      method = self.find_method(made[0], made[1], '__call__') if made else None
      if method is not None:
        found = [Fn(method[0], method[1], bound_positional=1)]
    return found

  def constructs(self, module, fn, call, predicate, depth=0):
    """True when a call builds something `predicate(canonical name)` accepts, directly or via a project function
    that returns such a construction (e.g. build_estimator())."""
    canonical = self.program.canonical(module, fn, call.func)
    if canonical and predicate(canonical):
      return True
    if depth >= 2:
      return False
    for target in self.called_defs(module, fn, call):
      for value in self.program.returned_values(target.node):
        if isinstance(value, ast.Call) and self.constructs(target.module, target.node, value, predicate, depth + 1):
          return True
        if isinstance(value, ast.Name):
          kind, bound, owner_module, owner = self.program.lookup(target.module, target.node, value.id)
          if kind == 'value' and isinstance(bound, ast.Call) and self.constructs(
              owner_module, owner, bound, predicate, depth + 1):
            return True
    return False


def _abstract(fn):
  """Whether a def only says it is to be overridden: @abstractmethod, or a body (past a docstring) of `pass`, `...`
  or a raise."""
  return any(_is_abstractmethod(d) for d in fn.decorator_list) or all(
      isinstance(s, (ast.Pass, ast.Raise)) or (isinstance(s, ast.Expr) and not isinstance(s.value, ast.Call))
      for s in fn.body)


def self_assignments(module, fn, attribute):
  """(method, value) of every `self.attribute = value` in the class whose method `fn` is (or that holds `fn`,
  a def nested in a method)."""
  owner = module.parents.get(id(fn)) if fn is not None else None
  while owner is not None and not isinstance(owner, ast.ClassDef):
    owner = module.parents.get(id(owner))
  if owner is None:
    return []
  found = []
  for method in owner.body:
    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
      for child, _ in syntax.walk_local(method):
        if isinstance(child, ast.Assign):
          for target in child.targets:
            if isinstance(target, ast.Attribute) and target.attr == attribute and \
                isinstance(target.value, ast.Name) and target.value.id == 'self':
              found.append((method, child.value))
  return found


def enclosing_class(module, fn):
  """The ClassDef whose `self` a function sees: its own class for a method, the class of the method it is nested
  in for a closure (`def create_model_fn(self): def model_fn(...): self._encode(...)`) or a lambda written in it;
  None elsewhere."""
  while fn is not None:
    parent = module.parents.get(id(fn))
    if isinstance(parent, ast.ClassDef):
      return parent
    if 'self' in syntax.param_names(fn):
      return None
    fn = module.enclosing.get(id(fn))  # a lambda's too (`train(input_fn=lambda: self._input_fn(data))`)
  return None


def _runs_when_called(method):
  """Whether `self.name(...)` runs a method's body as written: a plain, abstract, static or class method (not a
  property, nor a def another decorator wraps)."""
  return all(_is_abstractmethod(d) or syntax.dotted(d) in ('staticmethod', 'classmethod')
             for d in method.decorator_list)


def _is_abstractmethod(decorator):
  return (syntax.dotted(decorator) or '').split('.')[-1] == 'abstractmethod'


def _decorated(definition, decorator):
  """Whether a def carries `@decorator` (staticmethod, classmethod)."""
  return any(syntax.dotted(d) == decorator for d in definition.decorator_list)


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


def implicit_arguments(fn, call):
  """1 when `self` or `cls` is passed implicitly (obj.method(...), or a class called to construct it, whose
  __init__ gets the new object), else 0."""
  names = syntax.positional_names(fn)
  return 1 if names and names[0] in ('self', 'cls') and (
      isinstance(call.func, ast.Attribute) or getattr(fn, 'name', None) == '__init__') else 0


def arguments(call, fn):
  """{parameter name: argument expression} for a call of a def, `self` or `cls` passed implicitly left out."""
  return bind_arguments(call, fn, implicit_arguments(fn, call))


def bind_arguments(call, fn, skip_positional=0):
  """{parameter name: argument expression} for a call of a def (what can be told without running it)."""
  names = syntax.positional_names(fn)[skip_positional:]
  bound = {}
  for name, value in zip(names, call.args):
    if type(value).__name__ == 'Starred':
      break
    bound[name] = value
  for kw in call.keywords:
    if kw.arg:
      bound[kw.arg] = kw.value
  return bound
