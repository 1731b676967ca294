"""What the data an input hands TensorFlow is made of, followed back to where the program read it.

The TPU infeed takes bool, int32, int64, bfloat16, float32, complex64 and uint32 (TF 2.x also uint8 and int8;
tensorflow/python/tpu/ops/tpu_ops.py, _SUPPORTED_INFEED_DTYPES), never float64 or strings. In-memory data decides
its own dtype: pandas reads every column with a decimal point or a missing value as float64 and text as strings
(unless `dtype=` says otherwise), NumPy's loadtxt/genfromtxt read float64, and the TensorFlow tutorials' MNIST reader
gives uint8 labels (float64 with one_hot=True). A cast on the host (astype, dtype=) settles it.
"""
import ast

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import containers
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values

FLOAT64, UINT8, STRINGS = 'float64', 'uint8', 'strings'
MAX_DEPTH = 8
# Methods that return (part of) the same pandas frame or NumPy array, with the same dtypes.
_SAME_DATA = ('pop', 'sample', 'drop', 'dropna', 'copy', 'head', 'tail', 'fillna', 'reset_index', 'to_numpy',
              'as_matrix', 'get', 'reindex', 'query', 'filter', 'reshape', 'squeeze', 'transpose', 'take', 'split')
_FLOAT64_TYPES = ('float', 'numpy.float64', 'numpy.double', 'float64', 'double', 'numpy.float_')
_STRING_TYPES = ('str', 'object', 'numpy.str_', 'numpy.object_', 'unicode', 'string')


def dtype_problems(program, module, fn, node):
  """[(kind, origin Value, detail)] for float64, uint8 or string data an expression can hold (one per kind)."""
  found = {}
  for kind, origin, detail in _sources(program, module, fn, node, 0):
    found.setdefault(kind, (kind, origin, detail))
  return [found[kind] for kind in (STRINGS, FLOAT64, UINT8) if kind in found]


def array_problems(program, module, fn, node):
  """dtype_problems of data that NumPy makes an array of first (contrib.learn's data feeder: check_array), where
  a list of Python floats written in the program becomes float64 too."""
  found = dtype_problems(program, module, fn, node)
  if not any(kind == FLOAT64 for kind, _, _ in found):
    for origin in values.origins(program, module, fn, node):
      if _float_literals(origin.node):
        found.append((FLOAT64, origin, 'NumPy makes an array of Python floats float64'))
        break
  return found


def message(kind, what, origin, detail, infeed_dtypes):
  """The finding's words; `what` is the expression, or a list of the arguments that hold the data."""
  where = '%s:%d' % (origin.module.path, origin.node.lineno)
  names = what if isinstance(what, list) else [what]
  named = ' and '.join('`%s`' % name for name in names)
  holds = named + (' hold' if len(names) > 1 else ' holds')
  if kind == STRINGS:
    return ('%s strings (%s, %s): the TPU infeed takes no strings (it takes %s) -> turn the strings of %s into '
            'integer ids on the host (a vocabulary lookup in input_fn) and feed the ids.' % (
                holds, detail, where, infeed_dtypes, named))
  if kind == UINT8:
    return ('%s uint8 data (%s, %s): TensorFlow 1.15\'s TPU infeed refuses uint8 (it takes %s) -> cast %s on '
            'the host, e.g. .astype(np.int32) for labels; a cast inside model_fn is on the TPU, too late.'
            % (holds, detail, where, infeed_dtypes, named))
  if detail.startswith('pd.'):
    # A frame: astype(np.float32) of a frame with string columns raises; only its float64 columns are cast.
    return ('%s float64 data (%s, %s): the TPU infeed refuses float64 (it takes %s) -> cast the frame\'s float64 '
            'columns to float32 on the host (frame.astype({name: \'float32\' for name in '
            'frame.select_dtypes(\'float64\')}), or dtype= when reading); string columns are not cast (what they '
            'need is a change of its own); a cast inside model_fn is on the TPU, too late.'
            % (holds, detail, where, infeed_dtypes))
  return ('%s float64 data (%s, %s): the TPU infeed refuses float64 (it takes %s) -> cast %s to float32 on '
          'the host (.astype(np.float32), or dtype= when reading); a cast inside model_fn is on the TPU, too late.'
          % (holds, detail, where, infeed_dtypes, named))


