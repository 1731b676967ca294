"""What the rewrite must know about a program before it changes it: its estimators, the train/evaluate/predict
calls on them, the input_fns each call uses and where each of those batches, with the batch size as the caller
gives it (the global batch TPUEstimator needs), and the model_fn each estimator runs.
"""
import collections

import libcst as cst

from estimator_tpu.porting.rewrite import program as program_lib
from estimator_tpu.porting.rewrite import source as source_lib

TRAIN, EVAL, PREDICT = 'train', 'evaluate', 'predict'
METHODS = {'train': TRAIN, 'evaluate': EVAL, 'predict': PREDICT}
# train_and_evaluate's specs: their input_fns train and evaluate the estimator it is given.
SPECS = {'TrainSpec': TRAIN, 'EvalSpec': EVAL}
BATCH_METHODS = ('batch', 'padded_batch')
FOLLOW_DEPTH = 2


def is_tf(name):
  return bool(name) and (name == 'tensorflow' or name.startswith('tensorflow.'))


def last(name):
  return name.rsplit('.', 1)[-1]


def is_plain_estimator(name):
  return is_tf(name) and last(name) == 'Estimator' and '.tpu.' not in name and (
      name.startswith('tensorflow.estimator.') or name.startswith('tensorflow.python.estimator.'))


def is_tpu_estimator(name):
  return is_tf(name) and last(name) == 'TPUEstimator'


def is_run_config(name):
  return is_tf(name) and last(name) == 'RunConfig'


# An estimator built in the program: the Call, its file and the function it is built in.
EstimatorSite = collections.namedtuple('EstimatorSite', ['file', 'scope', 'call', 'tpu'])

# train/evaluate/predict on an estimator: the call, its mode, the input_fn expression, the estimator (or None).
MethodCall = collections.namedtuple('MethodCall', ['file', 'scope', 'call', 'mode', 'input_expr', 'estimator'])


class BatchSite(object):
  """A Dataset.batch call an input_fn makes.

  fn/file: the function it is in. size: the batch size expression there. proper: the input_fn itself (what
  TPUEstimator calls; it gets `params`). chain: [(file, caller, call, callee)] from the input_fn down to fn.
  origin: (file, scope, expression) of the batch size as the estimator's caller gives it (None: unknown).
  how: 'params' (already params['batch_size']), 'replace' (replace `size` in fn by params['batch_size']),
  'argument' (replace the argument of the input_fn's call of fn, chain[0]), 'thread' (fn reads a global: it gets a
  params argument from the input_fn), None (cannot tell).
  """

  def __init__(self, file, fn, call, size, proper, chain):
    self.file = file
    self.fn = fn
    self.call = call
    self.size = size
    self.proper = proper
    self.chain = chain
    self.origin = None
    self.how = None
    self.modes = set()
    self.drops = False  # drop_remainder=True already


class InputUse(object):
  """The input_fn one method call passes, resolved."""

  def __init__(self, method_call, proper, batches):
    self.method_call = method_call
    self.proper = proper  # program.Target of the input_fn itself, or None
    self.batches = batches  # [BatchSite]


