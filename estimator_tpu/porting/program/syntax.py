"""AST helpers that behave the same on Python 3.7 and 3.11.

3.7 parses literals as ast.Num / ast.Str / ast.NameConstant and wraps subscripts in ast.Index; 3.8+ uses
ast.Constant and (3.9+) puts the key right in `slice`. 3.7 has no ast.unparse and no end positions, so messages
render code with `render`, a small printer that gives the same text on both.
"""
import ast
import sys

# The literal node types 3.7's parser emits; 3.8+ emits ast.Constant only (the old names are deprecated there).
_LEGACY_LITERALS = ()
if sys.version_info < (3, 8):
  _LEGACY_LITERALS = (ast.Num, ast.Str, ast.Bytes, ast.NameConstant)

NO_VALUE = object()  # "not a literal", as distinct from the literal None

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
SCOPE_NODES = FUNCTION_NODES + (ast.ClassDef,)


def literal(node):
  """The value of a literal node (number, string, bytes, True/False/None; a signed number, `-1`), else NO_VALUE."""
  if isinstance(node, ast.Constant):
    return node.value
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
    value = literal(node.operand)
    if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
      return -value if isinstance(node.op, ast.USub) else value
    return NO_VALUE
  if _LEGACY_LITERALS and isinstance(node, _LEGACY_LITERALS):
    for field in ('n', 's', 'value'):
      if hasattr(node, field):
        return getattr(node, field)
  return NO_VALUE


def is_literal(node):
  return node is not None and literal(node) is not NO_VALUE


def literal_range(node):
  """The range a `range(...)` call of literal ints makes (`range(25, 30, 20)`), else None."""
  if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == 'range' and
          not node.keywords and 1 <= len(node.args) <= 3):
    return None
  bounds = [literal(arg) for arg in node.args]
  if not all(isinstance(bound, int) and not isinstance(bound, bool) for bound in bounds) or bounds[2:] == [0]:
    return None
  return range(*bounds)


def subscript_key(node):
  """The literal key of `x['key']` (or NO_VALUE)."""
  key = node.slice
  if type(key).__name__ == 'Index':  # 3.7/3.8
    key = key.value
  return literal(key)


def dotted(node):
  """'a.b.c' for a chain of names and attributes, else None."""
  parts = []
  while isinstance(node, ast.Attribute):
    parts.append(node.attr)
    node = node.value
  if not isinstance(node, ast.Name):
    return None
  parts.append(node.id)
  return '.'.join(reversed(parts))


def root_name(node):
  """The Name at the bottom of an attribute/subscript/call chain (`a` in a.b[0].c()), else None."""
  while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
    node = node.func if isinstance(node, ast.Call) else node.value
  return node.id if isinstance(node, ast.Name) else None


def render(node, depth=0):
  """Short source-like text of an expression, the same on every Python version; '...' for the rest."""
  if node is None:
    return ''
  if depth > 3:
    return '...'
  value = literal(node)
  if value is not NO_VALUE:
    return repr(value)
  if isinstance(node, ast.Name):
    return node.id
  if isinstance(node, ast.Attribute):
    return '%s.%s' % (render(node.value, depth + 1), node.attr)
  if isinstance(node, ast.Subscript):
    key = subscript_key(node)
    return '%s[%s]' % (render(node.value, depth + 1), '...' if key is NO_VALUE else repr(key))
  if isinstance(node, ast.Call):
    return '%s(...)' % render(node.func, depth + 1)
  if isinstance(node, ast.Lambda):
    return 'lambda'
  if isinstance(node, (ast.Tuple, ast.List)):
    inner = ', '.join(render(element, depth + 1) for element in node.elts[:4])
    return ('(%s)' if isinstance(node, ast.Tuple) else '[%s]') % inner
  if isinstance(node, ast.Dict):
    return '{...}'
  return '...'


def keyword(call, name):
  """The value of keyword argument `name` in a call, else None."""
  for kw in call.keywords:
    if kw.arg == name:
      return kw.value
  return None


def has_star_args(call):
  """True when *args or **kwargs hide what a call passes, so a missing argument cannot be told."""
  starred = any(type(arg).__name__ == 'Starred' for arg in call.args)
  return starred or any(kw.arg is None for kw in call.keywords)


def argument(call, position, name):
  """The argument passed by keyword `name` or at `position`, else None."""
  value = keyword(call, name)
  if value is not None:
    return value
  if position is not None and position < len(call.args) and type(call.args[position]).__name__ != 'Starred':
    return call.args[position]
  return None


def param_names(fn):
  """Every parameter name of a def or lambda, in order (positional-only ones too, on 3.8+)."""
  args = fn.args
  names = [a.arg for a in getattr(args, 'posonlyargs', [])] + [a.arg for a in args.args]
  if args.vararg:
    names.append(args.vararg.arg)
  names += [a.arg for a in args.kwonlyargs]
  if args.kwarg:
    names.append(args.kwarg.arg)
  return names


def positional_names(fn):
  args = fn.args
  return [a.arg for a in getattr(args, 'posonlyargs', [])] + [a.arg for a in args.args]


def body_of(fn):
  """The statements of a def, or the one expression of a lambda (as a list)."""
  return [fn.body] if isinstance(fn, ast.Lambda) else fn.body


