"""The estimators a program builds, what it does with each (train, evaluate, predict, export), and so which modes
of each run on a TPU once it is ported.

A `required` finding is about a mode the program runs on the TPU: training; evaluation unless the TPUEstimator says
eval_on_tpu=False; prediction when the program predicts with the estimator it ports. Exporting runs model_fn on the
CPU (TPUEstimator's CPU metagraph, and its TPU inference graph, both take an EstimatorSpec), and an estimator that
only predicts or exports (a serving script) stays a plain Estimator. When static analysis cannot see what is done
with an estimator (it is built in a file scanned without its driver), every mode counts.
"""
import ast
import collections

from estimator_tpu.porting.program import anchors
from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import hooks as hooks_lib
from estimator_tpu.porting.program import mode_branches
from estimator_tpu.porting.program import reachable
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values

TRAIN, EVAL, PREDICT, EXPORT = mode_branches.TRAIN, mode_branches.EVAL, mode_branches.PREDICT, mode_branches.EXPORT
EVERYTHING = frozenset([TRAIN, EVAL, PREDICT, EXPORT])
# TPUEstimator's global batch size for each mode (tpu_context.py checks each divides over the replicas).
BATCH_SIZE_KEYWORDS = ((TRAIN, 'train_batch_size'), (EVAL, 'eval_batch_size'), (PREDICT, 'predict_batch_size'))
# Estimator method -> the modes it runs model_fn in.
METHOD_MODES = {'train': {TRAIN}, 'evaluate': {EVAL}, 'predict': {PREDICT}, 'export': {EXPORT},
                'train_and_evaluate': {TRAIN, EVAL}, 'experiment': {TRAIN, EVAL}, 'fit': {TRAIN},
                'partial_fit': {TRAIN}, 'predict_classes': {PREDICT}, 'predict_proba': {PREDICT},
                'predict_scores': {PREDICT}, 'predict_cluster_index': {PREDICT}, 'predict_cluster_idx': {PREDICT},
                'predict_assignments': {PREDICT}}
# contrib.learn's estimators also take NumPy arrays (x=, y=) fed by its data feeder, without an input_fn.
ARRAY_METHODS = ('fit', 'partial_fit', 'evaluate', 'predict', 'predict_classes', 'predict_proba', 'predict_scores')
EXPORT_METHODS = ('export_savedmodel', 'export_saved_model', 'experimental_export_all_saved_models')
# A method that runs an input_fn -> where its arguments are: Estimator.train(input_fn, hooks, steps, max_steps),
# evaluate(input_fn, steps, hooks), predict(input_fn, ..., hooks); contrib.learn's fit(x, y, input_fn, steps,
# batch_size, monitors, max_steps) takes its input_fn by keyword (its first arguments are arrays).
Method = collections.namedtuple('Method', ['mode', 'input_fn_at', 'steps_at', 'max_steps_at', 'hooks_at', 'hooks'])
DRIVEN_METHODS = {'train': Method(TRAIN, 0, 2, 3, 1, 'hooks'), 'evaluate': Method(EVAL, 0, 1, None, 2, 'hooks'),
                  'predict': Method(PREDICT, 0, None, None, 3, 'hooks'),
                  'fit': Method(TRAIN, None, 3, 6, 5, 'monitors'),
                  # the clustering estimators' predict(input_fn) under another name (k-means, GMM)
                  'predict_cluster_index': Method(PREDICT, 0, None, None, None, 'hooks'),
                  'predict_cluster_idx': Method(PREDICT, 0, None, None, None, 'hooks'),
                  'predict_assignments': Method(PREDICT, 0, None, None, None, 'hooks'),
                  # contrib.learn's predictions by kind: (x, input_fn, ...), the input_fn by keyword
                  'predict_scores': Method(PREDICT, None, None, None, None, 'hooks'),
                  'predict_classes': Method(PREDICT, None, None, None, None, 'hooks'),
                  'predict_proba': Method(PREDICT, None, None, None, None, 'hooks')}
BUILT, NAMED = 'built', 'named'

