"""What a program stores in its dicts and lists: the values a dict display holds at a key, and those stored into a
container after it is made (`inputs[split] = make_input_fn(split)`, `hooks.append(hook)`).

Both values.origins (what an expression holds) and callables.resolve (what a callable expression stands for) read
`container[key]` through displayed_at and stored_at, so a callable picked out of a dict is found the same way as a
value.
"""
import ast

from estimator_tpu.porting.program import modules
from estimator_tpu.porting.program import syntax


def module_level(module):
  """Every node Python runs at module level (not inside defs or classes)."""
  return [n for s in modules.module_statements(module.tree) if not isinstance(s, syntax.SCOPE_NODES)
          for n in ast.walk(s)]


def stored_where_made(program, origin):
  """stored_into of the container an origin is (a display or a call that makes one) under the one name its
  statement assigns it in its own scope (`found = []` in the function that fills and returns it); [] when it is
  not assigned so."""
  statement = origin.module.parents.get(id(origin.node))
  if not (isinstance(statement, ast.Assign) and statement.value is origin.node and len(statement.targets) == 1 and
          isinstance(statement.targets[0], ast.Name)):
    return []
  return stored_into(program, origin.module, origin.fn, statement.targets[0].id)


def mutations(program, module, fn, name):
  """Values stored into `name` after it is made: `name['key'] = value`, `name.append(v)`, `name.extend(vs)`,
  `name += vs`, `name.update(...)`, as (kind, key or None, value) with kind 'item', 'element' or 'update'."""
  statements = module_level(module) if fn is None else [n for n, _ in syntax.walk_local(fn)]
  found = []
  for node in statements:
    if isinstance(node, ast.Assign):
      for target in node.targets:
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
          found.append(('item', target, node.value))
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
      found.append(('elements', None, node.value))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == name and node.args:
      kind = {'append': 'element', 'extend': 'elements', 'update': 'update', 'add_hparam': 'hparam'}.get(
          node.func.attr)
      if kind:
        found.append((kind, node, node.args[-1] if kind != 'hparam' else node.args[1:2] and node.args[1]))
  return found


def stored_into(program, module, fn, name):
  """(module, function, kind, where, value) of every mutation (above) of the container `name` read in `fn`, in the
  scope that binds it, and in the project functions that scope hands it to (`load_config(params)` filling
  `params['batch_size'] = 24`); [] when `name` is not a value assigned there."""
  kind, _, owner_module, owner = program.lookup(module, fn, name)
  if kind not in ('value', 'other'):
    return []
  return _stored(program, owner_module, owner, name, 0)


def _stored(program, module, fn, name, depth):
  found = [(module, fn, what, where, value) for what, where, value in mutations(program, module, fn, name)]
  if depth >= 2:
    return found
  statements = module_level(module) if fn is None else [n for n, _ in syntax.walk_local(fn)]
  for call in statements:
    if not (isinstance(call, ast.Call) and any(isinstance(argument, ast.Name) and argument.id == name
                                               for argument in call.args + [k.value for k in call.keywords])):
      continue
    for target in program.callables.called_defs(module, fn, call):
      for parameter, argument in program.callables.arguments(call, target.node).items():
        if isinstance(argument, ast.Name) and argument.id == name:
          found += _stored(program, target.module, target.node, parameter, depth + 1)
  return found


def assigned_name(module, node):
  """The ast.Name a value is assigned to, alone (`hooks = []`) or in a tuple (`features, labels = {}, {}`), else
  None."""
  statement = module.parents.get(id(node))
  if isinstance(statement, ast.Tuple):
    assign = module.parents.get(id(statement))
    if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and
            isinstance(assign.targets[0], ast.Tuple) and len(assign.targets[0].elts) == len(statement.elts)):
      return None
    target = assign.targets[0].elts[[id(e) for e in statement.elts].index(id(node))]
  else:
    target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
  return target if isinstance(target, ast.Name) else None


def displayed_at(display, key):
  """The values a dict display (`{'train': a, 'eval': b}`) holds at a literal key."""
  return [value for dict_key, value in zip(display.keys, display.values)
          if dict_key is not None and syntax.literal(dict_key) == key]


def stored_at(program, module, fn, subscript):
  """(module, function, value) of what the program stores into `name[...]` that `name[key]` (the subscript, read in
  `fn`) can read: items stored at that key, or at a key not written out (a loop's `inputs[split] = ...`), or any
  item when the read's key is not written out."""
  if not isinstance(subscript.value, ast.Name):
    return []
  key = syntax.subscript_key(subscript)
  found = []
  for owner_module, owner, what, where, value in stored_into(program, module, fn, subscript.value.id):
    if what != 'item':
      continue
    stored_key = syntax.subscript_key(where)
    if stored_key is syntax.NO_VALUE or key is syntax.NO_VALUE or stored_key == key:
      found.append((owner_module, owner, value))
  return found
