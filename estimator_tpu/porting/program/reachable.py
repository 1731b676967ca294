"""Which functions of the program can run: those its module-level code (its `if __name__ == '__main__':` block,
say) reaches through the names it uses, and those nothing in the scanned files names (an entry point from
elsewhere: a test, a job runner), except in a script, whose functions nobody imports, or in any module of a program
whose script is scanned (it runs from there), unless the program finds functions by a computed name (getattr).

A function only dead code names is dead: an Experiment builder a commented-out learn_runner call used to run, the
estimator and input_fns only it builds. A change there would change nothing the program runs, so the report asks
for none. Names are matched by their last part (`model.build_estimator` is build_estimator), which can only make
more code live, never less, except that a plain name a module defines itself is that module's def (`main` in
train.py is train.py's main, not a main of another file). Methods and nested functions live and die with their class
or function.

A script another scanned training script imports (mnist_tpu.py's `import mnist`, where mnist.py has a `__main__`
block of its own) runs as a module there: its `__main__` block does not run, so what only that block reaches is dead.
A test file (test_*.py, *_test.py) that imports a script is not where the program runs from, and neither is a script
that does not train (export.py importing model_fn from the training script main.py).
"""
import ast
import itertools
import os

from estimator_tpu.porting.program import containers
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Ways a program runs a function it does not name.
DYNAMIC_LOOKUPS = frozenset(['getattr', 'import_module', '__import__', 'globals', 'locals', 'eval', 'exec'])


def dead_defs(program):
  """The ids of the module-level defs and classes of the program that cannot run (read once per program)."""
  if 'dead_defs' not in program.memo:
    program.memo['dead_defs'] = _dead(program)
  return program.memo['dead_defs']


def in_dead_code(program, module, node):
  """Whether `node` is inside a def or class that cannot run, or in the branch of an `if` whose test the program
  fixes in its code (below)."""
  dead = dead_defs(program)
  top = None
  current = statement = node
  while current is not None and current is not module.tree:
    if isinstance(current, DEFS):
      top = current
    statement, current = current, module.parents.get(id(current))
  # (statement: the module-level statement around node) an imported script's `__main__` block does not run
  in_main_block = id(module) in program.memo['imported_scripts'] and _is_main_block(statement)
  return (top is not None and id(top) in dead) or in_main_block or _in_branch_not_taken(program, module, node)


def _in_branch_not_taken(program, module, node):
  """Whether `node` is in the body of an `if` whose test is always false, or in the else of one always true, by
  names the program writes once as a literal (`use_dataset = True` ... `if use_dataset:`; `model_type = 'deep'`
  ... `if model_type == 'wide':`; a parameter every scanned call passes the same literal): no flag or input can take
  that branch, so nothing in it runs."""
  child, parent = node, module.parents.get(id(node))
  while parent is not None:
    if isinstance(parent, ast.If) and child is not parent.test:
      truth = _fixed_truth(program, module, parent)
      if truth is not None and any(child is each for each in parent.body) != truth:
        return True
    child, parent = parent, module.parents.get(id(parent))
  return False


def _fixed_truth(program, module, statement):
  cache = program.memo.setdefault('fixed_truth', {})
  if id(statement) not in cache:
    scope = program.enclosing_function(module, statement)
    found = _fixed_values(program, module, scope, statement.test)
    truths = set(bool(value) for value in found) if found is not _UNKNOWN else ()
    cache[id(statement)] = truths.pop() if len(truths) == 1 else None
  return cache[id(statement)]


_UNKNOWN = object()
_COMPARISONS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
                ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
                ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}


def _fixed_values(program, module, scope, node, depth=0):
  """The values an expression can have by the program's own code (a list: literals the program writes), else
  _UNKNOWN."""
  if depth > 3:
    return _UNKNOWN
  if syntax.is_literal(node):
    return [syntax.literal(node)]
  if isinstance(node, (ast.Tuple, ast.List)) and all(syntax.is_literal(e) for e in node.elts):
    return [tuple(syntax.literal(e) for e in node.elts)]  # the right side of `x in ('train', 'eval')`
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
    found = _fixed_values(program, module, scope, node.operand, depth + 1)
    return _UNKNOWN if found is _UNKNOWN else [not value for value in found]
  if isinstance(node, ast.BoolOp):
    parts = [_fixed_values(program, module, scope, value, depth + 1) for value in node.values]
    if any(part is _UNKNOWN for part in parts):
      return _UNKNOWN
    combine = all if isinstance(node.op, ast.And) else any
    return [combine(values_) for values_ in itertools.product(*parts)]
  if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
    left = _fixed_values(program, module, scope, node.left, depth + 1)
    right = _fixed_values(program, module, scope, node.comparators[0], depth + 1)
    if left is _UNKNOWN or right is _UNKNOWN:
      return _UNKNOWN
    try:
      return [_COMPARISONS[type(node.ops[0])](a, b) for a in left for b in right]
    except TypeError:  # `1 in 'abc'`: what Python would raise decides nothing here
      return _UNKNOWN
  if isinstance(node, ast.Name):
    value = _fixed_name(program, module, scope, node, depth)
    return _UNKNOWN if value is _UNKNOWN else [value]
  if _entry_read(node):
    return _fixed_entry(program, module, scope, node)
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
    # `self.mode` of an object the program constructs only with literals (`Handler('train')`, `Handler('eval')`);
    # `hparams.use_tpu` of `hparams = HParams(..., use_tpu=False)`
    found = values.origins(program, module, scope, node)
    if found and all(syntax.is_literal(origin.node) for origin in found):
      return [syntax.literal(origin.node) for origin in found]
  return _UNKNOWN