Driver = collections.namedtuple('Driver', ['module', 'fn', 'call', 'method', 'receiver'])


def driven_input_fn(call):
  """The input_fn argument of a call to one of DRIVEN_METHODS (None when it has none)."""
  method = DRIVEN_METHODS[call.func.attr]
  if method.input_fn_at is None:
    return syntax.keyword(call, 'input_fn')
  return syntax.argument(call, method.input_fn_at, 'input_fn')


class Site(object):
  """One estimator the program builds: where, what kind, what the program does with it."""

  def __init__(self, module, fn, call, canonical, kind, anchor=None, base=None):
    self.module, self.fn, self.call, self.canonical, self.kind = module, fn, call, canonical, kind
    self.anchor = anchor  # anchors.Anchor of the constructor call
    self.base = base  # a subclass's: the canonical name of the Estimator it derives from
    self.attributed = set()  # modes of the drivers that reach this estimator
    self.modes = EVERYTHING
    self.known = False  # whether the program shows what it does with the estimator
    self.tpu_modes = frozenset(mode_branches.ALL)
    self.ported = True

  @property
  def short(self):
    return (self.canonical or '').replace('tensorflow.', 'tf.', 1)


def site_kind(canonical):
  """'estimator', 'premade', 'keras', 'tpu' or 'factory' for what an estimator constructor builds, else None."""
  name = canonical or ''
  if apis.is_tpu_estimator(name):
    return 'tpu'
  if apis.is_plain_estimator(name):
    return 'estimator' if apis.last(name) == 'Estimator' else 'premade'
  if apis.is_keras_to_estimator(name):
    return 'keras'
  if apis.is_estimator_factory(name):
    return 'factory'
  return None


def estimator_base(program, module, class_node, depth=0):
  """The canonical name of the Estimator a class derives from (through scanned bases), 'tpu' for TPUEstimator."""
  for base in class_node.bases:
    name = module.canonical(base) or ''
    if apis.is_tpu_estimator(name):
      return 'tpu'
    if apis.is_plain_estimator(name):
      return name
    found = program.find_def(name)
    if found and isinstance(found[1], ast.ClassDef) and depth < 3:
      inner = estimator_base(program, found[0], found[1], depth + 1)
      if inner:
        return inner
  return None


