"""Feature columns that look strings up or hash them, wherever the program builds them.

A vocabulary column (categorical_column_with_vocabulary_list/_file), a hash bucket or a crossed column turns strings
into ids with a lookup table or a string hash, inside the model that applies it (input_layer in a model_fn, or a
premade estimator): on a TPU that is inside the TPU computation, which has no strings and cannot compile tables
(tests/porting/report/test_report_facts.py). The columns are usually built far from where they are applied: in
main(), in a `build_model_columns()` helper, in a module-level list, or handed over in params['feature_columns'].
"""
import ast

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import containers
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values

MAX_DEPTH = 6


def string_columns(program, module, fn, node, params=None):
  """(module, call, short name) of every string column an expression of columns can hold. `params` (a
  params.Params) resolves params['feature_columns'] inside a model_fn."""
  return matching(program, module, fn, node, _is_string_column, params)


def id_columns(program, module, fn, node, params=None):
  """(module, call, short name) of every categorical column over integer ids an expression of columns can hold:
  an identity column, and a vocabulary or crossed column whose inputs are numbers (no strings)."""
  return matching(program, module, fn, node, _is_id_column, params)


def _is_string_column(program, module, fn, call, canonical):
  return apis.is_string_column(canonical) and not _over_numbers(program, module, fn, call, canonical)


def _is_id_column(program, module, fn, call, canonical):
  return apis.is_id_column(canonical) or (apis.is_string_column(canonical) and
                                          _over_numbers(program, module, fn, call, canonical))


# The keywords a wrapping column takes its columns by (tf.feature_column's categorical_column(s); contrib.layers'
# sparse_id_column(s): embedding_column, one_hot_column, weighted_sparse_column, shared_embedding_columns).
WRAPPED_KEYWORDS = ('categorical_column', 'categorical_columns', 'sparse_id_column', 'sparse_id_columns')
# Where a vocabulary column's vocabulary (its dtype) is passed: (position, keyword).
_VOCABULARY = {'categorical_column_with_vocabulary_list': ((1, 'vocabulary_list'), (2, 'dtype')),
               'sparse_column_with_keys': ((1, 'keys'), (4, 'dtype'))}


def _over_numbers(program, module, fn, call, canonical):
  """Whether a vocabulary or crossed column takes numbers, not strings: a vocabulary list of integers (or an
  integer dtype=), a cross of bucketized, identity or integer-vocabulary columns and of features the program also
  reads as numeric_column. Inside the model it still makes SparseTensors with a one-argument where and looks ids
  up (rule 4), but no string enters the TPU."""
  name = apis.last(canonical)
  if name in _VOCABULARY:
    (vocabulary_at, vocabulary_name), (dtype_at, dtype_name) = _VOCABULARY[name]
    dtype = syntax.argument(call, dtype_at, dtype_name)
    if dtype is not None:
      for origin in values.origins(program, module, fn, dtype):
        named = program.canonical(origin.module, origin.fn, origin.node) or ''
        if named.startswith('tensorflow.') and apis.last(named) in ('int8', 'int16', 'int32', 'int64'):
          return True
    vocabulary = syntax.argument(call, vocabulary_at, vocabulary_name)
    for origin in values.origins(program, module, fn, vocabulary) if vocabulary is not None else ():
      items = [syntax.literal(item) for item in getattr(origin.node, 'elts', ())]
      if items and all(isinstance(item, int) and not isinstance(item, bool) for item in items):
        return True
    return False
  if name != 'crossed_column':
    return False
  keys = syntax.argument(call, 0, 'keys')
  elements = []
  for origin in values.origins(program, module, fn, keys) if keys is not None else ():
    if not isinstance(origin.node, (ast.List, ast.Tuple)):
      return False
    elements += [(origin.module, origin.fn, element) for element in origin.node.elts]
  if not elements:
    return False
  for key_module, key_fn, element in elements:
    key = syntax.literal(element)
    if isinstance(key, str):
      if key not in _numeric_features(program):
        return False
    elif not matching(program, key_module, key_fn, element, _numeric_column):
      return False
  return True