def _sources(program, module, fn, node, depth):
  if depth > MAX_DEPTH:
    return []
  found = []
  for origin in values.origins(program, module, fn, node):
    found += _source(program, origin, depth)
  return found


def _source(program, origin, depth):
  module, fn, node = origin
  if string_literals(node):
    return [(STRINGS, origin, 'Python strings')]
  if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
    return [s for element in node.elts for s in _sources(program, module, fn, element, depth + 1)]
  if isinstance(node, ast.BinOp):  # [lines] * 4, labels % 10, a + b: the arrays' dtypes
    found = (_sources(program, module, fn, node.left, depth + 1) +
             _sources(program, module, fn, node.right, depth + 1))
    if isinstance(node.op, ast.Div) or any(isinstance(syntax.literal(side), float) for side in (node.left, node.right)):
      # NumPy: uint8 pixels / 255.0 (or / 255, or * 1.0) are float64
      found = [(FLOAT64, origin, 'uint8 data %s a number is float64 in NumPy' % (
          '/' if isinstance(node.op, ast.Div) else 'with')) if kind == UINT8 else (kind, where, detail)
               for kind, where, detail in found]
      if not found and any(_array_of_python_values(program, module, fn, side) for side in (node.left, node.right)):
        found = [(FLOAT64, origin, 'np.array of Python numbers (int64 or float64) %s a number is float64' % (
            '/' if isinstance(node.op, ast.Div) else 'with'))]
    return found
  if isinstance(node, ast.Dict):
    return [s for value in node.values for s in _sources(program, module, fn, value, depth + 1)]
  if isinstance(node, ast.Subscript):
    written = _column_writes(program, module, fn, node)
    if written:  # df['label'] = (...).astype(int): the column the program writes has the dtype it writes
      return [s for where, inside, value in written for s in _sources(program, where, inside, value, depth + 1)]
    return _sources(program, module, fn, node.value, depth + 1)
  if isinstance(node, ast.Attribute):
    return _attribute_source(program, origin, depth)
  if not isinstance(node, ast.Call):
    return []
  canonical = program.canonical(module, fn, node.func) or ''
  name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, 'id', '')
  cast_to = node.args[0] if name == 'astype' and node.args else (
      syntax.argument(node, 1, 'dtype') if canonical in ('numpy.array', 'numpy.asarray') else
      syntax.keyword(node, 'dtype') if canonical not in apis.PANDAS_READERS else None)
  if cast_to is not None:  # a cast: to uint8 or float64 is where that dtype comes from, to anything else settles it
    return _cast_sources(program, module, fn, cast_to, origin)
  if canonical in apis.PANDAS_READERS:
    return _pandas_source(program, origin)
  if canonical in apis.NUMPY_FLOAT_READERS:
    return [(FLOAT64, origin, '`%s` reads float64' % apis.last(canonical))]
  if apis.is_mnist_reader(canonical):
    return []  # the data sets object itself; its .labels are judged in _attribute_source
  if apis.is_keras_image_dataset(canonical):
    return [(UINT8, origin, '`%s` gives uint8 images and labels' % canonical.replace('tensorflow.', 'tf.', 1))]
  if isinstance(node.func, ast.Attribute) and name in ('transform', 'fit_transform') and any(
      isinstance(o.node, ast.Call) and apis.is_sklearn_scaler(program.canonical(o.module, o.fn, o.node.func))
      for o in values.origins(program, module, fn, node.func.value)):
    return [(FLOAT64, origin, 'scikit-learn\'s scalers return float64')]
  if canonical == 'pandas.DataFrame' and node.args:  # a frame of an array keeps its dtype
    return _sources(program, module, fn, node.args[0], depth + 1)
  if canonical in apis.SPLITTERS:  # train_test_split(X, y): its parts keep the arrays' dtypes
    return [s for argument in node.args for s in _sources(program, module, fn, argument, depth + 1)]
  if not canonical and name in ('dict', 'list', 'tuple') and node.args:
    return _sources(program, module, fn, node.args[0], depth + 1)
  if not canonical and name == 'dict':
    return [s for kw in node.keywords for s in _sources(program, module, fn, kw.value, depth + 1)]
  if canonical in apis.NUMPY_FLOAT64_MAKERS and not (
      apis.NUMPY_FLOAT64_MAKERS[canonical] is not None and len(node.args) > apis.NUMPY_FLOAT64_MAKERS[canonical]):
    return [(FLOAT64, origin, '`%s` makes float64' % canonical.replace('numpy.', 'np.', 1))]
  if canonical in ('numpy.array', 'numpy.asarray') and node.args and _float_literals(node.args[0]):
    return [(FLOAT64, origin, 'NumPy makes an array of Python floats float64')]
  if canonical in ('numpy.array', 'numpy.asarray', 'numpy.concatenate', 'numpy.stack', 'numpy.vstack',
                   'numpy.reshape', 'numpy.squeeze', 'numpy.transpose', 'numpy.expand_dims') and node.args:
    return _sources(program, module, fn, node.args[0], depth + 1)
  if isinstance(node.func, ast.Attribute) and name in _SAME_DATA and not apis.is_tf(canonical):
    return _sources(program, module, fn, node.func.value, depth + 1)
  return []


