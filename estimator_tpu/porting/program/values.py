"""Where a value comes from: the expressions an expression can hold, followed through names, tuple unpacking,
function parameters (to what the scanned callers pass), project functions (to what they return) and containers.

Used for what the checks must see through: feature columns built far from the model_fn that applies them, data
read by pandas in one file and sliced into a Dataset in another, the params dict an estimator hands its model_fn.
"""
import ast
import collections

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import containers
from estimator_tpu.porting.program import syntax

MAX_DEPTH = 8
# An expression and where it is: its module and the function it is written in (None: module level).
Value = collections.namedtuple('Value', ['module', 'fn', 'node'])


def origins(program, module, fn, node, path=(), depth=0):
  """The expressions (Values) `node` can hold, followed as far as static analysis can; `path` picks an element of
  a tuple (`a, (b, c) = f()`: c is path (1, 1) of f()'s value)."""
  if depth > MAX_DEPTH:
    return [Value(module, fn, node)]
  if path and isinstance(node, (ast.Tuple, ast.List)):
    index = path[0]
    if isinstance(index, int) and index < len(node.elts):
      return origins(program, module, fn, node.elts[index], path[1:], depth + 1)
    return [Value(module, fn, element) for element in node.elts]
  if isinstance(node, ast.Name):
    found = _name_origins(program, module, fn, node, path, depth)
    return found if found else [Value(module, fn, node)]
  if isinstance(node, ast.IfExp):
    return (origins(program, module, fn, node.body, path, depth + 1) +
            origins(program, module, fn, node.orelse, path, depth + 1))
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == 'self':
    found = []
    for method, value in callables.self_assignments(module, fn, node.attr):
      found += origins(program, module, method, value, path, depth + 1)
    for method in _properties(module, fn, node.attr):  # `@property def padded_shape(self): return ...`
      for value in program.returned_values(method):
        found += origins(program, module, method, value, path, depth + 1)
    if found:
      return found
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
    # `metadata.DEFAULTS`: a module-level value of a scanned module the program imports.
    kind, bound, owner_module, _ = program.lookup(module, fn, node.value.id)
    found = program.find_value('%s.%s' % (bound, node.attr)) if kind == 'import' else None
    if found is not None:
      return origins(program, found[0], None, found[1], path, depth + 1)
    if kind == 'class':
      # `HyperParameter.BATCH_SIZE` of `class HyperParameter: BATCH_SIZE = 100`: the class body's value.
      found = []
      for statement in bound.body:
        if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.attr
                                                     for t in statement.targets):
          found = origins(program, owner_module, None, statement.value, path, depth + 1)
      if found:
        return found
    if kind in ('value', 'other', 'param'):
      # `hparams.batch_size` of `hparams = HParams(batch_size=100)` (or a Namespace): the keyword it was made with.
      found = []
      for holder in origins(program, module, fn, node.value, (), depth + 1):
        if isinstance(holder.node, ast.Call) and _keyword_record(program, holder):
          given = syntax.keyword(holder.node, node.attr)
          if given is not None:
            found += origins(program, holder.module, holder.fn, given, path, depth + 1)
      if found:
        return found
  if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
    # `_NUM_EXAMPLES['validation']` of a dict written out: the value at that key
    key = syntax.subscript_key(node)
    found = []
    if key is not syntax.NO_VALUE:
      for container in origins(program, module, fn, node.value, (), depth + 1):
        if isinstance(container.node, ast.Dict):
          for value in containers.displayed_at(container.node, key):
            found += origins(program, container.module, container.fn, value, path, depth + 1)
    # `inputs[split] = make_input_fn(split)` in a loop, then `inputs['train']`: what is stored there.
    for owner_module, owner, value in containers.stored_at(program, module, fn, node):
      found += origins(program, owner_module, owner, value, path, depth + 1)
    if found:
      return found
  if isinstance(node, ast.Call) and not isinstance(node.func, ast.Lambda):
    canonical = program.canonical(module, fn, node.func) or ''
    if path and isinstance(path[0], int) and canonical in apis.SPLITTERS and not syntax.has_star_args(node) and \
        path[0] < 2 * len(node.args):
      # `x_train, x_test, y_train, y_test = train_test_split(x, y)`: parts 2i and 2i + 1 are rows of argument i
      return origins(program, module, fn, node.args[path[0] // 2], path[1:], depth + 1)
    # A library's call is known by its name; so is a program's copy of TensorFlow's MNIST reader, whose body
    # (a DataSets object filled in field by field) would lose what its labels are.
    if not canonical.startswith(('tensorflow', 'numpy', 'pandas')) and not apis.is_mnist_reader(canonical):
      callees = [c for c in program.callables.called_defs(module, fn, node) if not c.bound_positional]
      results = []
      for callee in callees:
        for value in program.returned_values(callee.node):
          results += origins(program, callee.module, callee.node, value, path, depth + 1)
      if results:
        return results
  return [Value(module, fn, node)]


def _keyword_record(program, value):
  """Whether a call makes an object whose attributes are the keywords it is given (HParams, argparse.Namespace,
  types.SimpleNamespace)."""
  canonical = program.canonical(value.module, value.fn, value.node.func) or ''
  return apis.is_hparams(canonical) or canonical in ('argparse.Namespace', 'types.SimpleNamespace')


def _name_origins(program, module, fn, node, path, depth):
  name = node.id
  kind, bound, owner_module, owner = program.lookup(module, fn, name)
  if kind == 'param':
    return _parameter_origins(program, bound, name, path, depth)
  if kind == 'import':
    found = program.find_value(bound)
    return origins(program, found[0], None, found[1], path, depth + 1) if found is not None else []
  if kind not in ('value', 'other'):
    return []
  # Read in the scope that assigns it: the assignments that can reach this read (x = load(); x = x / 255.0).
  # A parameter's entry value too where no assignment above surely ran (`def clean(df): ... df = df.dropna()`:
  # the read inside is the caller's frame, not the assignment it is part of).
  found, entry = callables.reaching_from_entry(program, module, fn, node, owner_module, owner)
  results = _parameter_origins(program, fn, name, path, depth) if entry else []
  for value, value_path in found:
    results += origins(program, owner_module, owner, value, tuple(value_path) + tuple(path), depth + 1)
  return results


def _parameter_origins(program, fn, name, path, depth):
  """What the scanned callers pass for parameter `name` of `fn` (and its default when a caller leaves it out)."""
  if isinstance(fn, ast.Lambda):
    return []
  results = []
  default = default_of(fn, name)
  for module, caller, _, value in program.callables.passed(fn, name, depth):
    if value is not None:
      results += origins(program, module, caller, value, path, depth + 1)
    elif default is not None:
      results.append(Value(program.module_of(fn), None, default))
  return results


def star_keyword(module, fn, call, name):
  """The expression a `**kwargs` dict gives the call's keyword `name` when the call's own function (or script)
  fills that dict (`keys = {}; keys['model_fn'] = build.model_fn; Estimator(**keys)`, `{'model_fn': ...}` or
  `dict(model_fn=...)`), else None: the last such assignment written before the call."""
  dicts = [kw.value.id for kw in call.keywords if kw.arg is None and isinstance(kw.value, ast.Name)]
  if not dicts:
    return None
  nodes = [node for node, _ in syntax.walk_local(fn)] if fn is not None else \
      [node for statement in module.tree.body if not isinstance(statement, syntax.FUNCTION_NODES + (ast.ClassDef,))
       for node in ast.walk(statement)]
  found = None
  for node in nodes:
    if not isinstance(node, ast.Assign) or node.lineno >= call.lineno:
      continue
    for target in node.targets:
      if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id in dicts and \
          syntax.subscript_key(target) == name:
        found = node.value
      elif isinstance(target, ast.Name) and target.id in dicts and isinstance(node.value, ast.Dict):
        for key, value in zip(node.value.keys, node.value.values):
          if key is not None and syntax.literal(key) == name:
            found = value
      elif isinstance(target, ast.Name) and target.id in dicts and isinstance(node.value, ast.Call) and \
          syntax.render(node.value.func) == 'dict' and syntax.keyword(node.value, name) is not None:
        found = syntax.keyword(node.value, name)
  return found


def keyword_given(module, fn, call, name):
  """A call's keyword `name`, else what a `**kwargs` dict the function fills gives it (star_keyword):
  `EstimatorSpec(**specs)`, `tf.train.batch(**batch_args)`."""
  given = syntax.keyword(call, name)
  return given if given is not None else star_keyword(module, fn, call, name)


def default_of(fn, name):
  """The default expression of parameter `name` of a def, or None."""
  args = fn.args
  positional = syntax.positional_names(fn)
  defaults = list(args.defaults)
  offset = len(positional) - len(defaults)
  if name in positional and positional.index(name) >= offset:
    return defaults[positional.index(name) - offset]
  for arg, value in zip(args.kwonlyargs, args.kw_defaults):
    if arg.arg == name:
      return value
  return None


def assignments(program, module, fn, name):
  """(value, path) of every assignment to `name` in a scope (reading.Program.assignments)."""
  return program.assignments(module, fn, name)


def _class_of(module, fn):
  """The class whose method `fn` is, or holds `fn` in its body (a def nested in a method sees that method's self)."""
  owner = module.parents.get(id(fn)) if fn is not None else None
  while owner is not None and not isinstance(owner, ast.ClassDef):
    owner = module.parents.get(id(owner))
  return owner


def _properties(module, fn, attribute):
  """The `@property` methods named `attribute` of the class whose method `fn` is."""
  owner = _class_of(module, fn)
  return [method for method in (owner.body if owner is not None else ())
          if isinstance(method, syntax.FUNCTION_NODES) and method.name == attribute and
          any(isinstance(d, ast.Name) and d.id == 'property' for d in method.decorator_list)]