class Index(object):
  """Every estimator site and driver of a program, with the modes each estimator runs on a TPU."""

  def __init__(self, program):
    self.program = program
    self.sites = collections.OrderedDict()  # id(call) -> Site
    self.drivers = []
    self.run_configs = []  # (module, function, call, canonical name) of every RunConfig (tf's) the program makes
    self.wrappers = []  # (module, function, call) of every add_metrics/forward_features: a plain Estimator around one
    self._sites_cache = {}
    self._array_calls = []  # fit/evaluate/predict calls given arrays, judged once every site is known
    self._collecting = True
    for module, fn, call in program.calls():
      self._collect(module, fn, call)
    self._collecting = False
    for module, fn, call in self._array_calls:
      if self.fed_arrays(module, fn, call):
        self.drivers.append(Driver(module, fn, call, call.func.attr, call.func.value))
    self.drivers = [d for d in self.drivers if not (
        METHOD_MODES.get(d.method) == {PREDICT} and never_iterated(d.module, d.fn, d.call) and
        not _adapter(program, d.module, d.fn, d.receiver))]
    self.floating = set()  # modes of drivers whose estimator static analysis cannot find
    for driver in self.drivers:
      found = self.sites_of(driver.module, driver.fn, driver.receiver)
      modes = METHOD_MODES[driver.method] | (
          {EVAL} if self._evaluates_in_training(driver) else set())
      for site in found:
        site.attributed |= modes
      if not found:
        self.floating |= modes
    for site in self.sites.values():
      self._settle(site)

  def _evaluates_in_training(self, driver):
    """Whether training is handed a hook or monitor that evaluates the estimator (contrib.learn's
    ValidationMonitor, a hook class of the program that calls evaluate): the estimator evaluates too."""
    method = DRIVEN_METHODS.get(driver.method)
    if method is None or method.mode != TRAIN:
      return False
    value = syntax.argument(driver.call, method.hooks_at, method.hooks)
    if value is None:
      return False
    return any(hook.kind == hooks_lib.EVALUATES for hook in hooks_lib.hooks_in(
        self.program, driver.module, driver.fn, value))

  @property
  def predicts(self):
    """Whether the program predicts with an estimator (a predict call whose generator something runs)."""
    return any(METHOD_MODES.get(d.method) == {PREDICT} for d in self.drivers)

  def _collect(self, module, fn, call):
    program = self.program
    canonical = program.canonical(module, fn, call.func)
    if apis.is_run_config(canonical):
      self.run_configs.append((module, fn, call, canonical))
    if canonical in apis.ESTIMATOR_WRAPPERS:
      self.wrappers.append((module, fn, call))
    kind, base = site_kind(canonical), None
    if kind is None:
      found = program.callables.class_of(module, fn, call)
      base = estimator_base(program, found[0], found[1]) if found else None
      if base:
        # A subclass's own constructor: its model_fn is what it hands its base (estimators.py, super().__init__).
        kind = 'tpu_subclass' if base == 'tpu' else 'subclass'
        canonical = '%s.%s' % (found[0].name, found[1].name)
    if kind:
      self.sites[id(call)] = Site(module, fn, call, canonical, kind, anchors.anchor(program, module, call),
                                  base=base if kind == 'subclass' else None)
      if kind == 'factory':
        self.drivers.append(Driver(module, fn, call, 'train', call))
      return
    name = canonical or ''
    if apis.is_train_and_evaluate(name) or apis.is_experiment(name):
      receiver = syntax.argument(call, 0, 'estimator')
      if receiver is not None:
        method = 'train_and_evaluate' if apis.is_train_and_evaluate(name) else 'experiment'
        self.drivers.append(Driver(module, fn, call, method, receiver))
      return
    if not isinstance(call.func, ast.Attribute) or apis.is_tf(name):
      return
    attr = call.func.attr
    if attr in DRIVEN_METHODS and self.drives(module, fn, call):
      self.drivers.append(Driver(module, fn, call, attr, call.func.value))
    elif attr in ARRAY_METHODS:
      self._array_calls.append((module, fn, call))
    elif attr in EXPORT_METHODS and estimator_kind(program, module, fn, call.func.value, self) is not None:
      self.drivers.append(Driver(module, fn, call, 'export', call.func.value))

  def fed_arrays(self, module, fn, call):
    """Whether `x.fit/evaluate/predict(x, ...)` feeds arrays to a contrib.learn estimator the scanned code builds
    (no input_fn: its data feeder batches them)."""
    if self._collecting or syntax.keyword(call, 'input_fn') is not None or syntax.argument(call, 0, 'x') is None:
      return False  # (while sites are collected, a receiver's sites are not all known: asked again after)
    # (a subclass of core's Estimator takes input_fn first: `estimator.predict(test_input_fn)` feeds no arrays)
    return any(site.canonical.startswith('tensorflow.contrib.learn.') or
               (site.kind == 'subclass' and (site.base or '').startswith('tensorflow.contrib.learn.'))
               for site in self.sites_of(module, fn, call.func.value))

  def drives(self, module, fn, call):
    """Whether `x.train/evaluate/predict(...)` drives an estimator: x is one built in the scanned code, or the
    call names input_fn=, or x is only named like an estimator (a parameter `estimator`) but is handed a function
    the scanned files define (so sklearn's or Keras' classifier.predict(x) is left alone)."""
    input_fn = driven_input_fn(call)
    if input_fn is None or self.fed_arrays(module, fn, call):
      return False
    kind = estimator_kind(self.program, module, fn, call.func.value, self)
    if kind == BUILT or syntax.keyword(call, 'input_fn') is not None:
      return True
    return kind == NAMED and passes_a_function(self.program, module, fn, input_fn)

  def sites_of(self, module, fn, node, depth=0):
    """The sites an expression (a driver's receiver) can hold; [] when static analysis cannot tell."""
    key = (id(node), id(fn))
    if key in self._sites_cache:
      return self._sites_cache[key]
    self._sites_cache[key] = []
    found = []
    for origin in values.origins(self.program, module, fn, node):
      inner = wrapped(self.program, origin.module, origin.fn, origin.node)
      if isinstance(origin.node, ast.Call) and id(origin.node) in self.sites:
        found.append(self.sites[id(origin.node)])
      elif inner is not None and depth < 3:
        # add_metrics(estimator, metric_fn): what drives the wrapper runs the estimator's model_fn
        found += self.sites_of(origin.module, origin.fn, inner, depth + 1)
      elif isinstance(origin.node, ast.Attribute) and depth < 3:
        for method, value in callables.self_assignments(origin.module, origin.fn, origin.node.attr) \
            if isinstance(origin.node.value, ast.Name) and origin.node.value.id == 'self' else []:
          found += self.sites_of(origin.module, method, value, depth + 1)
    unique = []
    for site in found:
      if site not in unique:
        unique.append(site)
    self._sites_cache[key] = unique
    return unique

  def off_the_tpu(self, module, node):
    """Whether `node` is in the CPU and GPU branch of a ported program: `if FLAGS.use_tpu: TPUEstimator(...)` /
    `else: Estimator(...)`, and the RunConfig and params that branch makes for it. Not when the program fixes
    use_tpu false in its code (TPUEstimator(use_tpu=False), or its TPU branch dead): then that branch is what runs."""
    return syntax.tpu_branch(syntax.branch_conditions(module, node)) == 'cpu' and any(
        other.kind in ('tpu', 'tpu_subclass') and not cpu_only(other) and
        not reachable.in_dead_code(self.program, other.module, other.call) for other in self.sites.values())

  def _settle(self, site):
    """The modes an estimator runs, and which of them on a TPU once ported."""
    returned = _returned(site)
    if site.attributed:
      site.modes = frozenset(site.attributed | (self.floating if returned else set()))
      site.known = True
    elif self.floating:
      site.modes, site.known = frozenset(self.floating), True
    else:
      site.modes, site.known = EVERYTHING, False
    runs = site.modes & mode_branches.ALL
    if site.kind in ('tpu', 'tpu_subclass'):
      site.ported = True
      if cpu_only(site) and any(other.kind in ('tpu', 'tpu_subclass') and not cpu_only(other)
                                for other in self.sites.values()):
        site.tpu_modes = frozenset()  # the CPU branch of a program that builds its TPU estimator elsewhere
        return
      # (a TPUEstimator with use_tpu=False and no other: the program never reaches a TPU, and every mode it runs
      # is the port's, as for an unported estimator; the use_tpu it is given is the change)
      eval_on_tpu = syntax.keyword(site.call, 'eval_on_tpu')
      if eval_on_tpu is not None and syntax.literal(eval_on_tpu) is False:
        runs = runs - {EVAL}
      site.tpu_modes = frozenset(runs)
      return
    if self.off_the_tpu(site.module, site.call):
      site.ported, site.tpu_modes = False, frozenset()
      return
    site.ported = bool(runs & {TRAIN, EVAL}) or not site.known
    site.tpu_modes = frozenset(runs) if site.ported else frozenset()


