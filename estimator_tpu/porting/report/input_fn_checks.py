"""Checks of an input_fn: what TPUEstimator feeds the TPU (rules 3, 4, 15, 17).

One input_fn is checked once per way it is used (train, evaluate, predict), because its builder's arguments can
differ: BERT's builder takes drop_remainder, True for training and False for prediction. What the input_fn does is
program/inputs.py's reading of it (the functions it calls and hands to Dataset.map/apply/..., three levels down);
in-memory data is followed back to where it was read (program/dtypes.py): pandas' float64 columns and strings, the
tutorials' uint8 labels.
"""
import ast

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import dtypes
from estimator_tpu.porting.program import inputs
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values
from estimator_tpu.porting.report import checks
from estimator_tpu.porting.report import findings

TRAIN, EVAL, PREDICT = inputs.TRAIN, inputs.EVAL, inputs.PREDICT
COVERED = 'predict, covered by the input_fn\'s params change'  # in collector.returns_tensors: advice only
# tensorflow/python/tpu/ops/tpu_ops.py, _SUPPORTED_INFEED_DTYPES: TF 1.15's set; TF 2.x added uint8 and int8.
# The cores of the smallest TPU (v2-8, v3-8): every batch splits over them, a pod slice's over a multiple.
CORES = 8
INFEED_DTYPES = 'bool, int32, int64, bfloat16, float32, complex64 and uint32 (TF 2.x: also uint8 and int8)'
is_local_path = inputs.is_local_path


def check_input_fn(collector, target, modes):
  """All input_fn checks for one resolved input_fn (a callables.Fn). `modes`: the modes it feeds a TPU in (a set,
  empty when the estimator runs it on the CPU), or None when the scanned files do not pass it to an estimator.
  Returns the defs its reading visited."""
  # Checks rule 3 (params).
  module, node = target.module, target.node
  if not checks.accepts_params(target) and 'params' in syntax.param_names(node) and target.partial:
    partial_module, partial = target.partial
    collector.required(partial_module, partial, 'input-fn-partial-binds-params', '`functools.partial(%s, ...)` '
                       'binds its `params` already: TPUEstimator refuses an input_fn without a params argument left '
                       'to pass, and passes params[\'batch_size\'] there -> leave params unbound (put what you bound '
                       'into TPUEstimator\'s params=).' % node.name)
  elif not checks.accepts_params(target) and target.partial and _partial_hands_the_batch(collector.program, target):
    partial_module, partial = target.partial
    collector.required(partial_module, partial, 'input-fn-without-params', '`functools.partial(%s, ...)` given as '
                       'input_fn leaves no `params` to pass, and binds the batch size itself -> a callable that takes '
                       'params and hands params[\'batch_size\'] on as that batch size: TPUEstimator refuses an '
                       'input_fn without a params argument.' % node.name)
  elif not checks.accepts_params(target):
    what = 'the lambda given as input_fn' if isinstance(node, ast.Lambda) else 'input_fn %s' % checks.describe_fn(node)
    collector.required(module, node, 'input-fn-without-params', '%s takes no `params` -> add a `params` argument '
                       'and batch with params[\'batch_size\']: TPUEstimator refuses an input_fn without it.' % what)
  reading = inputs.read_input_fn(collector.program, target)
  _Checks(collector, reading, modes).run()
  if modes is not None:
    if PREDICT in modes and not checks.accepts_params(target) and inputs.hands_constants(collector.program, target):
      # A whole split handed over as constants by an input_fn without params: the Dataset it returns instead is
      # that input_fn's own change (docs/PORT_REPORT.md, the constant-splits row), not one at the return.
      modes = (set(modes) - set([PREDICT])) | set([COVERED])
    for where in inputs.returned_tensors(collector.program, target):
      collector.returns_tensors.setdefault(where, set()).update(modes)
    if modes:
      _returned_arrays(collector, target)
  return reading.visited_defs


def _returned_arrays(collector, target):
  """NumPy or pandas data an input_fn returns as it is (`return {'x': samples}`): Estimator converts it to tensors
  of its own dtype, float64 or uint8 that the infeed refuses; one finding per dtype at the return."""
  # Checks rule 15 (TPU dtypes).
  by_return = {}
  for module, fn, where, part in inputs.returned_parts(collector.program, target):
    by_return.setdefault((module, where), []).append((fn, syntax.render(part), part))
  for (module, where), parts in by_return.items():
    _report_dtypes(collector, module, where, parts, skip=(dtypes.STRINGS,))


