"""Checks of an input_fn: what TPUEstimator feeds the TPU (rules 3, 4, 15, 17).

One input_fn is checked once per way it is used (train, evaluate, predict), because its builder's arguments can
differ: BERT's builder takes drop_remainder, True for training and False for prediction. The input_fn is read
with the functions it calls and the ones it hands to Dataset.map/apply/... (three levels down).
"""
import ast

from estimator_tpu.porting.report import apis
from estimator_tpu.porting.report import checks
from estimator_tpu.porting.report import findings
from estimator_tpu.porting.report import program as program_lib
from estimator_tpu.porting.report import pyast

FOLLOW_DEPTH = 3
TRAIN, EVAL, PREDICT = 'train', 'evaluate', 'predict'
# tensorflow/python/tpu/ops/tpu_ops.py, _SUPPORTED_INFEED_DTYPES: TF 1.15's set; TF 2.x added uint8 and int8.
INFEED_DTYPES = 'bool, int32, int64, bfloat16, float32, complex64 and uint32 (TF 2.x: also uint8 and int8)'
DATASET_FUNCTION_METHODS = ('map', 'apply', 'filter', 'flat_map', 'interleave')
# Where Dataset.batch / padded_batch take drop_remainder when it is passed by position.
DROP_POSITION = {'batch': 1, 'padded_batch': 3}


def check_input_fn(collector, target, modes):
  """All input_fn checks for one resolved input_fn (a program.Fn) used in `modes` (empty: not known)."""
  # Checks rule 3 (params).
  module, node = target.module, target.node
  if not checks.accepts_params(target):
    what = 'the lambda given as input_fn' if isinstance(node, ast.Lambda) else 'input_fn %s' % checks.describe_fn(node)
    collector.required(module, node, 3, '%s takes no `params` -> add a `params` argument and batch with '
                       'params[\'batch_size\']: TPUEstimator refuses an input_fn without it.' % what)
  walk = _InputWalk(collector, target, modes)
  tainted = set(['params']) if checks.accepts_params(target) else set()
  walk.visit(module, node, 0, tainted)
  walk.report_dtypes()
  walk.report_flags()
  return walk.visited_defs