def _numeric_column(program, module, fn, call, canonical):
  return apis.is_tf(canonical) and apis.last(canonical) in (
      'bucketized_column', 'categorical_column_with_identity', 'sparse_column_with_integerized_feature') or \
      (apis.is_string_column(canonical) and apis.last(canonical) != 'crossed_column' and
       _over_numbers(program, module, fn, call, canonical))


_INTEGER_ID_COLUMNS = ('categorical_column_with_identity', 'categorical_column_with_vocabulary_list',
                       'categorical_column_with_vocabulary_file')


def _numeric_features(program):
  """The feature keys the program reads as numbers (literal keys): with numeric_column / real_valued_column(key,
  ...), or as the integer ids of an identity column or a vocabulary column over numbers (a crossed column of
  that raw key crosses those numbers)."""
  if 'numeric_features' not in program.memo:
    program.memo['numeric_features'] = set()  # (asked again while it is answered: the keys found so far)
    keys = set()
    for module, caller, call in program.calls():
      canonical = program.canonical(module, caller, call.func) or ''
      name = apis.last(canonical) if apis.is_tf(canonical) else None
      if name in ('numeric_column', 'real_valued_column') or (name in _INTEGER_ID_COLUMNS and _numeric_column(
          program, module, caller, call, canonical)):
        key = syntax.argument(call, 0, 'key') or syntax.argument(call, 0, 'column_name')
        if isinstance(syntax.literal(key) if key is not None else None, str):
          keys.add(syntax.literal(key))
    program.memo['numeric_features'] = keys
  return program.memo['numeric_features']


def matching(program, module, fn, node, predicate, params=None, depth=0):
  """(module, call, short name) of every column whose constructor `predicate(program, module, fn, call, canonical
  name)` accepts. Read once per expression, scope, question and depth left (a program's column lists are asked
  about by every estimator and input_layer that takes them)."""
  if depth > MAX_DEPTH:
    return []
  memo = program.memo.setdefault('column_matching', {})
  key = (id(node), id(fn), predicate, id(params), depth)
  if key not in memo:
    memo[key] = _matching(program, module, fn, node, predicate, params, depth)
  return memo[key]


def _matching(program, module, fn, node, predicate, params, depth):
  found = []
  # A container filled after it is made: `columns = []` then `columns.append(...)` or `columns['age'] = ...`, also
  # in the function that fills and returns it (`found = []`, `found.append(...)`, `return found`).
  stored = _stored_into(program, module, fn, node.id) if isinstance(node, ast.Name) else []
  for origin in values.origins(program, module, fn, node):
    found += _from_origin(program, origin, predicate, params, depth)
    if isinstance(origin.node, (ast.List, ast.Dict)):
      stored += [(where_module, where_fn, value) for where_module, where_fn, _, _, value in
                 containers.stored_where_made(program, origin) if value is not None]
  seen = set()
  for owner_module, owner, value in stored:
    if id(value) not in seen:
      seen.add(id(value))
      found += matching(program, owner_module, owner, value, predicate, params, depth + 1)
  unique = []
  for item in found:
    if all(item[1] is not other[1] for other in unique):
      unique.append(item)
  return unique


