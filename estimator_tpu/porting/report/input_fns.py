"""Checks of an input_fn: what TPUEstimator feeds the TPU (rules 3, 4, 15, 17).

One input_fn is checked once per way it is used (train, evaluate, predict), because its builder's arguments can
differ: BERT's builder takes drop_remainder, True for training and False for prediction. The input_fn is read
with the functions it calls and the ones it hands to Dataset.map/apply/... (three levels down), and in-memory data
is followed back to where it was read (data.py): pandas' float64 columns and strings, the tutorials' uint8 labels.
"""
import ast

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import data
from estimator_tpu.porting.program import params as params_lib
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values
from estimator_tpu.porting.report import checks
from estimator_tpu.porting.report import findings

FOLLOW_DEPTH = 3
TRAIN, EVAL, PREDICT = 'train', 'evaluate', 'predict'
# tensorflow/python/tpu/ops/tpu_ops.py, _SUPPORTED_INFEED_DTYPES: TF 1.15's set; TF 2.x added uint8 and int8.
INFEED_DTYPES = 'bool, int32, int64, bfloat16, float32, complex64 and uint32 (TF 2.x: also uint8 and int8)'
DATASET_FUNCTION_METHODS = ('map', 'apply', 'filter', 'flat_map', 'interleave')
# Where Dataset.batch / padded_batch take drop_remainder when it is passed by position.
DROP_POSITION = {'batch': 1, 'padded_batch': 3}


def check_input_fn(collector, target, modes):
  """All input_fn checks for one resolved input_fn (a program.Fn). `modes`: the modes it feeds a TPU in (a set,
  empty when the estimator runs it on the CPU), or None when the scanned files do not pass it to an estimator."""
  # Checks rule 3 (params).
  module, node = target.module, target.node
  if not checks.accepts_params(target) and 'params' in syntax.param_names(node) and target.partial:
    partial_module, partial = target.partial
    collector.required(partial_module, partial, 'input-fn-partial-binds-params', '`functools.partial(%s, ...)` binds its `params` already: '
                       'TPUEstimator refuses an input_fn without a params argument left to pass, and passes '
                       'params[\'batch_size\'] there -> leave params unbound (put what you bound into '
                       'TPUEstimator\'s params=).' % node.name)
  elif not checks.accepts_params(target):
    what = 'the lambda given as input_fn' if isinstance(node, ast.Lambda) else 'input_fn %s' % checks.describe_fn(node)
    collector.required(module, node, 'input-fn-without-params', '%s takes no `params` -> add a `params` argument and batch with '
                       'params[\'batch_size\']: TPUEstimator refuses an input_fn without it.' % what)
  walk = _InputWalk(collector, target, modes)
  # params is TPUEstimator's once the signature is fixed, even where a partial binds it today.
  tainted = {'params': PARAMS} if 'params' in syntax.param_names(node) else {}
  walk.visit(module, node, 0, tainted)
  walk.report_dtypes()
  walk.report_strings()
  walk.report_flags()
  if modes is not None:
    for where in returned_tensors(collector.program, target):
      collector.returns_tensors.setdefault(where, set()).update(modes)
  return walk.visited_defs