def _fixed_name(program, module, scope, node, depth):
  """A name bound once, to a literal, in the function that reads it or at module level (and never declared global
  elsewhere), the target of a loop that runs once (its only binding), or a parameter every scanned call passes one
  literal (its default when a call leaves it out)."""
  kind, bound, owner_module, owner = program.lookup(module, scope, node.id)
  if kind == 'value':
    written = program.assignments(owner_module, owner, node.id)
    if len(written) != 1 or written[0][1] or not syntax.is_literal(written[0][0]):
      return _UNKNOWN
    if owner is None and any(isinstance(child, ast.Global) and node.id in child.names
                             for child in ast.walk(owner_module.tree)):
      return _UNKNOWN
    return syntax.literal(written[0][0])
  if kind == 'other' and isinstance(bound, ast.For) and isinstance(bound.target, ast.Name) and \
      len(program.assignments(owner_module, owner, node.id)) == 1:
    return _only_item(bound.iter)  # `for m in range(3, 4):` runs once, with 3
  if kind == 'param' and not isinstance(bound, ast.Lambda):
    default = values.default_of(bound, node.id)
    found = []
    for site_module, caller, call, given in program.callables.passed(bound, node.id) + \
        _handed_out(program, bound, node.id):
      if syntax.has_star_args(call):
        return _UNKNOWN
      # the caller's literal, a name the caller fixes so (`build(MODEL_TYPE)`), or the default it leaves
      each = _fixed_values(program, site_module, caller, given if given is not None else default, depth + 1)
      if each is _UNKNOWN:
        return _UNKNOWN
      found += each
    return found[0] if found and len(set(map(repr, found))) == 1 else _UNKNOWN
  return _UNKNOWN


# What an Estimator passes an input_fn or model_fn by name (estimator.py _call_input_fn, _call_model_fn).
PASSED_BY_NAME = frozenset(['mode', 'params', 'config', 'input_context'])


def _entry_read(node):
  """`settings['key']` or `settings.get('key'[, default])` of a name, with a literal string key."""
  if isinstance(node, ast.Subscript):
    return isinstance(node.value, ast.Name) and isinstance(syntax.subscript_key(node), str)
  return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get' and \
      isinstance(node.func.value, ast.Name) and 1 <= len(node.args) <= 2 and not node.keywords and \
      isinstance(syntax.literal(node.args[0]), str)


def _fixed_entry(program, module, scope, node):
  """The values a dict entry read can have (_entry_read) where the name holds only dicts written out with literal
  entries and nothing in the program writes that key (`x['key'] = ...`, update, setdefault): `.get` of a key no
  display holds is its default."""
  getting = isinstance(node, ast.Call)
  holder, key = (node.func.value, syntax.literal(node.args[0])) if getting else (node.value, syntax.subscript_key(node))
  keys, opaque = _keys_written(program)
  if key in keys:
    return _UNKNOWN
  displays = values.origins(program, module, scope, holder)
  if not displays or not all(isinstance(v.node, ast.Dict) and None not in v.node.keys for v in displays):
    return _UNKNOWN  # not only dict displays, or one with `**other` in it
  shown_here = set(id(v.node) for v in displays)
  for where_module, where_fn, receiver in opaque:  # a dict the program fills with keys not written out
    if any(id(v.node) in shown_here for v in values.origins(program, where_module, where_fn, receiver)):
      return _UNKNOWN
  found = []
  for display in displays:
    shown = containers.displayed_at(display.node, key)
    if not shown and getting and len(node.args) == 1:
      found.append(None)  # dict.get's own default
      continue
    shown = shown or ([node.args[1]] if getting else [])
    if len(shown) != 1 or not syntax.is_literal(shown[0]):
      return _UNKNOWN
    found.append(syntax.literal(shown[0]))
  return found