def _column_writes(program, module, fn, node):
  """(module, function, value) of every `frame[key] = value` the program writes into the frame a read `frame[key]`
  reads (the same origins: `df_train[LABEL] = ...` for a `df[LABEL]` of an input_fn given df_train), its key a
  string (written, or a constant that holds one); [] when no statement writes that key there."""
  key = _string_key(program, module, fn, node)
  if key is None:
    return []
  read = set(id(origin.node) for origin in values.origins(program, module, fn, node.value))
  if 'column_writes' not in program.memo:
    writes = {}
    for where in program.modules:
      for statement in ast.walk(where.tree):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
            isinstance(statement.targets[0], ast.Subscript):
          inside = program.enclosing_function(where, statement)
          written = _string_key(program, where, inside, statement.targets[0])
          if written is not None:
            writes.setdefault(written, []).append((where, inside, statement))
    program.memo['column_writes'] = writes
  return [(where, inside, statement.value) for where, inside, statement in program.memo['column_writes'].get(key, [])
          if read & set(id(origin.node) for origin in values.origins(program, where, inside,
                                                                      statement.targets[0].value))]


def _string_key(program, module, fn, subscript):
  """The string key of `x['key']` or `x[KEY]` (KEY a name bound to one string), else None."""
  key = syntax.subscript_key(subscript)
  if isinstance(key, str):
    return key
  index = subscript.slice.value if type(subscript.slice).__name__ == 'Index' else subscript.slice
  if isinstance(index, ast.Name):
    found = values.origins(program, module, fn, index)
    literals = set(syntax.literal(origin.node) for origin in found)
    if len(literals) == 1:
      literal = literals.pop()
      return literal if isinstance(literal, str) else None
  return None


def _cast_sources(program, module, fn, cast_to, origin):
  """The dtype a cast (astype(T), dtype=T) gives the array `origin` makes: uint8 or float64 come from here, any other
  settles it ([])."""
  target = program.canonical(module, fn, cast_to) if isinstance(cast_to, (ast.Name, ast.Attribute)) else \
      syntax.literal(cast_to)
  if target is None and isinstance(cast_to, ast.Name) and program.lookup(module, fn, cast_to.id)[0] is None:
    target = cast_to.id  # a builtin type: dtype=float is float64 in NumPy, dtype=int int64
  if target in apis.UINT8_NAMES or target == 'uint8':
    return [(UINT8, origin, 'made uint8 here')]
  if target in apis.HOST_FLOAT64_NAMES or target in ('float64', 'float', 'numpy.float', 'numpy.float_'):
    return [(FLOAT64, origin, 'made float64 here')]  # np.float: NumPy's old alias of Python's float
  return []


def _array_of_python_values(program, module, fn, node):
  """`np.array(x)` without a dtype, x Python values: a list or comprehension written here, or what a call of a
  library outside NumPy, TensorFlow and pandas returns (a loader's lists: python-mnist's load_training). NumPy makes
  such numbers int64 or float64, never float32, and either divided by a number is float64."""
  if not (isinstance(node, ast.Call) and node.args and syntax.keyword(node, 'dtype') is None and len(node.args) == 1
          and program.canonical(module, fn, node.func) in ('numpy.array', 'numpy.asarray')):
    return False
  found = values.origins(program, module, fn, node.args[0])
  for origin in found:
    if isinstance(origin.node, (ast.List, ast.ListComp, ast.Tuple)):
      continue
    if not isinstance(origin.node, ast.Call):
      return False
    canonical = program.canonical(origin.module, origin.fn, origin.node.func) or ''
    if canonical.startswith(('numpy', 'tensorflow', 'pandas', 'h5py', 'scipy', 'sklearn', 'PIL', 'cv2')) or \
        program.callables.called_defs(origin.module, origin.fn, origin.node) or \
        not isinstance(origin.node.func, ast.Attribute):
      return False
  return bool(found)