# Where a generator's value goes without running it: printing or formatting it shows '<generator object ...>'.
_SHOWN_ONLY = frozenset(['print', 'str', 'repr', 'format', 'type', 'id'])


def cpu_only(site):
  """Whether a TPUEstimator is built with use_tpu=False written out: it runs model_fn on the CPU only."""
  use_tpu = syntax.keyword(site.call, 'use_tpu')
  return site.kind in ('tpu', 'tpu_subclass') and use_tpu is not None and syntax.literal(use_tpu) is False


def never_iterated(module, fn, call):
  """Whether a predict call's generator is never run: Estimator.predict (and contrib.learn's, as_iterable=True
  by default) is a generator, so nothing is predicted (nothing reaches a TPU) until something iterates it. True
  when the call is a statement of its own, or its value is assigned to a name the scope only prints or formats."""
  if syntax.literal(syntax.keyword(call, 'as_iterable')) is False:
    return False  # contrib.learn's as_iterable=False predicts at once
  parent = module.parents.get(id(call))
  if isinstance(parent, ast.Expr):
    return True
  name = syntax.plain_target(parent)
  if name is None:
    return False
  nodes = [node for node, _ in syntax.walk_local(fn)] if fn is not None else list(ast.walk(module.tree))
  for node in nodes:
    if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
      user = module.parents.get(id(node))
      if not (isinstance(user, ast.Call) and node in user.args and _shown_only(user)):
        return False  # iterated, handed on, or kept: it may run
  return True