class Analysis(object):

  def __init__(self, program):
    self.program = program
    self.estimators = []
    self.run_configs = []  # (file, scope, call)
    self.method_calls = []
    self.input_uses = []
    self.batch_sites = collections.OrderedDict()  # (id(input_fn), id(batch call)) -> BatchSite
    self.batch_modes = {}  # id(batch call) -> the modes of every input_fn that runs it
    self._find_constructions()
    self._find_method_calls()
    for method_call in self.method_calls:
      self.input_uses.append(self._input_use(method_call))

  # --- estimators -------------------------------------------------------------------------------------------------

  def _find_constructions(self):
    for f in self.program.files:
      for node in f.positions:
        if isinstance(node, cst.Call):
          name = f.canonical(node.func) or ''
          scope = f.function_of(node)
          if is_plain_estimator(name) or is_tpu_estimator(name):
            self.estimators.append(EstimatorSite(f, scope, node, is_tpu_estimator(name)))
          elif is_run_config(name):
            self.run_configs.append((f, scope, node))

  def model_fn_of(self, site):
    """The model_fn Target(s) an estimator site runs."""
    expr = source_lib.argument(site.call, 0, 'model_fn')
    return [t for t in self.program.resolve(site.file, site.scope, expr) if isinstance(t.node, cst.FunctionDef)]

  def _estimator_for(self, f, scope, receiver):
    """The EstimatorSite a receiver expression holds, if it can be told (or the program's only estimator)."""
    if isinstance(receiver, cst.Name):
      kind, bound, owner = f.lookup(scope, receiver.value)
      if kind == 'value' and isinstance(bound, cst.Call):
        for site in self.estimators:
          if site.call is bound:
            return site
        found = self.program.resolve_def(f, owner, bound.func)
        if found is not None:
          for value in program_lib.returned_values(found[1]):
            for site in self.estimators:
              if site.call is value:
                return site
    plain = [s for s in self.estimators]
    return plain[0] if len(plain) == 1 else None

  def _find_method_calls(self):
    for f in self.program.files:
      for node in f.positions:
        spec = _spec_kind(f, node)
        if spec is not None:
          input_expr = source_lib.argument(node, 0, 'input_fn')
          if input_expr is not None:  # the estimator: the program's only one (train_and_evaluate is not followed)
            scope = f.function_of(node)
            self.method_calls.append(MethodCall(f, scope, node, SPECS[spec], input_expr,
                                                self._estimator_for(f, scope, None)))
          continue
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
          continue
        method = node.func.attr.value
        if method not in METHODS:
          continue
        input_expr = source_lib.argument(node, 0, 'input_fn')
        if input_expr is None:
          continue
        scope = f.function_of(node)
        receiver = node.func.value
        site = self._estimator_for(f, scope, receiver)
        named = isinstance(receiver, (cst.Name, cst.Attribute)) and _named_like_estimator(
            receiver.value if isinstance(receiver, cst.Name) else receiver.attr.value)
        built = self._built_here(f, scope, receiver)
        keyword = any(a.keyword is not None and a.keyword.value == 'input_fn' for a in node.args)
        if not (built or keyword or (named and self.program.resolve(f, scope, input_expr))):
          continue
        self.method_calls.append(MethodCall(f, scope, node, METHODS[method], input_expr, site))

  def _built_here(self, f, scope, receiver):
    if not isinstance(receiver, cst.Name):
      return False
    kind, bound, _ = f.lookup(scope, receiver.value)
    return kind == 'value' and any(s.call is bound for s in self.estimators)

  # --- input_fns --------------------------------------------------------------------------------------------------

  def _input_use(self, method_call):
    targets = self.program.resolve(method_call.file, method_call.scope, method_call.input_expr)
    if len(targets) != 1:
      return InputUse(method_call, None, [])
    proper = targets[0]
    batches = []
    self._collect_batches(proper, proper.file, proper.node, [], batches, 0, method_call)
    for batch in batches:
      self.batch_modes.setdefault(id(batch.call), set()).add(method_call.mode)
      batch.modes = self.batch_modes[id(batch.call)]
    return InputUse(method_call, proper, batches)

  def _collect_batches(self, proper, f, fn, chain, found, depth, method_call):
    body = fn.body
    for node in source_lib.walk(body) if isinstance(fn, cst.Lambda) else source_lib.walk_local(body):
      if not isinstance(node, cst.Call):
        continue
      size = _batch_size_of(f, node)
      if size is not None:
        key = (id(proper.node), id(node))
        if key not in self.batch_sites:
          site = BatchSite(f, fn, node, size, proper, chain)
          self._trace(site, method_call)
          self.batch_sites[key] = site
        found.append(self.batch_sites[key])
        continue
      if depth < FOLLOW_DEPTH and not is_tf(f.canonical(node.func)):
        callee = self.program.resolve_def(f, fn, node.func)
        if callee is not None and self.program.is_ported(callee[0]):
          self._collect_batches(proper, callee[0], callee[1], chain + [(f, fn, node, callee[1])], found,
                                depth + 1, method_call)

  def _trace(self, site, method_call):
    """Where the batch size of a batch site comes from, and how the port makes it params['batch_size']."""
    f, fn, size = site.file, site.fn, site.size
    site.drops = _drops_remainder(f, site.call)
    if _reads_params(size):
      site.how = 'params'
      return
    origin = self._origin(f, fn, size, site, 0)
    site.origin = origin[1] if origin else None
    site.how = origin[0] if origin else None

  def _origin(self, f, fn, expr, site, depth):
    """('replace'|'argument'|'thread', (file, scope, expression as the estimator's caller sees it))."""
    if depth > 3:
      return None
    default = 'replace' if fn is site.proper.node else 'thread'
    if source_lib.literal(expr) is not source_lib.NO_VALUE:
      return default, (f, fn, expr)
    root = source_lib.root_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if root is None:
      return None
    kind, bound, owner = f.lookup(fn, root)
    if kind == 'value' and owner is fn and isinstance(expr, cst.Name):
      if _reads_params(bound):
        return 'params', None
      return self._origin(f, fn, bound, site, depth + 1)
    if kind == 'param':
      return self._from_parameter(f, owner, root, expr, site, depth)
    if kind is None:
      return None
    return default, (f, owner, expr)

  def _from_parameter(self, f, owner, name, expr, site, depth):
    """A batch size read from a parameter `name` of `owner`: a helper the input_fn calls (its argument), or the
    builder around the input_fn (its argument in the builder call)."""
    if site.chain and owner is site.fn and site.chain[-1][3] is owner:
      caller_file, caller, call, callee = site.chain[-1]
      argument = source_lib.bind_arguments(call, callee).get(name)
      if argument is None:
        return None
      if len(site.chain) == 1:  # the input_fn calls the helper: its argument becomes params['batch_size']
        inner = self._origin(caller_file, caller, argument, _Shadow(site, caller), depth + 1)
        if inner is None and not _reads_params(argument):  # args.batch_size, args a parameter of the enclosing def
          return 'argument', (caller_file, caller, argument)
        return ('argument', inner[1]) if inner else None
      return None
    for via_file, via_scope, call, builder in site.proper.via:
      if builder is owner:
        argument = source_lib.bind_arguments(call, builder).get(name)
        if argument is None:
          return None
        if isinstance(expr, cst.Attribute):  # fv.batch_size with fv the builder's parameter
          argument = _replace_root(expr, argument)
        return ('replace' if site.fn is site.proper.node else 'thread'), (via_file, via_scope, argument)
    return None

  # --- queries ----------------------------------------------------------------------------------------------------

  def uses_of(self, site):
    return [u for u in self.input_uses if u.method_call.estimator is site]

  def batch_origins(self, site, mode):
    """[(file, scope, expression)] of the batch sizes the estimator's `mode` input_fns use."""
    origins = []
    for use in self.uses_of(site):
      if use.method_call.mode == mode:
        for batch in use.batches:
          origins.append(batch.origin if batch.how != 'params' else None)
        if not use.batches:
          origins.append(None)
    return origins