def _float_literals(node):
  """Whether a literal list or tuple (nested) holds a Python float: NumPy makes the whole array float64."""
  if not isinstance(node, (ast.List, ast.Tuple)):
    return False
  return any(isinstance(syntax.literal(e), float) or _float_literals(e) for e in node.elts)


def _attribute_source(program, origin, depth):
  module, fn, node = origin
  if node.attr == 'values':
    return _sources(program, module, fn, node.value, depth + 1)
  if node.attr in apis.CSV_DATASET_DTYPES:
    for inner in values.origins(program, module, fn, _chain_root(node)):
      if isinstance(inner.node, ast.Call) and program.canonical(
          inner.module, inner.fn, inner.node.func) in apis.CSV_DATASET_LOADERS:
        dtype = syntax.argument(inner.node, *apis.CSV_DATASET_DTYPES[node.attr])
        # the loader's dtype argument makes the array's dtype, as a cast does
        return _cast_sources(program, inner.module, inner.fn, dtype, inner) \
            if dtype is not None else []
  if node.attr in ('data', 'images'):
    for inner in values.origins(program, module, fn, _chain_root(node)):
      if isinstance(inner.node, ast.Call) and apis.is_sklearn_loader(
          program.canonical(inner.module, inner.fn, inner.node.func)):
        return [(FLOAT64, origin, 'scikit-learn\'s %s() .%s are float64' % (
            apis.last(program.canonical(inner.module, inner.fn, inner.node.func)), node.attr))]
  if node.attr in ('data', 'target'):
    for inner in values.origins(program, module, fn, _chain_root(node)):
      loader = program.canonical(inner.module, inner.fn, inner.node.func) if isinstance(inner.node, ast.Call) else None
      if loader in apis.CONTRIB_TOY_LOADERS:
        name = syntax.literal(syntax.argument(inner.node, 0, 'name')) if loader.endswith('load_dataset') else \
            apis.last(loader)[len('load_'):]
        if node.attr == 'data' or name == 'boston':
          return [(FLOAT64, origin, 'contrib.learn\'s %s .%s is float64' % (name or 'toy dataset', node.attr))]
  if node.attr not in ('labels', 'images'):
    return []
  for inner in _root_origins(program, module, fn, _chain_root(node)):
    if isinstance(inner.node, ast.Call) and apis.is_mnist_reader(
        program.canonical(inner.module, inner.fn, inner.node.func)):
      if node.attr == 'images':
        dtype = syntax.keyword(inner.node, 'dtype')
        return [(UINT8, origin, 'read_data_sets(dtype=uint8) images')] if dtype is not None and \
            'uint8' in syntax.render(dtype) else []
      one_hot = syntax.keyword(inner.node, 'one_hot')
      if one_hot is None and len(inner.node.args) > 1:
        one_hot = inner.node.args[1]
      if one_hot is not None and syntax.literal(one_hot) is True:
        return [(FLOAT64, origin, 'read_data_sets(one_hot=True) labels are float64')]
      return [(UINT8, origin, 'read_data_sets() labels are uint8')]
  return []


def _root_origins(program, module, fn, node, depth=0):
  """The origins of a name, through the attribute reads it was assigned from (`train = mnist.train` reaches
  `mnist = read_data_sets(...)`)."""
  found = []
  for inner in values.origins(program, module, fn, node):
    if isinstance(inner.node, ast.Attribute) and depth < 3:
      found += _root_origins(program, inner.module, inner.fn, _chain_root(inner.node), depth + 1)
    else:
      found.append(inner)
  return found


def _chain_root(node):
  while isinstance(node, ast.Attribute):
    node = node.value
  return node


def _pandas_source(program, origin):
  module, fn, node = origin
  dtype = syntax.keyword(node, 'dtype')
  reader = apis.last(program.canonical(module, fn, node.func))
  if dtype is None:
    return [(FLOAT64, origin, 'pd.%s without dtype= reads every column with a decimal point or a missing value as '
             'float64' % reader)]
  kinds = set(_type_kind(program, module, fn, t) for t in _mapping_values(program, module, fn, dtype))
  found = []
  if STRINGS in kinds:
    found.append((STRINGS, origin, 'pd.%s with dtype= str columns' % reader))
  if FLOAT64 in kinds:
    found.append((FLOAT64, origin, 'pd.%s with dtype= float columns, float64' % reader))
  return found