def _keys_written(program):
  """(keys, receivers): the literal string keys the program stores into any dict (`x['key'] = ...`,
  x.update(key=...) or x.update({'key': ...}), x.setdefault('key', ...), x.pop('key')), and (module, function,
  name) of each dict it stores keys into that are not written out (`x[name] = ...`, `x.update(overrides)`)."""
  if 'keys_written' not in program.memo:
    keys, opaque = set(), []
    for module in program.modules:
      for node in ast.walk(module.tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
          key = syntax.subscript_key(node)
          if isinstance(key, str):
            keys.add(key)
          elif isinstance(node.value, ast.Name):
            opaque.append((module, program.enclosing_function(module, node), node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in ('update', 'setdefault', 'pop'):
          named = [kw.arg for kw in node.keywords]
          written = [syntax.literal(a) for a in node.args[:1]] if node.func.attr != 'update' else []
          written += [syntax.literal(k) for a in node.args if isinstance(a, ast.Dict) for k in a.keys if k is not None]
          keys.update(k for k in named + written if isinstance(k, str))
          if None in named or any(not isinstance(k, str) for k in written) or (
              node.func.attr == 'update' and any(not isinstance(a, ast.Dict) for a in node.args)):
            if isinstance(node.func.value, ast.Name):
              opaque.append((module, program.enclosing_function(module, node), node.func.value))
    program.memo['keys_written'] = keys, opaque
  return program.memo['keys_written']


def _handed_out(program, fn, name):
  """(module, caller, call, argument) where the def is handed as an argument to a callee that is no def of the
  program (estimator.train(input_fn), TrainSpec, functools.partial): that callee calls it with `name` at its default
  (argument None), unless a partial binds it by keyword (that argument), or, for the names an Estimator passes by
  name (mode, params, config), with a value only it knows. Calls through a def of the program are call_sites'
  own."""
  found = []
  unknown = ast.Call(func=ast.Name(id='estimator', ctx=ast.Load()), args=[], keywords=[])  # no fixed value
  for module, caller, call, argument in program.passed_as_argument(fn.name):
    if not any(getattr(t, 'node', None) is fn for t in program.callables.resolve(module, caller, argument)):
      continue
    if any(getattr(t, 'node', None) is not None for t in program.callables.resolve(module, caller, call.func)):
      continue
    bound = syntax.keyword(call, name) if program.canonical(module, caller, call.func) == 'functools.partial' else None
    found.append((module, caller, call, unknown if bound is None and name in PASSED_BY_NAME else bound))
  return found


def _only_item(values_node):
  """The one value a loop over `values_node` takes: a literal list or tuple of one literal, or range() of literal
  ints that holds one number; else _UNKNOWN."""
  if isinstance(values_node, (ast.List, ast.Tuple)) and len(values_node.elts) == 1 and \
      syntax.is_literal(values_node.elts[0]):
    return syntax.literal(values_node.elts[0])
  numbers = syntax.literal_range(values_node)
  return numbers[0] if numbers is not None and len(numbers) == 1 else _UNKNOWN


def _names(node):
  """Every name an expression or statement reads: plain names and the last part of attributes."""
  return set(name for name, _ in _reads(node))


def _reads(node, external=frozenset()):
  """(name, plain) for every name an expression or statement reads: plain names (True) and the last part of
  attributes (False), except attributes of a module from outside the program (`tf.app.run` runs no `run` of it;
  `external`: the local names of such imports)."""
  found = set()
  for child in ast.walk(node):
    found |= _read_by(child, external)
  return found


def _live_reads(program, module, node, external):
  """_reads of a def or statement, leaving out the branches of `if`s the program's own code decides against (a
  function only a branch no flag can take names does not run)."""
  found = set()
  todo = [node]
  while todo:
    current = todo.pop()
    if isinstance(current, ast.If):
      truth = _fixed_truth(program, module, current)
      if truth is not None:
        todo.append(current.test)
        todo.extend(current.body if truth else current.orelse)
        continue
    found |= _read_by(current, external)
    todo.extend(ast.iter_child_nodes(current))
  return found


def _read_by(node, external):
  """What one node reads itself (see _reads): a loaded name, or the last part of an attribute."""
  if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
    return {(node.id, True)}
  if isinstance(node, ast.Attribute):
    root = node.value
    while isinstance(root, ast.Attribute):
      root = root.value
    if not (isinstance(root, ast.Name) and root.id in external):
      return {(node.attr, False)}
  return set()


def _external_names(program, module):
  """The local names `module` binds to imports of modules the program does not scan (tensorflow, absl, numpy), and
  to no scanned one (`import mjsynth as pipe` in one branch, `import maptextsynth as pipe` in another: scanned)."""
  scanned = lambda canonical: any(program.find_module(canonical.rsplit('.', cut)[0])
                                  for cut in range(canonical.count('.') + 1))
  also = {}
  for node in ast.walk(module.tree):
    if isinstance(node, ast.Import):
      for alias in node.names:
        if alias.asname:
          also.setdefault(alias.asname, []).append(alias.name)
  names = set()
  for name, canonical in module.aliases.items():
    if name in module.written_imports and not scanned(canonical) and not any(map(scanned, also.get(name, ()))):
      names.add(name)
  return names


def _is_main_block(statement):
  return isinstance(statement, ast.If) and '__main__' in ast.dump(statement.test)


def _is_script(module):
  return any(_is_main_block(statement) for statement in module.tree.body)


def _is_test(module):
  stem = os.path.splitext(os.path.basename(module.path))[0]
  return stem.startswith('test_') or stem.endswith('_test')


def _imported(program, module):
  """The ids of the other scanned modules `module` imports."""
  found = set()
  for node in ast.walk(module.tree):
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
      base = module.absolute(node.module, node.level)
      names = [base] + ['%s.%s' % (base, alias.name) if base else alias.name for alias in node.names]
    else:
      continue
    for name in names:
      target = program.find_module(name) if name else None
      if target is not None and target is not module:
        found.add(id(target))
  return found


TRAINING_CALLS = frozenset(['train', 'train_and_evaluate', 'fit'])


def _trains(module):
  """Whether a module calls training itself (estimator.train, train_and_evaluate, fit, learn_runner.run)."""
  for node in ast.walk(module.tree):
    if isinstance(node, ast.Call):
      name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, 'id', '')
      if name in TRAINING_CALLS or (name == 'run' and 'learn_runner' in ast.dump(node.func)):
        return True
  return False


def _imported_scripts(program, scripts):
  """The ids of the scripts a scanned training script (not a test) imports, when some script is imported by none:
  the program trains from the importer, and uses the other as a module. A script imported only by scripts that do
  not train (an export or serving script importing model_fn from the training script) still runs as a script."""
  importers = [module for module in program.modules
               if id(module) in scripts and not _is_test(module) and _trains(module)]
  imported = set()
  for module in importers:
    imported |= _imported(program, module) & scripts
  if not [module for module in importers if id(module) not in imported]:
    return set()  # scripts that import one another: which runs cannot be told
  return imported


def _dead(program):
  defs = {}  # name -> [(module, module-level def or class)]
  scripts = set(id(module) for module in program.modules if _is_script(module))
  as_modules = _imported_scripts(program, scripts)
  program.memo['imported_scripts'] = as_modules
  # tf.app.run() and absl's app.run(main) run __main__.main without naming it: the main of each script that runs
  # (of every module, when none has a __main__ block)
  live_reads = set((id(module), 'main', True) for module in program.modules
                   if 'main' in module.top_level and id(module) not in as_modules and
                   (id(module) in scripts or not scripts))
  named_anywhere = set()
  external = dict((id(module), _external_names(program, module)) for module in program.modules)
  for module in program.modules:
    for statement in module.tree.body:
      if isinstance(statement, DEFS):
        defs.setdefault(statement.name, []).append((module, statement))
        named_anywhere |= _names(statement) - {statement.name}
        for decorator in statement.decorator_list:
          live_reads |= set((id(module), name, plain) for name, plain in _reads(decorator, external[id(module)]))
      elif not (id(module) in as_modules and _is_main_block(statement)):
        live_reads |= set((id(module), name, plain)
                          for name, plain in _live_reads(program, module, statement, external[id(module)]))
  named_anywhere |= set(name for _, name, _ in live_reads)
  # A program whose script is scanned runs from it: a def of its other modules that nothing names is not run either,
  # unless the program finds functions by a computed name (getattr, importlib, globals()).
  closed = bool(scripts) and not any(_names(module.tree) & DYNAMIC_LOOKUPS for module in program.modules)
  live = set()
  frontier = list(live_reads)
  for name, found in defs.items():
    for module, definition in found:
      if definition.decorator_list or (name not in named_anywhere and id(module) not in scripts and not closed):
        # Run from elsewhere, for all the scanned files can tell: nothing here names it (or a decorator
        # registers it).
        live.add(id(definition))
        frontier.extend((id(module), read, plain) for read, plain in _reads(definition, external[id(module)]))
  seen = set()
  while frontier:
    read = frontier.pop()
    if read in seen:
      continue
    seen.add(read)
    module_id, name, plain = read
    found = defs.get(name, [])
    own = [(module, definition) for module, definition in found if id(module) == module_id]
    for module, definition in (own if plain and own else found):
      if id(definition) not in live:
        live.add(id(definition))
        frontier.extend((id(module), inner, inner_plain)
                        for inner, inner_plain in _live_reads(program, module, definition, external[id(module)]))
  return set(id(definition) for found in defs.values() for _, definition in found if id(definition) not in live)
