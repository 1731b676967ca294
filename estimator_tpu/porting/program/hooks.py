"""Which session hooks a program hands TPUEstimator, and whether they fetch tensors model_fn makes.

On a TPU, model_fn's tensors are built inside the TPU computation, and TensorFlow marks every op there unfetchable
(tensorflow/python/tpu/tpu.py, TPUReplicateContext.AddOp: graph.prevent_fetching): a LoggingTensorHook on the loss
fails with "Operation ... has been marked as not fetchable". TPUEstimator's docstring says hooks "must not capture
any TPU Tensor inside the model_fn". Hooks that work on the host (steps, checkpoints, eval results on disk) are fine,
and run between loops of iterations_per_loop steps.
"""
import ast
import collections

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import containers
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values

FETCHES, HOST, UNKNOWN, EVALUATES = 'fetches', 'host', 'unknown', 'evaluates'
# kind, the expression it was read from, and what it fetches or why it cannot be told.
Hook = collections.namedtuple('Hook', ['kind', 'where', 'detail'])


def hooks_in(program, module, fn, node, depth=0):
  """The Hooks a hooks= expression holds (a list, a name the code appends to, a function returning a list ...)."""
  found = []
  for origin in values.origins(program, module, fn, node):
    found += _expand(program, origin, depth)
  if isinstance(node, ast.Name):
    kind, _, owner_module, owner = program.lookup(module, fn, node.id)
    if kind in ('value', 'other'):
      found += _appended(program, owner_module, owner, node.id, depth)
  seen = set()
  return [hook for hook in found if not (id(hook.where.node) in seen or seen.add(id(hook.where.node)))]


def _appended(program, module, fn, name, depth):
  """The Hooks the code appends (or extends) to the list `name` of `fn`."""
  found = []
  for what, _, value in containers.mutations(program, module, fn, name):
    if what in ('element', 'elements'):
      found += hooks_in(program, module, fn, value, depth + 1) if what == 'elements' else \
          _expand_element(program, module, fn, value, depth + 1)
  return found


def _expand(program, origin, depth):
  module, fn, node = origin
  if depth > 4:
    return [Hook(UNKNOWN, origin, 'it is built through too many steps')]
  if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
    found = []
    for element in node.elts:
      found += _expand_element(program, module, fn, element.value if type(element).__name__ == 'Starred'
                               else element, depth + 1)
    target = containers.assigned_name(module, node) if isinstance(node, ast.List) else None
    if target is not None:
      # `hooks = []` then `hooks.append(...)` in a function whose list is returned (a hooks factory)
      found += _appended(program, module, fn, target.id, depth)
    return found
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    return (hooks_in(program, module, fn, node.left, depth + 1) +
            hooks_in(program, module, fn, node.right, depth + 1))
  if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
    return _expand_element(program, module, fn, node.elt, depth + 1)
  if syntax.is_literal(node):
    return []  # hooks=None
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ('list', 'tuple') and \
      node.args:
    return hooks_in(program, module, fn, node.args[0], depth + 1)
  return _classify(program, origin)


def _expand_element(program, module, fn, node, depth):
  found = []
  for origin in values.origins(program, module, fn, node):
    if isinstance(origin.node, (ast.List, ast.Tuple)):
      found += _expand(program, origin, depth)
    else:
      found += _classify(program, origin)
  return found


def _classify(program, origin):
  module, fn, node = origin
  if not isinstance(node, ast.Call):
    return [Hook(UNKNOWN, origin, '`%s` is only known at run time' % syntax.render(node))]
  canonical = program.canonical(module, fn, node.func)
  kind = apis.hook_kind(canonical)
  if kind == 'fetches':
    tensors = syntax.argument(node, 0, 'tensors')
    names = _literal_names(program, module, fn, tensors) if tensors is not None else None
    if names is not None and set(names) <= set(['global_step']):
      return [Hook(HOST, origin, 'the global step')]
    return [Hook(FETCHES, origin, '`%s`%s' % (syntax.render(node.func).replace('tensorflow.', 'tf.'),
                                              ' on %s' % ', '.join(repr(n) for n in names[:4]) if names else ''))]
  if kind == 'evaluates':
    return [Hook(EVALUATES, origin, '`%s`' % canonical.replace('tensorflow.', 'tf.', 1))]
  if kind == 'host' or (isinstance(node.func, ast.Attribute) and node.func.attr == 'make_session_run_hook'):
    return [Hook(HOST, origin, '')]
  found = program.callables.class_of(module, fn, node)
  if found is not None:
    # A hook class of the program: what it runs is its own business, unless it evaluates an estimator (early
    # stopping on a validation score), which on a TPU would run evaluation inside the training loop.
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == 'evaluate'
           for n in ast.walk(found[1])):
      return [Hook(EVALUATES, origin, '`%s`, which calls evaluate' % syntax.render(node.func))]
    given = _tensors_fetched(program, node, found)
    if given:
      return [Hook(FETCHES, origin, '`%s` given %s for its before_run to fetch' % (
          syntax.render(node.func), ', '.join(given[:4])))]
    return [Hook(HOST, origin, '')]
  tensor_arguments = [kw.arg for kw in node.keywords if kw.arg and 'tensor' in kw.arg.lower()]
  if tensor_arguments:
    return [Hook(FETCHES, origin, '`%s(%s=...)`, a hook maker given tensors to fetch' % (
        syntax.render(node.func), tensor_arguments[0]))]
  elsewhere = program.neighbours.left_out(canonical) if canonical else None
  reason = '`%s` %s' % (syntax.render(node.func), 'comes from %s' % elsewhere if elsewhere else
                        'is not defined in the scanned files')
  return [Hook(UNKNOWN, origin, reason)]