def _mapping_values(program, module, fn, node):
  """The type expressions of a dtype= argument: a type, a dict, or OrderedDict([(name, type), ...])."""
  found = []
  for origin in values.origins(program, module, fn, node):
    current = origin.node
    if isinstance(current, ast.Dict):
      found += [values.Value(origin.module, origin.fn, v) for v in current.values]
    elif isinstance(current, ast.Call) and current.args and isinstance(current.args[0], (ast.List, ast.Tuple)):
      for pair in current.args[0].elts:
        if isinstance(pair, (ast.Tuple, ast.List)) and len(pair.elts) == 2:
          found.append(values.Value(origin.module, origin.fn, pair.elts[1]))
    else:
      found.append(origin)
  return found


def _type_kind(program, module, fn, value):
  if isinstance(value, values.Value):
    module, fn, node = value
  else:
    node = value
  literal = syntax.literal(node)
  text = literal if isinstance(literal, str) else (program.canonical(module, fn, node) or syntax.render(node))
  if text in _FLOAT64_TYPES:
    return FLOAT64
  if text in _STRING_TYPES:
    return STRINGS
  return None


def settled(program, module, fn, node, depth=0):
  """True when every piece of in-memory data has a dtype the code chose: a cast (astype, dtype=), a TensorFlow op,
  or Python numbers."""
  if depth > 6:
    return False
  for origin in values.origins(program, module, fn, node):
    current = origin.node
    if isinstance(current, (ast.Tuple, ast.List, ast.Dict)):
      children = current.values if isinstance(current, ast.Dict) else current.elts
      if not all(settled(program, origin.module, origin.fn, child, depth + 1) for child in children):
        return False
    elif isinstance(current, ast.Call):
      canonical = program.canonical(origin.module, origin.fn, current.func) or ''
      name = current.func.attr if isinstance(current.func, ast.Attribute) else getattr(current.func, 'id', '')
      if name == 'dict' and current.args:
        if not settled(program, origin.module, origin.fn, current.args[0], depth + 1):
          return False
      elif not (name == 'astype' or syntax.keyword(current, 'dtype') is not None or apis.is_tf(canonical)):
        return False
    elif isinstance(current, ast.Subscript):  # rows or columns of settled data keep its dtype
      if not settled(program, origin.module, origin.fn, current.value, depth + 1):
        return False
    elif isinstance(current, ast.BinOp) and not isinstance(current.op, ast.Div):
      # float32 data + 2.0 * float32 data stays float32 (NumPy keeps an array's dtype against a Python number);
      # a true division can turn integers into float64, so it is not settled here.
      if not all(settled(program, origin.module, origin.fn, side, depth + 1) for side in (current.left, current.right)):
        return False
    elif not isinstance(syntax.literal(current), (int, float)):
      return False
  return True


def string_defaults(program, module, fn, node, depth=0):
  """How many columns of tf.decode_csv's record_defaults are strings ('' or [''] or tf.string)."""
  count = 0
  for origin in values.origins(program, module, fn, node):
    if isinstance(origin.node, ast.BinOp) and isinstance(origin.node.op, ast.Add) and depth < 3:
      # `[[0.0], ['']] + weather_defaults`: the columns of each part
      count += sum(string_defaults(program, origin.module, origin.fn, part, depth + 1)
                   for part in (origin.node.left, origin.node.right))
    elif isinstance(origin.node, (ast.List, ast.Tuple)):
      count += sum(_string_default(program, origin.module, origin.fn, element) for element in origin.node.elts)
    elif isinstance(origin.node, ast.Call) and isinstance(origin.node.func, ast.Name) and \
        origin.node.func.id in ('list', 'tuple') and len(origin.node.args) == 1 and depth < 3:
      count += string_defaults(program, origin.module, origin.fn, origin.node.args[0], depth + 1)
    elif isinstance(origin.node, ast.Call) and isinstance(origin.node.func, ast.Attribute) and \
        origin.node.func.attr == 'values' and not origin.node.args and depth < 3:
      # `defaults.values()` of a dict of one default per column (`defaults['city'] = ['']`, filled in a loop)
      count += sum(_string_default(program, where_module, where_fn, value)
                   for where_module, where_fn, value in _dict_values(program, origin.module, origin.fn,
                                                                     origin.node.func.value))
  return count