def returned_tensors(program, target):
  """(module, return statement) of the returns of an input_fn (and the functions it returns from) that hand
  TPUEstimator tensors (`iterator.get_next()`, a `features, labels` tuple) rather than a tf.data.Dataset."""
  found = []
  for module, fn, value in _returns(program, target.module, target.node, 0):
    for origin in values.origins(program, module, fn, value):
      node = origin.node
      if isinstance(node, (ast.Tuple, ast.List, ast.Dict)) or (
          isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get_next'):
        statement = module.parents.get(id(value))
        found.append((module, statement if isinstance(statement, ast.Return) else value))
        break
  return found


def _returns(program, module, fn, depth):
  """(module, function, returned expression) of a function's returns, through the project functions whose call
  it returns (a lambda input_fn returning iris_data.train_input_fn(...))."""
  found = []
  for value in program.returned_values(fn):
    if isinstance(value, ast.Call) and depth < 3 and not apis.is_tf(program.canonical(module, fn, value.func)):
      callees = [c for c in program.callables.called_defs(module, fn, value) if not c.bound_positional]
      for callee in callees:
        found += _returns(program, callee.module, callee.node, depth + 1)
      if callees:
        continue
    found.append((module, fn, value))
  return found


def report_returned_tensors(collector):
  """An input_fn that returns tensors instead of a Dataset: TPUEstimator's predict refuses it, and so does the
  PER_HOST_V2 input of training and evaluation (one pipeline per TPU host)."""
  # Checks rule 3 (params).
  for (module, node), modes in sorted(collector.returns_tensors.items(), key=lambda item: item[0][1].lineno):
    if PREDICT in modes:
      collector.required(module, node, 'input-fn-returns-tensors', 'this input_fn returns tensors (features and labels), not a '
                         'tf.data.Dataset, and the program predicts with it: on a TPU, TPUEstimator.predict refuses '
                         'that ("input_fn must return Dataset") -> return the batched Dataset itself.')
    elif modes:
      collector.advice(module, node, 'input-fn-returns-tensors', 'this input_fn returns tensors (features and labels), not a tf.data.Dataset: '
                       'TPUEstimator takes that only with PER_HOST_V1 input (TPUConfig\'s default); PER_HOST_V2, which '
                       'a pod slice needs, and predict refuse it -> return the batched Dataset itself.')


def check_in_memory_arguments(collector, module, fn, call):
  """The data a TensorFlow in-memory input_fn maker (numpy_input_fn(x, y)) is given: its dtypes reach the infeed."""
  # Checks rule 15 (TPU dtypes).
  for position, name in ((0, 'x'), (1, 'y')):
    node = syntax.argument(call, position, name)
    if node is not None:
      for kind, origin, detail in data.dtype_problems(collector.program, module, fn, node):
        collector.required(module, call, 'in-memory-dtype', data.message(kind, name, origin, detail, INFEED_DTYPES))


class _InputWalk(object):
  """Reads the host code that builds the dataset."""

  def __init__(self, collector, target, modes):
    self.collector = collector
    self.program = collector.program
    self.modes = None if modes is None else set(modes)
    self.bindings = {}  # id(def) -> {parameter: (expression, module, function)} from builder and helper calls
    for module, fn, call, builder in target.via:
      self._bind(builder, call, module, fn)
    self.visited = set()
    self.visited_defs = []
    self.uint8 = []  # (module, node) where uint8 data is made
    self.float64 = []
    self.casts = False
    self.strings = []  # (module, node, what) where the input makes string tensors
    self.raw_strings = []  # in-memory text, a problem only when nothing parses it (decode_csv, parse_example ...)
    self.parses = False
    self.converts_strings = False  # a lookup, hash or parse turns strings into numbers somewhere in the input
    self.batch_size_flags = set()  # id() of FLAGS reads already reported as a batch size
    self.flag_reads = []  # (module, FLAGS.x node), reported after the walk unless they are a batch size

  def _bind(self, def_node, call, module, fn):
    bound = callables.bind_arguments(call, def_node, callables.implicit_arguments(def_node, call))
    self.bindings[id(def_node)] = dict((name, (value, module, fn)) for name, value in bound.items())

  def visit(self, module, fn, depth, tainted):
    if id(fn) in self.visited:
      return
    self.visited.add(id(fn))
    if not isinstance(fn, ast.Lambda):
      self.visited_defs.append(fn)
    if 'params' in syntax.param_names(fn) and 'params' not in tainted:
      tainted = dict(tainted, params=PARAMS)  # TPUEstimator's, once the input_fn above it passes its own
    tainted = self._tainted(fn, tainted)
    for node, conditions in syntax.walk_local(fn):
      if self._dead(module, fn, conditions):
        continue
      if isinstance(node, ast.Call):
        self._check_call(module, fn, node, tainted)
        if depth < FOLLOW_DEPTH:
          self._follow(module, fn, node, depth, tainted)
      elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        self._check_attribute(module, fn, node)

  def _dead(self, module, fn, conditions):
    """True for code under `if y is None:` (or its else, or `if y:`) when the builder or caller that gave y says
    which branch runs (make_dataset(x, y) always passes a y: its `y is None` branch never runs here)."""
    for test, in_body in conditions:
      negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
      inner = test.operand if negated else test
      name, none_when_true = None, None
      if isinstance(inner, ast.Compare) and len(inner.ops) == 1 and isinstance(inner.left, ast.Name) and \
          syntax.is_literal(inner.comparators[0]) and syntax.literal(inner.comparators[0]) is None:
        name = inner.left.id
        none_when_true = isinstance(inner.ops[0], (ast.Is, ast.Eq))
      if name is None:
        continue
      expression, owner_module, owner = self._value_of(module, fn, name)
      if expression is None:
        continue
      found = [syntax.is_literal(o.node) and syntax.literal(o.node) is None
               for o in values.origins(self.program, owner_module, owner, expression)]
      if not found or (any(found) and not all(found)):
        continue
      is_none = all(found)
      runs = (is_none == none_when_true) != negated
      if runs != in_body:
        return True
    return False

  def _tainted(self, fn, tainted):
    """{name: PARAMS or BATCH}: the names holding TPUEstimator's params, and those holding its
    params['batch_size'] (or a value computed from it)."""
    tainted = dict(tainted)
    assignments = [n for n, _ in syntax.walk_local(fn) if isinstance(n, ast.Assign)]
    for _ in range(3):
      for node in assignments:
        kind = PARAMS if _holds_params(node.value, tainted) else BATCH if _holds_batch(node.value, tainted) else None
        if kind:
          for target in node.targets:
            for name in syntax.assigned_names(target):
              tainted[name] = kind
    return tainted

  def _follow(self, module, fn, call, depth, tainted):
    canonical = self.program.canonical(module, fn, call.func)
    if not apis.is_tf(canonical):
      for callee in self.program.callables.called_defs(module, fn, call):
        self._bind(callee.node, call, module, fn)
        skip = callables.implicit_arguments(callee.node, call)
        callee_tainted = {}
        for name, value in callables.bind_arguments(call, callee.node, skip).items():
          if _holds_params(value, tainted):
            callee_tainted[name] = PARAMS
          elif _holds_batch(value, tainted):
            callee_tainted[name] = BATCH
        self.visit(callee.module, callee.node, depth + 1, callee_tainted)
    if isinstance(call.func, ast.Attribute) and call.func.attr in DATASET_FUNCTION_METHODS:
      for argument in list(call.args) + [kw.value for kw in call.keywords]:
        if isinstance(argument, (ast.Name, ast.Attribute, ast.Lambda)):
          for target in self.program.callables.resolve(module, fn, argument):
            if isinstance(target, callables.Fn):
              # A lambda or nested def sees the names of the function it is written in.
              inner = tainted if target.module is module else {}
              self.visit(target.module, target.node, depth + 1, inner)

  def _check_attribute(self, module, fn, node):
    canonical = self.program.canonical(module, fn, node)
    if canonical in apis.UINT8_NAMES:
      self.uint8.append((module, node))
    elif canonical in apis.HOST_FLOAT64_NAMES:
      self.float64.append((module, node))
    elif apis.is_flags(self.program.canonical(module, fn, node.value)):
      self.flag_reads.append((module, node))

  def _check_call(self, module, fn, call, tainted):
    # Checks rule 4 (static shapes), rule 15 (TPU dtypes), rule 17 (Cloud Storage).
    canonical = self.program.canonical(module, fn, call.func)
    if canonical in apis.CASTS or (isinstance(call.func, ast.Attribute) and call.func.attr == 'astype'):
      self.casts = True
    called = canonical or (call.func.attr if isinstance(call.func, ast.Attribute) else '')
    if any(word in called for word in apis.STRING_CONVERSIONS):
      self.converts_strings = True
    if any(word in called for word in ('decode_', 'parse_', 'string_split', 'strings.split')):
      self.parses = True
    self._check_strings(module, fn, call, canonical)
    if canonical in apis.UINT8_PRODUCERS:
      self.uint8.append((module, call))
    if canonical in apis.QUEUE_BATCHING:
      self.collector.advice(module, call, 'queue-input', '`%s` is queue-based input -> return a tf.data.Dataset batched with '
                            'drop_remainder=True: TPUEstimator\'s PER_HOST_V2 input and predict take only a Dataset.'
                            % canonical.replace('tensorflow.', 'tf.', 1))
    elif canonical in apis.BATCH_FUNCTIONS:
      size_position, drop_position = apis.BATCH_FUNCTIONS[canonical]
      drop = True if canonical in apis.DROPS_REMAINDER else syntax.argument(call, drop_position, 'drop_remainder')
      self._check_batch(module, fn, call, syntax.argument(call, size_position, 'batch_size'), drop, tainted)
    elif (isinstance(call.func, ast.Attribute) and call.func.attr in DROP_POSITION and not apis.is_tf(canonical)
          and (call.args or call.keywords)):
      drop = syntax.argument(call, DROP_POSITION[call.func.attr], 'drop_remainder')
      self._check_batch(module, fn, call, syntax.argument(call, 0, 'batch_size'), drop, tainted)
    elif canonical in apis.IN_MEMORY_SOURCES and call.args:
      self._in_memory(module, fn, call)
    elif canonical in apis.DATA_SOURCES and call.args:
      path = syntax.literal(call.args[0])
      if isinstance(path, str) and is_local_path(path):
        self.collector.advice(module, call, 'local-input-path', 'input reads the local path %r: TPU workers cannot read '
                              'this machine\'s disk (a TPU Node) -> put the data on gs:// for a TPU run.' % path)

  def _in_memory(self, module, fn, call):
    # Checks rule 15 (TPU dtypes).
    problems = data.dtype_problems(self.program, module, fn, call.args[0])
    for kind, origin, detail in problems:
      if kind == data.STRINGS and detail == 'Python strings':
        self.raw_strings.append((module, call, 'strings (Python strings at %s:%d)' % (origin.module.path,
                                                                                   origin.node.lineno)))
      elif kind == data.STRINGS:
        self.strings.append((module, call, 'string columns (%s, %s:%d)' % (detail, origin.module.path,
                                                                           origin.node.lineno)))
      elif self.modes is None or self.modes:
        self.collector.required(module, call, 'in-memory-dtype', data.message(kind, syntax.render(call.args[0]), origin, detail,
                                                               INFEED_DTYPES))
    if not problems and not _converts(call.args[0], self.program, module, fn) and \
        not data.settled(self.program, module, fn, call.args[0]):
      self.collector.unknown(module, call, 'in-memory-dtype-unseen', 'the dtype of the in-memory data `%s`: NumPy and pandas '
                             'default to float64, which the TPU infeed does not take (it takes %s) -> cast float64 '
                             'features to float32 on the host.' % (syntax.render(call.args[0]), INFEED_DTYPES))

  def _check_strings(self, module, fn, call, canonical):
    """Sources of string tensors: decode_csv with string defaults, from_generator yielding tf.string."""
    # Checks rule 15 (TPU dtypes).
    if canonical in apis.CSV_DECODERS:
      defaults = syntax.argument(call, 1, 'record_defaults')
      columns = data.string_defaults(self.program, module, fn, defaults) if defaults is not None else 0
      if columns:
        self.strings.append((module, call, '%d string column%s (tf.decode_csv\'s record_defaults \'\')' % (
            columns, '' if columns == 1 else 's')))
    elif canonical in apis.GENERATOR_SOURCES:
      types = syntax.argument(call, 1, 'output_types')
      if types is not None and data.holds_string_dtype(self.program, module, fn, types):
        self.strings.append((module, call, 'tf.string elements (from_generator\'s output_types)'))

  def _check_batch(self, module, fn, call, size, drop, tainted):
    # Checks rule 3 (params), rule 4 (static shapes).
    if size is not None and not _holds_batch(size, tainted):
      severity, source = self._source(module, fn, size, 0)
      if severity:
        self.collector.add(module, call, 'batch-size-not-params', severity, 'the batch size is %s, not params[\'batch_size\'] -> '
                           'batch with params[\'batch_size\']: TPUEstimator sets it to the per-core batch on a TPU '
                           '(the global batch on CPU) and splits train_batch_size over the cores itself.' % source)
    if isinstance(call.func, ast.Attribute) and call.func.attr == 'padded_batch':
      self._padded_shapes(module, fn, call)
    if self.modes is not None and not self.modes & set([TRAIN, EVAL]):
      return  # only predicts on the TPU (TPUEstimator.predict pads a short last batch itself), or not on a TPU
    verdict = True if drop is True else self._drops(module, fn, drop, 0)
    text = '`.%s(...)`' % (call.func.attr if isinstance(call.func, ast.Attribute) else syntax.render(call.func))
    if verdict is False and self.modes:
      self.collector.required(module, call, 'batch-without-drop-remainder', '%s without drop_remainder=True in input that trains or evaluates: '
                              'the batch dimension is None and the last batch may be short; XLA compiles a TPU '
                              'program for one static shape -> drop_remainder=True (pad evaluation data to full '
                              'batches to keep every example).' % text)
    elif verdict is False:
      self.collector.unknown(module, call, 'batch-without-drop-remainder', 'whether %s needs drop_remainder=True: the scanned files do not pass '
                             'this input_fn to train/evaluate/predict -> drop_remainder=True if it trains or evaluates '
                             'on a TPU (one static shape); predict alone does not need it (TPUEstimator pads the last '
                             'batch).' % text)
    elif verdict is None:
      unseen = '' if self.modes else ' (and whether this input_fn trains or evaluates: the scanned files do not show)'
      self.collector.unknown(module, call, 'batch-drop-remainder-unseen', 'whether drop_remainder=`%s` of %s is True%s -> make it True where '
                             'the input trains or evaluates on a TPU (XLA compiles one static shape).'
                             % (syntax.render(drop), text, unseen))

  def _padded_shapes(self, module, fn, call):
    """padded_batch pads each batch to its own longest element unless padded_shapes fixes every dimension."""
    # Checks rule 4 (static shapes).
    if self.modes is not None and not self.modes:
      return
    shapes = syntax.argument(call, 1, 'padded_shapes')
    dynamic = data.dynamic_shapes(self.program, module, fn, shapes)
    if not dynamic:
      return
    message = ('`.padded_batch(...)` with padded_shapes %s pads each batch to its own longest element: those '
               'dimensions change from batch to batch, and XLA compiles a TPU program for one static shape (even '
               'with drop_remainder=True) -> pad to fixed lengths (padded_shapes with numbers, truncating longer '
               'elements), or bucket by length into a few fixed shapes.' % dynamic)
    if self.modes is None:
      self.collector.unknown(module, call, 'padded-batch-dynamic-shapes', 'if this input feeds a TPU: ' + message)
    else:
      self.collector.required(module, call, 'padded-batch-dynamic-shapes', message)

  def _drops(self, module, fn, node, depth):
    """True/False when drop_remainder is known to be True/False (on a TPU), None when it cannot be told."""
    if node is None:
      return False
    value = syntax.literal(node)
    if value is not syntax.NO_VALUE:
      return bool(value)
    if isinstance(node, ast.IfExp) and checks.mentions_tpu(node.test):
      return self._drops(module, fn, node.body, depth + 1)  # `True if use_tpu else False`: True on a TPU
    if isinstance(node, ast.Name) and depth < 4:
      expression, owner_module, owner = self._value_of(module, fn, node.id)
      if expression is not None:
        return self._drops(owner_module, owner, expression, depth + 1)
    return None

  def _value_of(self, module, fn, name):
    """(expression, module, function) a name was given: an assignment, or the argument of a known call."""
    kind, bound, owner_module, owner = self.program.lookup(module, fn, name)
    if kind == 'value':
      return bound, owner_module, owner
    if kind == 'param' and name in self.bindings.get(id(bound), {}):
      return self.bindings[id(bound)][name]
    return None, None, None

  def _source(self, module, fn, node, depth):
    """(severity, where a batch size that is not from params comes from), for the message."""
    value = syntax.literal(node)
    if value is not syntax.NO_VALUE:
      return findings.REQUIRED, 'the fixed number %r' % (value,)
    if isinstance(node, ast.Attribute) and apis.is_flags(self.program.canonical(module, fn, node.value)):
      self.batch_size_flags.add(id(node))
      return findings.REQUIRED, 'the flag %s' % syntax.render(node)
    if isinstance(node, ast.Attribute) and syntax.root_name(node):
      return findings.REQUIRED, self._attribute_source(module, fn, node)
    if not isinstance(node, ast.Name):
      return findings.REQUIRED, '`%s`' % syntax.render(node)
    kind, bound, owner_module, owner = self.program.lookup(module, fn, node.id)
    if kind == 'value' and owner is fn and depth < 3:
      return self._source(module, fn, bound, depth + 1)
    text = '`%s`' % node.id
    if kind == 'value' and owner is None:
      return findings.REQUIRED, '%s, a module-level value' % text
    if kind == 'import':
      return findings.REQUIRED, '%s, imported from %s' % (text, bound)
    if kind in ('param', 'value') and owner is not fn:
      return findings.REQUIRED, '%s, taken from %s around it (a closure)' % (text, checks.describe_fn(owner))
    if kind == 'param':
      return findings.REQUIRED, '%s, an argument of %s' % (text, checks.describe_fn(bound))
    return findings.UNKNOWN, '%s, which static analysis cannot trace to params' % text

  def _attribute_source(self, module, fn, node):
    """Where `fv.eval_batch_size` comes from: an argument of the function around input_fn, or of input_fn."""
    root = syntax.root_name(node)
    kind, bound, _, owner = self.program.lookup(module, fn, root)
    text = '`%s`' % syntax.render(node)
    if kind == 'param' and owner is not fn:
      return '%s, read from `%s`, an argument of %s around it (a closure)' % (text, root, checks.describe_fn(owner))
    if kind == 'param':
      return '%s, read from `%s`, an argument of %s' % (text, root, checks.describe_fn(bound))
    return text

  def report_flags(self):
    # Checks rule 3 (params).
    for module, node in self.flag_reads:
      if id(node) not in self.batch_size_flags:
        self.collector.advice(module, node, 'flag-in-input-fn', 'input_fn reads the flag `%s` -> pass the value through params or '
                              'the input_fn builder, so input_fn depends only on its arguments.' % syntax.render(node))

  def report_strings(self):
    """Strings the input hands the model: the TPU infeed takes none."""
    # Checks rule 15 (TPU dtypes).
    strings = self.strings + ([] if self.parses else self.raw_strings)
    if not strings or (self.modes is not None and not self.modes):
      return
    module, node, what = strings[0]
    message = ('the input makes %s and hands them to the model as they are: the TPU infeed takes no strings (it '
               'takes %s), and a TPU has no string type -> turn them into integer ids here, in input_fn on the host '
               '(a vocabulary lookup or a hash), and feed the ids.' % (what, INFEED_DTYPES))
    if getattr(self.collector, 'strings_on_device', False) or not self.converts_strings:
      self.collector.required(module, node, 'strings-to-the-device', message)
    else:
      self.collector.unknown(module, node, 'strings-to-the-device', 'whether the input converts every string it makes to numbers: '
                             + message)

  def report_dtypes(self):
    """uint8 or float64 in the input with no cast anywhere in it reaches the TPU infeed, which refuses float64
    and, in TF 1.15, uint8."""
    # Checks rule 15 (TPU dtypes).
    if self.casts or (self.modes is not None and not self.modes):
      return  # a cast is there (which tensor it converts cannot be told statically), or the input stays on the CPU
    for sites, dtype in ((self.uint8, 'uint8'), (self.float64, 'float64')):
      if sites:
        module, node = sites[0]
        self.collector.required(module, node, 'uncast-input-dtype', 'the input makes %s data and never casts it: the TPU '
                                'infeed takes %s -> cast on the host in input_fn (e.g. tf.cast(images, tf.float32)).'
                                % (dtype, INFEED_DTYPES))


PARAMS, BATCH = 'params', 'batch size'


def _holds_params(node, tainted):
  return isinstance(node, ast.Name) and tainted.get(node.id) == PARAMS


def _holds_batch(node, tainted):
  """Whether an expression reads TPUEstimator's batch size: params['batch_size'] (params.get('batch_size'),
  HParams' params.batch_size) or a name computed from it; params['train_batch_size'] is the program's own."""
  params_names = [name for name, kind in tainted.items() if kind == PARAMS]
  for child in ast.walk(node):
    if isinstance(child, ast.Name) and tainted.get(child.id) == BATCH:
      return True
    if params_lib.reads_key(child, 'batch_size', params_names):
      return True
  return False


def _converts(node, program, module, fn, depth=0):
  """True unless an in-memory value is plain data whose dtype only NumPy or pandas decide: names, dict(...),
  tuples. Any conversion or TensorFlow call in it (astype, tf.constant, tf.cast, dtype=...) gives it a dtype, and
  so does one in the value of a name it uses (`pixels = images.astype(np.float32)` a few lines up)."""
  for child in ast.walk(node):
    if isinstance(child, ast.Call):
      if isinstance(child.func, ast.Attribute) and child.func.attr == 'astype':
        return True
      canonical = program.canonical(module, fn, child.func) or ''
      if apis.is_tf(canonical) or canonical.startswith('numpy.') or syntax.keyword(child, 'dtype') is not None:
        return True
    elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and depth < 3:
      kind, bound, owner_module, owner = program.lookup(module, fn, child.id)
      if kind == 'value' and _converts(bound, program, owner_module, owner, depth + 1):
        return True
  return False


def is_local_path(path):
  """A string that names a file or folder on this machine (not gs://, not a bare word like 'train')."""
  if '://' in path or not path:
    return False
  return path.startswith(('/', './', '../', '~')) or ('/' in path and ' ' not in path)