def _partial_hands_the_batch(program, target):
  """Whether every batch of a partial's input batches at a size the partial binds (the lambda row for a partial)."""
  batches = inputs.read_input_fn(program, target).batches
  return bool(batches) and all(inputs.size_bound_by_partial(target, site) is not None for site in batches)


def report_returned_tensors(collector):
  """An input_fn that returns tensors instead of a Dataset: TPUEstimator's predict refuses it, and so does the
  PER_HOST_V2 input of training and evaluation (one pipeline per TPU host)."""
  # Checks rule 3 (params).
  for (module, node), modes in sorted(collector.returns_tensors.items(), key=lambda item: item[0][1].lineno):
    if PREDICT in modes:
      collector.required(module, node, 'input-fn-returns-tensors',
                         'this input_fn returns tensors (features and labels), not a '
                         'tf.data.Dataset, and the program predicts with it: on a TPU, TPUEstimator.predict refuses '
                         'that ("input_fn must return Dataset") -> return the batched Dataset itself.')
    elif modes:
      collector.advice(module, node, 'input-fn-returns-tensors',
                       'this input_fn returns tensors (features and labels), not a tf.data.Dataset: '
                       'TPUEstimator takes that only with PER_HOST_V1 input (TPUConfig\'s default); PER_HOST_V2, which '
                       'a pod slice needs, and predict refuse it -> return the batched Dataset itself.')


def check_in_memory_arguments(collector, module, fn, call):
  """The data a TensorFlow in-memory input_fn maker (numpy_input_fn(x, y)) is given: its dtypes reach the infeed."""
  # Checks rule 15 (TPU dtypes).
  # One cast per dtype kind: x's and y's float64 are one edit of this statement (astype where they are handed in).
  given = [(fn, name, syntax.argument(call, position, name)) for position, name in ((0, 'x'), (1, 'y'))]
  _report_dtypes(collector, module, call, [part for part in given if part[2] is not None])


def _report_dtypes(collector, module, where, parts, skip=()):
  """One rule-15 finding at `where` per dtype kind the data (fn, name, expression) of `parts` hold, naming every
  part that holds it."""
  found = {}
  for fn, name, node in parts:
    for kind, origin, detail in dtypes.dtype_problems(collector.program, module, fn, node):
      if kind not in skip:
        found.setdefault(kind, []).append((name, origin, detail))
  for kind, holders in found.items():
    _, origin, detail = holders[0]
    collector.required(module, where, 'in-memory-dtype', dtypes.message(
        kind, [holder[0] for holder in holders], origin, detail, INFEED_DTYPES))




def check_even_batches(collector, module, fn, size):
  """A batch size written as a number that does not split over the 8 cores of a v2-8/v3-8 (nor a pod slice's
  multiple of 8): TPUEstimator refuses a train, eval or predict batch size that is not a multiple of the cores
  (tpu_context.py, also for the predict_batch_size a prediction input's literal becomes: `batch(1)` for one
  question; a short last batch is padded, a batch size that does not split is refused)."""
  # Checks rule 16 (even batches).
  for where_module, node, value in inputs.written_sizes(collector.program, module, fn, size):
    if value > 0 and value % CORES:
      collector.required(where_module, node, 'batch-not-divisible',
                         'the batch size %d, written here, does not split over the %d cores of a v2-8 or v3-8 '
                         'TPU: TPUEstimator refuses a train, eval or predict batch size that is not a multiple of '
                         'the cores -> a multiple of %d (the global batch; each core gets batch / cores).'
                         % (value, CORES, CORES))