def _adapter(program, module, fn, receiver):
  """Whether a driver's receiver holds contrib.learn's SKCompat, whose predict returns arrays (it runs at once)."""
  return any(isinstance(origin.node, ast.Call) and
             program.canonical(origin.module, origin.fn, origin.node.func) in apis.ESTIMATOR_ADAPTERS
             for origin in values.origins(program, module, fn, receiver))


def discarded(program, module, fn, call):
  """Whether what a call makes is never used: a statement of its own, or assigned to names that nothing reads
  (in its scope, the functions nested in it, or another scanned file importing it), as a TrainSpec built beside a
  train_and_evaluate left commented out: its input_fn never runs."""
  parent = module.parents.get(id(call))
  if isinstance(parent, ast.Expr):
    return True
  return isinstance(parent, ast.Assign) and _assigned_loads(program, module, fn, parent) == []


def read_only_where(program, module, fn, node, accepted):
  """Whether what the statement holding `node` assigns to names is read only where `accepted(module, load)` says
  (each load an ast.Name), as MetricSpecs that only a ValidationMonitor reads."""
  statement = module.statement_of(node)
  loads = _assigned_loads(program, module, fn, statement) if isinstance(statement, ast.Assign) else None
  return loads is not None and all(accepted(module, load) for load in loads)


def _assigned_loads(program, module, fn, assign):
  """The reads of the names an assignment binds (in its scope and the functions nested in it), or None when a
  target is no plain name or a module-level name may be read by another scanned file importing it."""
  if not all(isinstance(t, ast.Name) for t in assign.targets):
    return None
  names = set(t.id for t in assign.targets)
  loads = [node for node in ast.walk(fn if fn is not None else module.tree)
           if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load)]
  if fn is None:  # a module-level name another scanned file can import
    for other in program.modules:
      for node in ast.walk(other.tree) if other is not module else ():
        if (isinstance(node, ast.Name) and node.id in names) or (isinstance(node, ast.alias) and (
            node.name in names or node.name == '*')) or (isinstance(node, ast.Attribute) and node.attr in names):
          return None
  return loads


def _shown_only(call):
  func = call.func
  name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
  return name in _SHOWN_ONLY or syntax.dotted(func) in _REFUSED_UNRUN


# Serialisers that refuse a generator before taking anything from it (TypeError: cannot pickle 'generator' object;
# not JSON serializable): handed one, they run none of its predictions.
_REFUSED_UNRUN = frozenset(['pickle.dump', 'pickle.dumps', 'json.dump', 'json.dumps'])


def _returned(site):
  """Whether a function hands the estimator to its caller (return it, or return the name it is assigned to)."""
  module, node = site.module, site.call
  parent = module.parents.get(id(node))
  while parent is not None and not isinstance(parent, syntax.SCOPE_NODES + (ast.Module,)):
    if isinstance(parent, ast.Return):
      return True
    if isinstance(parent, ast.Assign):
      names = set(name for target in parent.targets for name in syntax.assigned_names(target))
      scope = site.fn if site.fn is not None else module.tree
      for child, _ in syntax.walk_local(scope):
        if isinstance(child, ast.Return) and child.value is not None and syntax.names_in(child.value) & names:
          return True
      return False
    parent = module.parents.get(id(parent))
  return False


