"""Which modes (train, evaluate, predict) each piece of a model_fn runs in, read from its `mode` tests.

TPUEstimator calls model_fn once per mode, and a model_fn branches on `mode`: `if mode == ModeKeys.PREDICT:
return ...` makes the rest of the function TRAIN and EVAL only, `assert mode == ModeKeys.TRAIN` makes it TRAIN only,
`is_training = mode == ModeKeys.TRAIN; if is_training:` works as well. walk() yields every node of a function's own
code with the modes it can run in, so each check can ask whether that code runs in a mode the program runs on a
TPU (estimators.py works those out per estimator).
"""
import ast

from estimator_tpu.porting.program import syntax

TRAIN, EVAL, PREDICT = 'train', 'evaluate', 'predict'
EXPORT = 'export'  # export_saved_model: model_fn in PREDICT mode, on the CPU (and in TPU inference: no spec check)
ALL = frozenset([TRAIN, EVAL, PREDICT])
# ModeKeys constants (tf.estimator.ModeKeys, tf.contrib.learn.ModeKeys: INFER) and their string values.
_KEYS = {'TRAIN': TRAIN, 'EVAL': EVAL, 'PREDICT': PREDICT, 'INFER': PREDICT}
_VALUES = {'train': TRAIN, 'eval': EVAL, 'infer': PREDICT, 'predict': PREDICT}
MODE_NAMES = ('mode', 'modes', 'estimator_mode')


# The strings ModeKeys stand for (tf.estimator's and tf.contrib.learn's alike): what `mode == 'eval'` compares.
KEY_STRINGS = {'TRAIN': 'train', 'EVAL': 'eval', 'PREDICT': 'infer', 'INFER': 'infer'}


def key_string(node):
  """The string a ModeKeys constant stands for (`tf.estimator.ModeKeys.EVAL`: 'eval'), else None."""
  return KEY_STRINGS[node.attr] if isinstance(node, ast.Attribute) and node.attr in KEY_STRINGS and mode_key(node) \
      else None


def mode_key(node):
  """TRAIN/EVAL/PREDICT for `tf.estimator.ModeKeys.TRAIN`, `Modes.EVAL`, `ModeKeys.INFER`, 'train', else None."""
  if isinstance(node, ast.Attribute) and node.attr in _KEYS:
    base = syntax.dotted(node.value) or ''
    if 'mode' in base.lower():
      return _KEYS[node.attr]
  value = syntax.literal(node)
  return _VALUES.get(value) if isinstance(value, str) else None


def _is_mode(node, mode_names):
  """`mode`, or `self.mode` (`self._mode`) of a class the program builds with the estimator's mode."""
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == 'self':
    return node.attr.lstrip('_') in mode_names
  return isinstance(node, ast.Name) and node.id in mode_names


def _keys_of(node):
  """The set of modes a `(ModeKeys.TRAIN, ModeKeys.EVAL)` container (or one ModeKeys constant) names, else None."""
  if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
    keys = [mode_key(element) for element in node.elts]
    return set(keys) if keys and all(keys) else None
  if key_string(node):
    # `mode in ModeKeys.EVAL` tests a substring of 'eval': of 'train', 'eval' and 'infer' only 'eval' is one.
    return {mode_key(node)}
  return None


def split(test, modes, flags):
  """(modes where `test` is true, modes where it is false), each a subset of `modes`.

  `flags` maps local names to the test they were assigned (`is_training = mode == TRAIN`); a test that says
  nothing about the mode leaves both sides at `modes`.
  """
  modes = frozenset(modes)
  if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
    true, false = split(test.operand, modes, flags)
    return false, true
  if isinstance(test, ast.BoolOp):
    parts = [split(value, modes, flags) for value in test.values]
    trues, falses = [t for t, _ in parts], [f for _, f in parts]
    if isinstance(test.op, ast.And):
      return frozenset.intersection(*trues), frozenset.union(*falses)
    return frozenset.union(*trues), frozenset.intersection(*falses)
  if isinstance(test, ast.Name) and test.id in flags and test.id not in ('__mode_names__', '__keys__'):
    return split(flags[test.id], modes, flags)
  if isinstance(test, ast.Compare) and len(test.ops) == 1:
    left, op, right = test.left, test.ops[0], test.comparators[0]
    names = flags.get('__mode_names__', MODE_NAMES)
    if _is_mode(right, names) and not _is_mode(left, names):
      left, right = right, left
    if not _is_mode(left, names):
      return modes, modes
    if isinstance(op, (ast.Eq, ast.Is, ast.NotEq, ast.IsNot)):
      key = mode_key(right) or _alias(right, flags)
      if key is None:
        return modes, modes
      chosen = modes & frozenset([key])
    elif isinstance(op, (ast.In, ast.NotIn)):
      keys = _keys_of(right)
      if keys is None:
        return modes, modes
      chosen = modes & frozenset(keys)
    else:
      return modes, modes
    if isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn)):
      return modes - chosen, chosen
    return chosen, modes - chosen
  return modes, modes