class _InputWalk(object):
  """Reads the host code that builds the dataset."""

  def __init__(self, collector, target, modes):
    self.collector = collector
    self.program = collector.program
    self.modes = set(modes)
    self.bindings = {}  # id(def) -> {parameter: (expression, module, function)} from builder and helper calls
    for module, fn, call, builder in target.via:
      self._bind(builder, call, module, fn)
    self.visited = set()
    self.visited_defs = []
    self.uint8 = []  # (module, node) where uint8 data is made
    self.float64 = []
    self.casts = False
    self.batch_size_flags = set()  # id() of FLAGS reads already reported as a batch size
    self.flag_reads = []  # (module, FLAGS.x node), reported after the walk unless they are a batch size

  def _bind(self, def_node, call, module, fn):
    values = program_lib.bind_arguments(call, def_node)
    self.bindings[id(def_node)] = dict((name, (value, module, fn)) for name, value in values.items())

  def visit(self, module, fn, depth, tainted):
    if id(fn) in self.visited:
      return
    self.visited.add(id(fn))
    if not isinstance(fn, ast.Lambda):
      self.visited_defs.append(fn)
    tainted = self._tainted(fn, tainted)
    for node, _ in pyast.walk_local(fn):
      if isinstance(node, ast.Call):
        self._check_call(module, fn, node, tainted)
        if depth < FOLLOW_DEPTH:
          self._follow(module, fn, node, depth, tainted)
      elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        self._check_attribute(module, fn, node)

  def _tainted(self, fn, tainted):
    """Names whose value comes from params (params itself, and what is computed from it)."""
    tainted = set(tainted)
    assignments = [n for n, _ in pyast.walk_local(fn) if isinstance(n, ast.Assign)]
    for _ in range(3):
      for node in assignments:
        if pyast.names_in(node.value) & tainted:
          for target in node.targets:
            tainted.update(pyast.assigned_names(target))
    return tainted

  def _follow(self, module, fn, call, depth, tainted):
    canonical = self.program.canonical(module, fn, call.func)
    if not apis.is_tf(canonical):
      for callee in self.program.called_defs(module, fn, call):
        self._bind(callee.node, call, module, fn)
        callee_tainted = set(name for name, value in program_lib.bind_arguments(call, callee.node).items()
                             if pyast.names_in(value) & tainted)
        self.visit(callee.module, callee.node, depth + 1, callee_tainted)
    if isinstance(call.func, ast.Attribute) and call.func.attr in DATASET_FUNCTION_METHODS:
      for argument in list(call.args) + [kw.value for kw in call.keywords]:
        if isinstance(argument, (ast.Name, ast.Attribute, ast.Lambda)):
          for target in self.program.resolve_callables(module, fn, argument):
            if isinstance(target, program_lib.Fn):
              # A lambda or nested def sees the names of the function it is written in.
              inner = tainted if target.module is module else set()
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
    if canonical in apis.UINT8_PRODUCERS:
      self.uint8.append((module, call))
    if canonical in apis.QUEUE_BATCHING:
      self.collector.advice(module, call, 4, '`%s` is queue-based input -> return a tf.data.Dataset batched with '
                            'drop_remainder=True: TPUEstimator\'s PER_HOST_V2 input and predict take only a Dataset.'
                            % canonical.replace('tensorflow.', 'tf.', 1))
    elif canonical in apis.BATCH_FUNCTIONS:
      size_position, drop_position = apis.BATCH_FUNCTIONS[canonical]
      drop = True if canonical in apis.DROPS_REMAINDER else pyast.argument(call, drop_position, 'drop_remainder')
      self._check_batch(module, fn, call, pyast.argument(call, size_position, 'batch_size'), drop, tainted)
    elif (isinstance(call.func, ast.Attribute) and call.func.attr in DROP_POSITION and not apis.is_tf(canonical)
          and (call.args or call.keywords)):
      drop = pyast.argument(call, DROP_POSITION[call.func.attr], 'drop_remainder')
      self._check_batch(module, fn, call, pyast.argument(call, 0, 'batch_size'), drop, tainted)
    elif canonical in apis.IN_MEMORY_SOURCES and call.args and not _converts(call.args[0], self.program, module, fn):
      self.collector.unknown(module, call, 15, 'the dtype of the in-memory data `%s`: NumPy and pandas '
                             'default to float64, which the TPU infeed does not take (it takes %s) -> cast float64 '
                             'features to float32 on the host.' % (pyast.render(call.args[0]), INFEED_DTYPES))
    elif canonical in apis.DATA_SOURCES and call.args:
      path = pyast.literal(call.args[0])
      if isinstance(path, str) and _is_local_path(path):
        self.collector.advice(module, call, 17, 'input reads the local path %r: TPU workers cannot read '
                              'this machine\'s disk (a TPU Node) -> put the data on gs:// for a TPU run.' % path)

  def _check_batch(self, module, fn, call, size, drop, tainted):
    # Checks rule 3 (params), rule 4 (static shapes).
    if size is not None and not (pyast.names_in(size) & tainted):
      severity, source = self._source(module, fn, size, 0)
      if severity:
        self.collector.add(module, call, 3, severity, 'the batch size is %s, not params[\'batch_size\'] -> '
                           'batch with params[\'batch_size\']: TPUEstimator sets it to the per-core batch on a TPU '
                           '(the global batch on CPU) and splits train_batch_size over the cores itself.' % source)
    if self.modes and self.modes <= set([PREDICT]):
      return  # TPUEstimator.predict pads a short last batch itself
    verdict = True if drop is True else self._drops(module, fn, drop, 0)
    text = '`.%s(...)`' % (call.func.attr if isinstance(call.func, ast.Attribute) else pyast.render(call.func))
    if verdict is False and self.modes:
      self.collector.required(module, call, 4, '%s without drop_remainder=True in input that trains or evaluates: '
                              'the batch dimension is None and the last batch may be short; XLA compiles a TPU '
                              'program for one static shape -> drop_remainder=True (pad evaluation data to full '
                              'batches to keep every example).' % text)
    elif verdict is False:
      self.collector.unknown(module, call, 4, 'whether %s needs drop_remainder=True: the scanned files do not pass '
                             'this input_fn to train/evaluate/predict. Training and evaluation on a TPU need it (one '
                             'static shape); predict alone does not (TPUEstimator pads the last batch).' % text)
    elif verdict is None:
      unseen = '' if self.modes else ' (and whether this input_fn trains or evaluates: the scanned files do not show)'
      self.collector.unknown(module, call, 4, 'whether drop_remainder=`%s` of %s is True%s; input that trains or '
                             'evaluates on a TPU needs True (XLA compiles one static shape).'
                             % (pyast.render(drop), text, unseen))

  def _drops(self, module, fn, node, depth):
    """True/False when drop_remainder is known to be True/False (on a TPU), None when it cannot be told."""
    if node is None:
      return False
    value = pyast.literal(node)
    if value is not pyast.NO_VALUE:
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
    value = pyast.literal(node)
    if value is not pyast.NO_VALUE:
      return findings.REQUIRED, 'the fixed number %r' % (value,)
    if isinstance(node, ast.Attribute) and apis.is_flags(self.program.canonical(module, fn, node.value)):
      self.batch_size_flags.add(id(node))
      return findings.REQUIRED, 'the flag %s' % pyast.render(node)
    if isinstance(node, ast.Attribute) and pyast.root_name(node):
      return findings.REQUIRED, self._attribute_source(module, fn, node)
    if not isinstance(node, ast.Name):
      return findings.REQUIRED, '`%s`' % pyast.render(node)
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
    root = pyast.root_name(node)
    kind, bound, _, owner = self.program.lookup(module, fn, root)
    text = '`%s`' % pyast.render(node)
    if kind == 'param' and owner is not fn:
      return '%s, read from `%s`, an argument of %s around it (a closure)' % (text, root, checks.describe_fn(owner))
    if kind == 'param':
      return '%s, read from `%s`, an argument of %s' % (text, root, checks.describe_fn(bound))
    return text

  def report_flags(self):
    # Checks rule 3 (params).
    for module, node in self.flag_reads:
      if id(node) not in self.batch_size_flags:
        self.collector.advice(module, node, 3, 'input_fn reads the flag `%s` -> pass the value through params or '
                              'the input_fn builder, so input_fn depends only on its arguments.' % pyast.render(node))

  def report_dtypes(self):
    """uint8 or float64 in the input with no cast anywhere in it reaches the TPU infeed, which refuses float64
    and, in TF 1.15, uint8."""
    # Checks rule 15 (TPU dtypes).
    if self.casts:
      return  # a cast is there; which tensor it converts cannot be told statically, so say nothing
    for sites, dtype in ((self.uint8, 'uint8'), (self.float64, 'float64')):
      if sites:
        module, node = sites[0]
        self.collector.required(module, node, 15, 'the input makes %s data and never casts it: the TPU '
                                'infeed takes %s -> cast on the host in input_fn (e.g. tf.cast(images, tf.float32)).'
                                % (dtype, INFEED_DTYPES))


def _converts(node, program, module, fn, depth=0):
  """True unless an in-memory value is plain data whose dtype only NumPy or pandas decide: names, dict(...),
  tuples. Any conversion or TensorFlow call in it (astype, tf.constant, tf.cast, dtype=...) gives it a dtype, and
  so does one in the value of a name it uses (`pixels = images.astype(np.float32)` a few lines up)."""
  for child in ast.walk(node):
    if isinstance(child, ast.Call):
      if isinstance(child.func, ast.Attribute) and child.func.attr == 'astype':
        return True
      canonical = program.canonical(module, fn, child.func) or ''
      if apis.is_tf(canonical) or canonical.startswith('numpy.') or pyast.keyword(child, 'dtype') is not None:
        return True
    elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and depth < 3:
      kind, bound, owner_module, owner = program.lookup(module, fn, child.id)
      if kind == 'value' and _converts(bound, program, owner_module, owner, depth + 1):
        return True
  return False


def _is_local_path(path):
  """A string that names a file or folder on this machine (not gs://, not a bare word like 'train')."""
  if '://' in path or not path:
    return False
  return path.startswith(('/', './', '../', '~')) or ('/' in path and ' ' not in path)