def passes_a_function(program, module, fn, node):
  """A function the scanned files define, one TensorFlow made, or one named as an input_fn (`input_fn`,
  `input_fn_lib.input_fn_builder(...)`) even when its file was not scanned."""
  if 'input_fn' in syntax.render(node):
    return True
  return any(isinstance(t, callables.Fn) or made_by_tf_input_fn(t)
             for t in program.callables.resolve(module, fn, node))


def made_by_tf_input_fn(target):
  made_by = getattr(target, 'made_by', None)
  return bool(made_by) and apis.last(made_by) in apis.QUEUE_INPUT_FN_MAKERS


def wrapped(program, module, fn, node):
  """The estimator expression an add_metrics/forward_features call wraps (a new plain Estimator around its
  model_fn, extenders.py), or contrib.learn's SKCompat holds (its fit/evaluate/predict call the estimator's with
  the arrays); None for any other node."""
  if not isinstance(node, ast.Call) or program.canonical(module, fn, node.func) not in \
      apis.ESTIMATOR_WRAPPERS | apis.ESTIMATOR_ADAPTERS:
    return None
  return syntax.argument(node, 0, 'estimator')


def estimator_kind(program, module, fn, node, index=None, depth=0):
  """BUILT when an expression holds an Estimator built by a constructor (or by a project function returning one),
  NAMED for a parameter or attribute only named like one (mnist_tpu.py's train(fv, job, estimator, ...)), else
  None."""
  if isinstance(node, ast.Call):
    if program.callables.constructs(module, fn, node, lambda n: site_kind(n) is not None):
      return BUILT
    inner = wrapped(program, module, fn, node)
    if inner is not None and depth <= 3:
      # add_metrics(estimator, metric_fn): the estimator the name held where the wrapper is called
      for origin in values.origins(program, module, fn, inner):
        if isinstance(origin.node, ast.Call) and estimator_kind(program, origin.module, origin.fn, origin.node, index,
                                                                depth + 1):
          return BUILT
    found = program.callables.class_of(module, fn, node)
    if found and estimator_base(program, found[0], found[1]):
      return BUILT
    return None
  if isinstance(node, ast.Attribute):
    return NAMED if _named_like_estimator(node.attr) else None
  if not isinstance(node, ast.Name) or depth > 3:
    return None
  kind, bound, owner_module, owner = program.lookup(module, fn, node.id)
  if kind == 'value':
    return estimator_kind(program, owner_module, owner, bound, index, depth + 1)
  if kind == 'import':  # `from model import classifier` (or `*`): a module-level estimator of a scanned file
    imported = program.find_value(bound)
    if imported is not None:
      return estimator_kind(program, imported[0], None, imported[1], index, depth + 1)
  if kind == 'other':
    for value, path in values.assignments(program, owner_module, owner, node.id):
      for origin in values.origins(program, owner_module, owner, value, tuple(path)):
        if isinstance(origin.node, ast.Call) and estimator_kind(program, origin.module, origin.fn, origin.node,
                                                                 index, depth + 1):
          return BUILT
  if kind == 'param':
    # A parameter every scanned caller hands an Estimator it built (train_model(model, data) called with the
    # Estimator _main built), whatever its name.
    for origin in values.origins(program, module, fn, node):
      if isinstance(origin.node, ast.Call) and estimator_kind(program, origin.module, origin.fn, origin.node, index,
                                                              depth + 1):
        return BUILT
  if kind == 'param' and _named_like_estimator(node.id):
    return NAMED
  return None


def _named_like_estimator(name):
  name = name.lower().strip('_')
  return 'estimator' in name or name in ('est', 'clf') or name.endswith(('classifier', 'regressor'))


def is_estimator_super_init(program, module, fn, call):
  """super().__init__(model_fn=...) in a class that builds on an Estimator or a TPUEstimator."""
  func = call.func
  if not (isinstance(func, ast.Attribute) and func.attr == '__init__' and isinstance(func.value, ast.Call)
          and isinstance(func.value.func, ast.Name) and func.value.func.id == 'super' and fn is not None):
    return False
  owner = module.parents.get(id(fn))
  return isinstance(owner, ast.ClassDef) and estimator_base(program, module, owner) is not None