def _tensors_fetched(program, call, found):
  """The arguments of a construction of a program's hook class that its before_run fetches
  (`SessionRunArgs([self.pred_tensor, ...])`, self.pred_tensor set from an __init__ parameter), rendered."""
  runs = [program.callables.find_method(found[0], found[1], name) for name in ('before_run', 'after_run')]
  runs = [method for method in runs if method is not None]
  init = program.callables.find_method(found[0], found[1], '__init__')
  if not runs or init is None:
    return []
  parameters = set(syntax.positional_names(init[1]) + [a.arg for a in init[1].args.kwonlyargs])
  kept = {}  # attribute -> the __init__ parameter it holds (`self.op = op`, or `self.op = op,` a tuple of it)
  for node in ast.walk(init[1]):
    held = node.value.elts if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple) else \
        [node.value] if isinstance(node, ast.Assign) else []
    held = [value.id for value in held if isinstance(value, ast.Name) and value.id in parameters]
    for target in node.targets if held else ():
      if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == 'self':
        kept[target.attr] = held[0]
  fetched = []
  for node in (node for method in runs for node in ast.walk(method[1])):
    # what before_run hands the session (SessionRunArgs), or runs in it itself (`run_context.session.run(op)`)
    dotted = (syntax.dotted(node.func) or '') if isinstance(node, ast.Call) else ''
    fetches = syntax.argument(node, 0, 'fetches') if dotted.endswith(('SessionRunArgs', 'session.run')) else None
    for part in ast.walk(fetches) if fetches is not None else ():
      if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == 'self' and \
          part.attr in kept and kept[part.attr] not in fetched:
        fetched.append(kept[part.attr])
  bound = callables.arguments(call, init[1])
  # (`{} if use_tpu else dict(loss=loss)`: on a TPU the hook is given nothing to fetch)
  given = [syntax.on_tpu(bound[name]) for name in fetched if bound.get(name) is not None]
  return [syntax.render(node) for node in given if not syntax.is_literal(node) and not _empty(node)]


def _empty(node):
  """An empty container written out: `{}`, `[]`, `()`, `dict()`, `list()`."""
  if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
    return not (node.keys if isinstance(node, ast.Dict) else node.elts)
  return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
      node.func.id in ('dict', 'list', 'tuple', 'set') and not node.args and not node.keywords


def _literal_names(program, module, fn, node):
  """The string names in a `tensors=` dict or list, when they are literals; [] for tensors; None if unknown."""
  names = []
  for origin in values.origins(program, module, fn, node):
    if isinstance(origin.node, ast.Dict):
      items = origin.node.values
    elif isinstance(origin.node, (ast.List, ast.Tuple)):
      items = origin.node.elts
    else:
      return None
    for item in items:
      value = syntax.literal(item)
      names.append(value if isinstance(value, str) else syntax.render(item))
  if isinstance(node, ast.Name):  # a dict or list filled after it is made: log_tensors['lr'] = lr
    for _, _, kind, _, value in containers.stored_into(program, module, fn, node.id):
      literal = syntax.literal(value) if kind in ('item', 'element') else None
      names.append(literal if isinstance(literal, str) else syntax.render(value))
  return names


def named_for_fetching(program, target, depth=0, seen=None):
  """(module, node, name) of a `tf.identity(x, name='...')` whose result model_fn throws away: a tensor named only
  so that something outside model_fn (a hook) can fetch it by name. Looks two calls deep."""
  seen = set() if seen is None else seen
  if id(target.node) in seen:
    return None
  seen.add(id(target.node))
  for node, _ in syntax.walk_local(target.node):
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
      call = node.value
      if program.canonical(target.module, target.node, call.func) == 'tensorflow.identity':
        name = syntax.argument(call, 1, 'name')
        if name is not None and isinstance(syntax.literal(name), str):
          return target.module, call, syntax.literal(name)
    if isinstance(node, ast.Call) and depth < 2:
      for callee in program.callables.called_defs(target.module, target.node, node):
        found = named_for_fetching(program, callee, depth + 1, seen)
        if found:
          return found
  return None