def walk_local(fn):
  """Yields (node, conditions) for every node of a function's own code, not of the functions or classes it
  defines (those are yielded, but not entered). `conditions` lists the enclosing (if-test, in-body) pairs, so a
  caller can tell code that runs only under `if use_tpu:` from code that always runs."""
  stack = [(node, ()) for node in reversed(body_of(fn))]
  while stack:
    node, conditions = stack.pop()
    yield node, conditions
    if isinstance(node, SCOPE_NODES):
      continue
    children = []
    if isinstance(node, (ast.If, ast.IfExp)):
      children.append((node.test, conditions))
      inner = node.body if isinstance(node.body, list) else [node.body]
      outer = node.orelse if isinstance(node.orelse, list) else [node.orelse]
      children += [(child, conditions + ((node.test, True),)) for child in inner]
      children += [(child, conditions + ((node.test, False),)) for child in outer]
    else:
      children = [(child, conditions) for child in ast.iter_child_nodes(node)]
    stack.extend(reversed(children))


def names_in(node):
  """Every Name id used anywhere in an expression."""
  return set(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def plain_target(statement):
  """The name a statement `name = value` binds (one target, a plain name), else None."""
  if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
    return statement.targets[0].id
  return None


def assigned_names(target):
  """Names bound by an assignment target (a, (a, b), [a, *b])."""
  if isinstance(target, ast.Name):
    return [target.id]
  if isinstance(target, (ast.Tuple, ast.List)):
    names = []
    for element in target.elts:
      names += assigned_names(element.value if type(element).__name__ == 'Starred' else element)
    return names
  return []


def in_source_order(tree):
  """Every node of a tree, depth first, in the order the source writes them."""
  stack = [tree]
  while stack:
    node = stack.pop()
    yield node
    stack.extend(reversed(_children_in_source_order(node)))


def _children_in_source_order(node):
  if isinstance(node, ast.Dict):
    children = []
    for key, value in zip(node.keys, node.values):
      children += ([key] if key is not None else []) + [value]
    return children
  if isinstance(node, ast.IfExp):
    return [node.body, node.test, node.orelse]
  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
    children = list(ast.iter_child_nodes(node))
    decorators = [c for c in children if any(c is d for d in node.decorator_list)]
    return decorators + [c for c in children if not any(c is d for d in node.decorator_list)]
  return list(ast.iter_child_nodes(node))


def mentions_tpu(node):
  """True when an expression reads something named like use_tpu (a name, an attribute or a params key)."""
  for child in ast.walk(node):
    text = None
    if isinstance(child, ast.Name):
      text = child.id
    elif isinstance(child, ast.Attribute):
      text = child.attr
    else:
      value = literal(child)
      text = value if isinstance(value, str) else None
    if text and 'tpu' in text.lower():
      return True
  return False


def _branch_of(test, in_body):
  """'tpu', 'cpu' or None for one `if test:` branch."""
  negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
  inner = test.operand if negated else test
  if isinstance(inner, ast.BoolOp):
    # `if use_tpu and x:` still runs only on a TPU, and its else is the program's own way off it (the CPU, or a
    # part it keeps off the TPU); anything else about an and/or is unclear.
    tpu_and = isinstance(inner.op, ast.And) and not negated and \
        any(mentions_tpu(v) and not isinstance(v, ast.UnaryOp) for v in inner.values)
    if tpu_and:
      return 'tpu' if in_body else 'cpu'
    return None
  if isinstance(inner, ast.Compare):
    truth = _tpu_comparison(inner)
    if truth is None:
      return None
    return 'tpu' if in_body != (negated != (truth == 'cpu')) else 'cpu'
  if not mentions_tpu(inner):
    return None
  return 'tpu' if in_body != negated else 'cpu'


def _tpu_comparison(test):
  """'tpu' when a comparison holds only on a TPU, 'cpu' when only off it, else None: `tpu_name is not None` /
  `params['tpu'] != ''` (a TPU named), `... is None` / `== ''` (none named), `device == 'tpu'` / `!= 'tpu'`."""
  if len(test.ops) != 1:
    return None
  op, right = test.ops[0], literal(test.comparators[0])
  if isinstance(op, (ast.Is, ast.IsNot)) and right is None and mentions_tpu(test.left):
    return 'cpu' if isinstance(op, ast.Is) else 'tpu'
  if not isinstance(op, (ast.Eq, ast.NotEq)) or not isinstance(right, str):
    return None
  if right.lower() == 'tpu':
    return 'tpu' if isinstance(op, ast.Eq) else 'cpu'
  if right == '' and mentions_tpu(test.left):
    return 'cpu' if isinstance(op, ast.Eq) else 'tpu'
  return None


def on_tpu(node):
  """The part of `a if use_tpu else b` (nested as written) a TPU run takes; the expression itself otherwise."""
  while isinstance(node, ast.IfExp):
    branch = _branch_of(node.test, True)
    if branch is None:
      return node
    node = node.body if branch == 'tpu' else node.orelse
  return node


def tpu_branch(conditions):
  """'cpu' when code runs only off the TPU (under `if not use_tpu:` or the else of `if use_tpu:`), 'tpu' when
  only on it, None when it runs on both or static analysis cannot tell."""
  for test, in_body in reversed(conditions):
    branch = _branch_of(test, in_body)
    if branch:
      return branch
  return None


def branch_conditions(module, node):
  """The (test, in_body) of every `if` around `node` in its function (outermost first), as walk_local gives
  them."""
  found = []
  child, parent = node, module.parents.get(id(node))
  while parent is not None and not isinstance(parent, SCOPE_NODES):
    if isinstance(parent, ast.If) and child is not parent.test:
      found.append((parent.test, any(child is each for each in parent.body)))
    child, parent = parent, module.parents.get(id(parent))
  return tuple(reversed(found))