def _string_default(program, module, fn, element):
  """Whether one column's record default ('' or [''] or tf.string) makes a string column."""
  inner = element.elts[0] if isinstance(element, (ast.List, ast.Tuple)) and element.elts else element
  value = syntax.literal(inner)
  canonical = program.canonical(module, fn, inner) if isinstance(inner, ast.Attribute) else None
  return isinstance(value, (str, bytes)) or canonical == 'tensorflow.string'


def _dict_values(program, module, fn, node):
  """(module, fn, value) of the values of the dicts an expression can be: a literal's, and what is stored into it
  where it is made (`d = OrderedDict()`, then `d[key] = value`, also inside the function that returns it)."""
  found = []
  for origin in values.origins(program, module, fn, node):
    if isinstance(origin.node, ast.Dict):
      found += [(origin.module, origin.fn, value) for value in origin.node.values if value is not None]
    found += [(where_module, where_fn, value) for where_module, where_fn, _, _, value in
              containers.stored_where_made(program, origin) if value is not None]
  return found


def names_dtype(program, module, fn, node, names, depth=0):
  """Whether an expression (a module's constant followed to its value, lists added or comprehended) names one of
  the dtypes `names` (canonical names, e.g. tensorflow.float64) anywhere in it."""
  if depth > 3:
    return False
  for origin in values.origins(program, module, fn, node):
    for child in ast.walk(origin.node):
      if isinstance(child, ast.Attribute) and program.canonical(origin.module, origin.fn, child) in names:
        return True
      if isinstance(child, ast.Name) and child is not origin.node and isinstance(child.ctx, ast.Load) and \
          names_dtype(program, origin.module, origin.fn, child, names, depth + 1):
        return True
  return False


def string_literals(node):
  """Whether node is a list, tuple or set written out of string (or bytes) literals."""
  return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and bool(node.elts) and \
      all(isinstance(syntax.literal(e), (str, bytes)) for e in node.elts)


def holds_string_dtype(program, module, fn, node, depth=0):
  """True when a structure of dtypes (from_generator's output_types) holds tf.string."""
  if depth > 6:
    return False
  for origin in values.origins(program, module, fn, node):
    current = origin.node
    if isinstance(current, (ast.Tuple, ast.List)):
      if any(holds_string_dtype(program, origin.module, origin.fn, e, depth + 1) for e in current.elts):
        return True
    elif isinstance(current, ast.Dict):
      if any(holds_string_dtype(program, origin.module, origin.fn, v, depth + 1) for v in current.values):
        return True
    elif isinstance(current, ast.Attribute) and program.canonical(origin.module, origin.fn, current) == \
        'tensorflow.string':
      return True
  return False


def dynamic_shapes(program, module, fn, node):
  """Text naming the dynamic dimensions a padded_shapes argument leaves (None in a shape, or the dataset's own
  output_shapes), else None."""
  if node is None:
    return 'left out (the longest element of each batch)'
  for origin in values.origins(program, module, fn, node):
    current = origin.node
    if isinstance(current, ast.Attribute) and current.attr in ('output_shapes',):
      return '`%s`, the elements\' own (variable) shapes' % syntax.render(current)
    if isinstance(current, ast.Call) and 'get_output_shapes' in syntax.render(current.func):
      return '`%s`, the elements\' own (variable) shapes' % syntax.render(current)
    if _has_none(program, origin, 0):
      return '`%s` (None dimensions)' % syntax.render(node)
  return None


def _has_none(program, origin, depth):
  current = origin.node
  if depth > 6:
    return False
  if syntax.is_literal(current) and syntax.literal(current) is None:
    return True
  children = []
  if isinstance(current, (ast.Tuple, ast.List)):
    children = current.elts
  elif isinstance(current, ast.Dict):
    children = current.values
  elif isinstance(current, ast.Call) and apis.last(program.canonical(origin.module, origin.fn, current.func) or '') \
      == 'TensorShape' and current.args:
    children = [current.args[0]]
  for child in children:
    for inner in values.origins(program, origin.module, origin.fn, child):
      if _has_none(program, inner, depth + 1):
        return True
  return False