def _from_origin(program, origin, predicate, params, depth):
  module, fn, node = origin
  inner = []
  if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
    for element in node.elts:
      inner.append(element.value if type(element).__name__ == 'Starred' else element)
  elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    inner += [node.left, node.right]
  elif isinstance(node, ast.Dict):
    inner += [value for value in node.values if value is not None]
  elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
    # The element, and what the loops run over: `[embedding_column(c, 8) for c in hashed]` wraps hashed's columns.
    inner.append(node.elt)
    inner += [generator.iter for generator in node.generators]
  elif isinstance(node, ast.Subscript) and (params is None or not _params_key(node)):
    return _items(program, module, fn, node, predicate, params, depth)
  elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'values' and \
      not node.args:
    inner.append(node.func.value)
  elif isinstance(node, ast.Call):
    canonical = program.canonical(module, fn, node.func) or ''
    if predicate(program, module, fn, node, canonical):
      return [(module, node, apis.last(canonical))]
    if apis.is_wrapping_column(canonical):
      inner += list(node.args[:1]) + [kw.value for kw in node.keywords if kw.arg in WRAPPED_KEYWORDS]
    elif isinstance(node.func, ast.Name) and node.func.id in ('list', 'tuple', 'sorted') and node.args:
      inner.append(node.args[0])
    elif isinstance(node.func, ast.Name) and node.func.id == 'dict':
      # `dict([(name, column) ...] + [...])`, `dict(age=column)`: the pairs' columns
      inner += list(node.args[:1]) + [kw.value for kw in node.keywords if kw.arg is not None]
  elif params is not None:
    key = _params_key(node)
    if key:
      found = []
      for value in params.values_of(key):
        found += matching(program, value.module, value.fn, value.node, predicate, None, depth + 1)
      return found
  # The parts of a container written out (a list, a sum of lists, a dict, a comprehension's element) are smaller
  # expressions of the same statement: reading them costs no depth, unless they are names (followed to what they
  # hold, which may be this container again); a column that wraps another costs one.
  written = not (isinstance(node, ast.Call) and not isinstance(node.func, ast.Name))
  found = []
  for child in inner:
    step = 0 if written and not isinstance(child, ast.Name) else 1
    found += matching(program, module, fn, child, predicate, params, depth + step)
  return found


def _stored_into(program, module, fn, name):
  """(module, fn, value) of everything stored into the container `name` after it is made (containers.stored_into)."""
  stored = containers.stored_into(program, module, fn, name)
  return [(owner_module, owner, value) for owner_module, owner, _, _, value in stored if value is not None]


def _items(program, module, fn, node, predicate, params, depth):
  """String columns `container[key]` can hold: the entry under a literal key where the container is a dict literal
  with literal keys, else any entry of the container, and what is stored into it later."""
  key = syntax.subscript_key(node)
  found = []
  for origin in values.origins(program, module, fn, node.value, depth=depth + 1):
    entries = [origin.node]
    if isinstance(origin.node, ast.Dict) and isinstance(key, str) and \
        all(isinstance(syntax.literal(k), str) for k in origin.node.keys if k is not None):
      entries = [v for k, v in zip(origin.node.keys, origin.node.values) if syntax.literal(k) == key]
    for entry in entries:
      found += matching(program, origin.module, origin.fn, entry, predicate, params, depth + 1)
  if isinstance(node.value, ast.Name):
    for owner_module, owner, value in _stored_into(program, module, fn, node.value.id):
      found += matching(program, owner_module, owner, value, predicate, params, depth + 1)
  return found


def _params_key(node):
  if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == 'params':
    key = syntax.subscript_key(node)
    return key if isinstance(key, str) else None
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == 'params':
    return node.attr
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get' and \
      isinstance(node.func.value, ast.Name) and node.func.value.id == 'params' and node.args:
    key = syntax.literal(node.args[0])
    return key if isinstance(key, str) else None
  return None


def describe(found, limit=3):
  """'education at census.py:98, occupation at census.py:120, ... (5 in all)' for a message."""
  parts = []
  for module, call, name in found[:limit]:
    key = syntax.literal(syntax.argument(call, 0, 'key')) if syntax.argument(call, 0, 'key') is not None else None
    label = '%s(%r)' % (name, key) if isinstance(key, str) else name
    parts.append('%s at %s:%d' % (label, module.path, call.lineno))
  more = ' ... (%d in all)' % len(found) if len(found) > limit else ''
  return ', '.join(parts) + more