class _Shadow(object):
  """A BatchSite seen from the input_fn that calls its function (for tracing an argument there)."""

  def __init__(self, site, caller):
    self.proper = site.proper
    self.fn = caller
    self.chain = []


def _named_like_estimator(name):
  name = name.lower().strip('_')
  return 'estimator' in name or name in ('est', 'clf', 'model') or name.endswith(('classifier', 'regressor'))


def _batch_size_of(f, call):
  """The batch size expression of a batching call (Dataset.batch/padded_batch, contrib's batch functions)."""
  name = f.canonical(call.func) or ''
  if name.endswith(('batch_and_drop_remainder', 'padded_batch_and_drop_remainder')):
    return source_lib.argument(call, 0, 'batch_size')
  if name.endswith('map_and_batch'):
    return source_lib.argument(call, 1, 'batch_size')
  if isinstance(call.func, cst.Attribute) and call.func.attr.value in BATCH_METHODS and not is_tf(name) \
      and call.args:
    return source_lib.argument(call, 0, 'batch_size')
  return None


def _spec_kind(f, node):
  """'TrainSpec' or 'EvalSpec' for a call that builds one (tf.estimator's), else None."""
  if not isinstance(node, cst.Call):
    return None
  canonical = f.canonical(node.func) or ''
  kind = canonical.rsplit('.', 1)[-1]
  return kind if kind in SPECS and canonical.startswith('tensorflow') and '.estimator.' in canonical else None


def drop_position(f, call):
  """Where a batch call takes drop_remainder positionally: 3 for padded_batch and map_and_batch, else 1."""
  name = f.canonical(call.func) or ''
  return 3 if name.endswith('map_and_batch') or (
      isinstance(call.func, cst.Attribute) and call.func.attr.value == 'padded_batch') else 1


def _drops_remainder(f, call):
  name = f.canonical(call.func) or ''
  if name.endswith('_and_drop_remainder'):
    return True
  value = source_lib.argument(call, drop_position(f, call), 'drop_remainder')
  return value is not None and source_lib.literal(value) is True


def _reads_params(expr):
  for node in source_lib.walk(expr):
    if isinstance(node, cst.Name) and node.value == 'params':
      return True
  return False


def _replace_root(expr, new_root):
  """`fv.batch_size` with its root name replaced by the expression `new_root`."""
  if isinstance(expr, cst.Name):
    return new_root
  return expr.with_changes(value=_replace_root(expr.value, new_root))