class _Checks(object):
  """Findings about one reading of an input_fn (program/inputs.py's InputReading)."""

  def __init__(self, collector, reading, modes):
    self.collector = collector
    self.program = collector.program
    self.reading = reading
    self.modes = None if modes is None else set(modes)
    self.batch_size_flags = set()  # id() of FLAGS reads reported as a batch size

  def run(self):
    reading = self.reading
    for module, call, canonical in reading.queues:
      self.collector.advice(module, call, 'queue-input', '`%s` is queue-based input -> return a tf.data.Dataset '
                            'batched with drop_remainder=True: TPUEstimator\'s PER_HOST_V2 input and predict take '
                            'only a Dataset.' % (syntax.render(call.func) if canonical == inputs.READ_UP_TO else
                                                 canonical.replace('tensorflow.', 'tf.', 1)))
    for site in reading.batches:
      self._batch(site)
    for module, fn, call, problems in reading.in_memory:
      self._in_memory(module, fn, call, problems)
    for module, call, path in reading.local_paths:
      self.collector.advice(module, call, 'local-input-path', 'input reads the local path %r: TPU workers cannot '
                            'read this machine\'s disk (a TPU Node) -> put the data on gs:// for a TPU run.' % path)
    self.report_dtypes()
    self.report_strings()
    self.report_flags()
    self.report_unknown_shapes()
    self.report_sparse()
    self.report_bucketing()

  def report_bucketing(self):
    """bucket_by_sequence_length batches each length bucket apart: its batch dimension is None, whatever the bucket
    sizes and drop_remainder say, and without padded_shapes of numbers each batch is padded to its own longest
    element. Prediction pads the batch dimension itself, not the lengths."""
    # Checks rule 4 (static shapes).
    if self.modes is not None and not self.modes:
      return
    for module, fn, call in self.reading.bucketings:
      name = syntax.render(call.func)
      if self.modes is None or self.modes & set([TRAIN, EVAL]):
        self._required_if_fed(module, call, 'bucketed-batches', '`%s(...)` batches each length bucket apart, so '
                              'the batch dimension is None (even with equal bucket sizes and drop_remainder=True), '
                              'and TPU training and evaluation take only static shapes -> pad every element to one '
                              'fixed length and batch with drop_remainder=True (bucket_by_sequence_length is for '
                              'devices that take a new shape each step).' % name)
      shapes = syntax.argument(call, 3, 'padded_shapes')
      no_padding = syntax.literal(syntax.argument(call, 6, 'no_padding')) is True
      dynamic = 'None (each batch\'s longest element)' if shapes is None else \
          dtypes.dynamic_shapes(self.program, module, fn, shapes)
      if dynamic and not no_padding:
        self._required_if_fed(module, call, 'bucketed-padding-dynamic', '`%s(...)` with padded_shapes %s pads each '
                              'bucket\'s batch to its own longest element (or its bucket\'s boundary): the lengths '
                              'change from batch to batch, and XLA compiles a TPU program for one static shape -> '
                              'padded_shapes with numbers (truncating longer elements).' % (name, dynamic))

  def report_sparse(self):
    """SparseTensors the input makes of its values and hands on (CTC's sparse labels): the TPU infeed takes only
    dense tensors of static shape, whatever sets the other shapes."""
    # Checks rule 4 (static shapes).
    if self.reading.densifies or (self.modes is not None and not self.modes & set([TRAIN, EVAL])):
      return
    for module, node, what in self.reading.sparse_made:
      self._required_if_fed(module, node, 'input-sparse-tensor', 'the input hands the model %s, a SparseTensor '
                            'whose dense shape is each batch\'s: TPUEstimator infeeds only dense tensors of static '
                            'shape -> pad the values to a fixed length with their lengths beside them (dense), and '
                            'make the SparseTensor inside model_fn if the model needs one.' % what)

  def report_unknown_shapes(self):
    """Tensors of unknown shape the input hands on, with nothing in it that sets a shape again."""
    # Checks rule 4 (static shapes).
    reading = self.reading
    if reading.sets_shapes or (self.modes is not None and not self.modes):
      return
    if self.modes is not None and not self.modes & set([TRAIN, EVAL]) and not reading.batches:
      return  # a generator of whole batches that only predicts: TPUEstimator.predict pads the batch dimension
    seen = set()
    for module, node, what in reading.unknown_shapes:
      # one edit per statement (the VarLenFeatures of one parse spec)
      statement = (module.path, checks.statement_line(module, node), what)
      if id(node) in seen or statement in seen:
        continue
      seen.update([id(node), statement])
      message = ('the input makes %s, and nothing in it sets a shape: TPUEstimator refuses features and labels '
                 'whose shape is not fully defined ("must have static shape"), and batching fixes only the batch '
                 'dimension -> give every dimension a size here (output_shapes, set_shape, or a resize or pad to a '
                 'fixed size).' % what)
      self._required_if_fed(module, node, 'input-unknown-shapes', message)

  def _required_if_fed(self, module, node, code, message):
    """Required where the input feeds a TPU; a cannot-tell where the scanned files do not pass it to an estimator."""
    if self.modes is None:
      self.collector.unknown(module, node, code, 'if this input feeds a TPU: ' + message)
    else:
      self.collector.required(module, node, code, message)

  def _in_memory(self, module, fn, call, problems):
    # Checks rule 15 (TPU dtypes).
    for kind, origin, detail in problems:
      if kind != dtypes.STRINGS and (self.modes is None or self.modes):
        self.collector.required(module, call, 'in-memory-dtype',
                                dtypes.message(kind, syntax.render(call.args[0]), origin, detail,
                                                               INFEED_DTYPES))
    if not problems and not _converts(call.args[0], self.program, module, fn) and \
        not dtypes.settled(self.program, module, fn, call.args[0]):
      self.collector.unknown(module, call, 'in-memory-dtype-unseen',
                             'the dtype of the in-memory data `%s`: NumPy and pandas '
                             'default to float64, which the TPU infeed does not take (it takes %s) -> cast float64 '
                             'features to float32 on the host.' % (syntax.render(call.args[0]), INFEED_DTYPES))

  def _batch(self, site):
    # Checks rule 3 (params), rule 4 (static shapes).
    module, fn, call, size = site.module, site.fn, site.call, site.size
    # A lambda without params that hands its batch size on: its rule-3 change is the whole edit (docs/PORT_REPORT.md).
    bound = inputs.size_bound_by_partial(self.reading.target, site)
    handed = bound is not None or inputs.size_handed_by_lambda(self.program, self.reading.target, site)
    grouped = size is not None and not site.from_params and inputs.rebatched(self.program, self.reading, site)
    if grouped:
      pass  # a size inside each example: the call that batches again is the batch fed
    elif size is not None and not site.from_params and (checks.accepts_params(self.reading.target) or not handed):
      severity, source = self._source(site.origin)
      if severity:
        self.collector.add(module, call, 'batch-size-not-params',
                           severity, 'the batch size is %s, not params[\'batch_size\'] -> '
                           'batch with params[\'batch_size\']: TPUEstimator sets it to the per-core batch on a TPU '
                           '(the global batch on CPU) and splits train_batch_size over the cores itself.' % source)
    if isinstance(call.func, ast.Attribute) and call.func.attr == 'padded_batch':
      self._padded_shapes(module, fn, call)
    if site.method in apis.QUEUE_BATCHING and syntax.literal(syntax.keyword(call, 'dynamic_pad')) is True and \
        self.modes and self.modes & set([TRAIN, EVAL]):
      self.collector.required(module, call, 'queue-dynamic-pad',
                              '`%s(dynamic_pad=True)` pads each batch to its own longest element: those dimensions '
                              'change from batch to batch, and XLA compiles a TPU program for one static shape -> '
                              'pad (or cut) every element to a fixed length before batching.'
                              % site.method.replace('tensorflow.', 'tf.', 1))
    if bound is not None and self.modes and not grouped:  # the size written in the partial
      check_even_batches(self.collector, self.reading.target.partial[0], None, bound)
    elif size is not None and not site.from_params and self.modes and not grouped:
      check_even_batches(self.collector, *self._size_on_this_path(site))
    if site.flattened:
      return  # unbatched by the function that called its input_fn (tpu_exact_eval_input): not the shape fed
    if self.modes is not None and not self.modes & set([TRAIN, EVAL]):
      return  # only predicts on the TPU (TPUEstimator.predict pads a short last batch itself), or not on a TPU
    verdict, drop = site.drops, site.drop
    text = '`.%s(...)`' % (call.func.attr if isinstance(call.func, ast.Attribute) else syntax.render(call.func))
    queue = site.method in apis.QUEUE_BATCHING or site.method in apis.EPOCH_READERS
    if site.method == inputs.READ_UP_TO and self._rebatched():
      return  # its rows are the elements of a queue batch that follows (the batch fed, judged there)
    if verdict is False and self.modes and site.method == inputs.READ_UP_TO:
      self.collector.required(module, call, 'batch-without-drop-remainder',
                              '`reader.read_up_to(queue, num_records)` returns up to num_records records: the batch '
                              'dimension is None, and a read that meets the end of a file or epoch is short; XLA '
                              'compiles a TPU program for one static shape -> a tf.data.Dataset batched with '
                              'drop_remainder=True (pad evaluation data to full batches to keep every example).')
    elif verdict is False and self.modes and queue:
      self.collector.required(module, call, 'batch-without-drop-remainder',
                              '`%s` keeps a short last batch (allow_smaller_final_batch=True, or num_epochs set) '
                              'in input that trains or evaluates: the batch dimension is None; '
                              'XLA compiles a TPU program for one static shape -> a tf.data.Dataset batched with '
                              'drop_remainder=True (pad evaluation data to full batches to keep every example).'
                              % site.method.replace('tensorflow.', 'tf.', 1))
    elif verdict is False and self.modes and site.method in apis.FEATURE_DATASETS:
      self.collector.required(module, call, 'batch-without-drop-remainder',
                              '`%s` without drop_final_batch=True in input that trains or evaluates: the batch '
                              'dimension is None; XLA compiles a TPU program for one static shape -> '
                              'drop_final_batch=True (pad evaluation data to full batches to keep every example).'
                              % site.method.replace('tensorflow.', 'tf.', 1))
    elif verdict is False and self.modes and inputs.padded_after(self.program, site):
      return  # a short last batch padded to full size, with static shapes set, before it leaves the input
    elif verdict is False and self.modes:
      self.collector.required(module, call, 'batch-without-drop-remainder',
                              '%s without drop_remainder=True in input that trains or evaluates: '
                              'the batch dimension is None and the last batch may be short; XLA compiles a TPU '
                              'program for one static shape -> drop_remainder=True (pad evaluation data to full '
                              'batches to keep every example).' % text)
    elif verdict is False:
      self.collector.unknown(module, call, 'batch-without-drop-remainder',
                             'whether %s needs drop_remainder=True: the scanned files do not pass '
                             'this input_fn to train/evaluate/predict -> drop_remainder=True if it trains or evaluates '
                             'on a TPU (one static shape); predict alone does not need it (TPUEstimator pads the last '
                             'batch).' % text)
    elif verdict is None and queue:
      self.collector.unknown(module, call, 'batch-drop-remainder-unseen',
                             'whether `%s` keeps a short last batch: it does when num_epochs is set (here `%s`) -> '
                             'leave num_epochs None where the input trains or evaluates on a TPU, or batch a '
                             'tf.data.Dataset with drop_remainder=True (XLA compiles one static shape).'
                             % (site.method.replace('tensorflow.', 'tf.', 1), syntax.render(drop)))
    elif verdict is None:
      unseen = '' if self.modes else ' (and whether this input_fn trains or evaluates: the scanned files do not show)'
      self.collector.unknown(module, call, 'batch-drop-remainder-unseen',
                             'whether drop_remainder=`%s` of %s is True%s -> make it True where '
                             'the input trains or evaluates on a TPU (XLA compiles one static shape).'
                             % (syntax.render(drop), text, unseen))

  def _size_on_this_path(self, site):
    """(module, function, expression) of the batch size this input hands the batching call: a parameter of the
    function that batches is what the call on the input's path passes (not what every caller of that function
    passes: a preview that runs it in a plain Session feeds no TPU)."""
    module, fn, size = site.module, site.fn, site.size
    if isinstance(size, ast.Name) and site.chain and site.chain[-1].callee.node is fn and \
        self.program.lookup(module, fn, size.id)[0] == 'param':
      step = site.chain[-1]
      given = callables.arguments(step.call, fn).get(size.id)
      if given is not None:
        return step.module, step.caller, given
      default = values.default_of(fn, size.id)
      if default is not None:
        return module, fn, default
    return module, fn, size

  def _rebatched(self):
    """Whether the input batches again with a queue batch of enqueue_many=True (tf.train.batch, shuffle_batch):
    then read_up_to's rows are only that queue's elements, and the batch it makes is the one fed."""
    return any(site.method in apis.QUEUE_BATCHING and
               syntax.literal(syntax.keyword(site.call, 'enqueue_many')) is True for site in self.reading.batches)

  def _padded_shapes(self, module, fn, call):
    """padded_batch pads each batch to its own longest element unless padded_shapes fixes every dimension."""
    # Checks rule 4 (static shapes).
    if self.modes is not None and not self.modes:
      return
    shapes = syntax.argument(call, 1, 'padded_shapes')
    dynamic = dtypes.dynamic_shapes(self.program, module, fn, shapes)
    if not dynamic:
      return
    message = ('`.padded_batch(...)` with padded_shapes %s pads each batch to its own longest element: those '
               'dimensions change from batch to batch, and XLA compiles a TPU program for one static shape (even '
               'with drop_remainder=True) -> pad to fixed lengths (padded_shapes with numbers, truncating longer '
               'elements), or bucket by length into a few fixed shapes.' % dynamic)
    self._required_if_fed(module, call, 'padded-batch-dynamic-shapes', message)

  def _source(self, origin):
    """(severity, where a batch size that is not from params comes from), for the message."""
    node, fn = origin.node, origin.scope
    kind = origin.kind
    if kind == 'literal':
      return findings.REQUIRED, 'the fixed number %r' % (syntax.literal(node),)
    if kind == 'flag':
      self.batch_size_flags.add(id(node))
      return findings.REQUIRED, 'the flag %s' % syntax.render(node)
    if kind == 'attribute':
      binding, bound = origin.bound
      text = '`%s`' % syntax.render(node)
      root = syntax.root_name(node)
      if binding == 'param' and origin.owner is not fn:
        return findings.REQUIRED, '%s, read from `%s`, an argument of %s around it (a closure)' % (
            text, root, checks.describe_fn(origin.owner))
      if binding == 'param':
        return findings.REQUIRED, '%s, read from `%s`, an argument of %s' % (text, root, checks.describe_fn(bound))
      return findings.REQUIRED, text
    if kind in ('expression', 'params'):
      return findings.REQUIRED, '`%s`' % syntax.render(node)
    text = '`%s`' % node.id
    if kind == 'module value':
      return findings.REQUIRED, '%s, a module-level value' % text
    if kind == 'import':
      return findings.REQUIRED, '%s, imported from %s' % (text, origin.bound)
    if kind in ('closure', 'parameter') and origin.owner is not fn:
      return findings.REQUIRED, '%s, taken from %s around it (a closure)' % (text, checks.describe_fn(origin.owner))
    if kind == 'parameter':
      return findings.REQUIRED, '%s, an argument of %s' % (text, checks.describe_fn(origin.bound))
    return findings.UNKNOWN, '%s, which static analysis cannot trace to params' % text

  def report_flags(self):
    # Checks rule 3 (params).
    for module, node in self.reading.flag_reads:
      if id(node) not in self.batch_size_flags:
        self.collector.advice(module, node, 'flag-in-input-fn',
                              'input_fn reads the flag `%s` -> pass the value through params or '
                              'the input_fn builder, so input_fn depends only on its arguments.' % syntax.render(node))

  def report_strings(self):
    """Strings the input hands the model: the TPU infeed takes none."""
    # Checks rule 15 (TPU dtypes).
    on_device = getattr(self.collector, 'strings_on_device', False)
    strings = self.reading.strings + ([] if self.reading.parses else self.reading.raw_strings) + \
        (self.reading.spec_strings if on_device or not self.reading.converts_strings else [])
    if not strings or (self.modes is not None and not self.modes):
      return
    # Each statement that makes strings is an edit of its own (a decode_csv per mode branch, say).
    seen = set()
    for module, node, what in strings:
      statement = (module.path, checks.statement_line(module, node))  # a parse spec's string features: one edit
      if statement in seen:
        continue
      seen.add(statement)
      message = ('the input makes %s and hands them to the model as they are: the TPU infeed takes no strings (it '
                 'takes %s), and a TPU has no string type -> turn them into integer ids here, in input_fn on the '
                 'host (a vocabulary lookup or a hash), and feed the ids.' % (what, INFEED_DTYPES))
      if on_device or not self.reading.converts_strings:
        self.collector.required(module, node, 'strings-to-the-device', message)
      else:
        self.collector.unknown(module, node, 'strings-to-the-device',
                               'whether the input converts every string it makes to numbers: ' + message)

  def report_dtypes(self):
    """uint8 or float64 in the input with no cast anywhere in it reaches the TPU infeed, which refuses float64
    and, in TF 1.15, uint8."""
    # Checks rule 15 (TPU dtypes).
    if self.modes is not None and not self.modes:
      return  # the input stays on the CPU
    for sites, dtype in ((self.reading.uint8, 'uint8'), (self.reading.float64, 'float64')):
      # (a cast that may convert it: which tensor a cast converts can mostly not be told statically)
      sites = [(module, node) for module, node in sites
               if not inputs.may_cast(self.program, self.reading, module, node)]
      if sites:
        module, node = sites[0]
        self.collector.required(module, node, 'uncast-input-dtype',
                                'the input makes %s data (`%s`) and never casts it: the TPU '
                                'infeed takes %s -> cast what the input hands on (tf.cast(x, %s)) on the host, in '
                                'input_fn; %s that never reaches the features or labels needs nothing.'
                                % (dtype, syntax.render(node), INFEED_DTYPES,
                                   'tf.float32' if dtype == 'float64' else 'tf.float32 or tf.int32', dtype))


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