def _alias(node, flags):
  """The mode a local name stands for (`PREDICT = tf.estimator.ModeKeys.PREDICT` in model_fn), else None."""
  return flags.get('__keys__', {}).get(node.id) if isinstance(node, ast.Name) else None


def mode_flags(fn, mode_names=MODE_NAMES):
  """{name: test} for local booleans assigned from a mode test (`training = (mode == ModeKeys.TRAIN)`), and under
  '__keys__' the local names of ModeKeys constants (`PREDICT = tf.estimator.ModeKeys.PREDICT`)."""
  flags = {'__mode_names__': mode_names, '__keys__': {}}
  for node, _ in syntax.walk_local(fn):
    name = syntax.plain_target(node)
    if name:
      value = node.value
      if isinstance(value, ast.Attribute) and mode_key(value) and name not in mode_names:
        flags['__keys__'][name] = mode_key(value)
      elif isinstance(value, ast.Compare) and split(value, ALL, flags) != (ALL, ALL):
        flags[name] = value
  return flags


def walk(fn, modes, mode_names=MODE_NAMES):
  """Yields (node, conditions, modes) for every node of a function's own code (not of the functions and classes
  it defines), `conditions` as syntax.walk_local gives them, `modes` the modes that node can run in (a frozenset,
  empty for code no mode reaches)."""
  flags = mode_flags(fn, mode_names)
  body = syntax.body_of(fn)
  if isinstance(fn, ast.Lambda):
    for item in _walk_expression(fn.body, (), frozenset(modes), flags):
      yield item
    return
  walker = _walk_block(body, (), frozenset(modes), flags)
  for item in walker:
    yield item


def _walk_block(statements, conditions, modes, flags):
  for statement in statements:
    if isinstance(statement, ast.If):
      yield statement, conditions, modes
      for item in _walk_expression(statement.test, conditions, modes, flags):
        yield item
      true, false = split(statement.test, modes, flags)
      after = frozenset()
      for branch, branch_modes, in_body in ((statement.body, true, True), (statement.orelse, false, False)):
        for item in _walk_block(branch, conditions + ((statement.test, in_body),), branch_modes, flags):
          yield item
        if not _ends(branch):
          after |= branch_modes
      modes = after
    elif isinstance(statement, ast.Assert):
      yield statement, conditions, modes
      for item in _walk_expression(statement.test, conditions, modes, flags):
        yield item
      modes = split(statement.test, modes, flags)[0]
    elif isinstance(statement, syntax.SCOPE_NODES):
      yield statement, conditions, modes
    elif isinstance(statement, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
      yield statement, conditions, modes
      heads = [getattr(statement, name, None) for name in ('target', 'iter', 'test')]
      heads += [part for item in getattr(statement, 'items', []) for part in (item.context_expr, item.optional_vars)]
      for head in heads:
        if head is not None:
          for item in _walk_expression(head, conditions, modes, flags):
            yield item
      blocks = [statement.body, getattr(statement, 'orelse', []), getattr(statement, 'finalbody', [])]
      blocks += [handler.body for handler in getattr(statement, 'handlers', [])]
      for block in blocks:
        for item in _walk_block(block, conditions, modes, flags):
          yield item
      if isinstance(statement, (ast.With, ast.AsyncWith)) and _ends(statement.body):
        modes = frozenset()
    else:
      for item in _walk_expression(statement, conditions, modes, flags):
        yield item
      if isinstance(statement, (ast.Return, ast.Raise)):
        modes = frozenset()


def _ends(statements):
  """True when a block always leaves the function (its last statement returns or raises, or is an if whose
  branches all do)."""
  if not statements:
    return False
  last = statements[-1]
  if isinstance(last, (ast.Return, ast.Raise)):
    return True
  if isinstance(last, ast.If):
    return _ends(last.body) and _ends(last.orelse)
  return False


def _walk_expression(node, conditions, modes, flags):
  """The node and everything under it, refining the modes under `a if test else b`; defs, lambdas and classes are
  yielded but not entered."""
  stack = [(node, conditions, modes)]
  while stack:
    current, current_conditions, current_modes = stack.pop()
    yield current, current_conditions, current_modes
    if isinstance(current, syntax.SCOPE_NODES):
      continue
    if isinstance(current, ast.IfExp):
      true, false = split(current.test, current_modes, flags)
      stack.append((current.orelse, current_conditions + ((current.test, False),), false))
      stack.append((current.body, current_conditions + ((current.test, True),), true))
      stack.append((current.test, current_conditions, current_modes))
      continue
    for child in reversed(list(ast.iter_child_nodes(current))):
      stack.append((child, current_conditions, current_modes))
