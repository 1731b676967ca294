"""What the port does with the reading's facts about input: which estimator each train/evaluate/predict (or
TrainSpec/EvalSpec) feeds, the input_fn it passes, and how each batch size there becomes params['batch_size'].

The facts are the program model's (program/uses.py, program/inputs.py): an input_fn use, its batch sites and
where each batch size comes from (a SizeOrigin). A plan adds what only the rewrite decides: `how` the size is
replaced, and `origin`, the expression of the global batch as the estimator's caller sees it (for
TPUEstimator's train/eval/predict_batch_size).
"""
import ast
import collections

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import inputs
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values
from estimator_tpu.porting.rewrite import edits as edits_lib

TRAIN, EVAL, PREDICT = inputs.TRAIN, inputs.EVAL, inputs.PREDICT
FOLLOW_DEPTH = 2  # how many project calls deep from an input_fn the port changes a batch

# The expression of a batch size, `node` in `scope` of `module`; or, when `suffix` is set, `node` followed by
# `suffix` (fv.batch_size, fv the parameter of the builder that was called with FLAGS: FLAGS and .batch_size).
Origin = collections.namedtuple('Origin', ['module', 'scope', 'node', 'suffix'])
Origin.__new__.__defaults__ = (None,)


class BatchPlan(object):
  """A batch site of an input_fn the port changes: the fact (inputs.BatchSite), the input_fn it is reached
  from, the modes of every input_fn that runs it, and how its size becomes params['batch_size']:
  'params' (already), 'replace' (in the input_fn), 'argument' (the argument of the input_fn's call of the
  helper that batches), 'thread' (a helper that reads a global gets params from the input_fn), None (cannot
  tell)."""

  def __init__(self, site, proper, modes):
    self.site = site
    self.module, self.fn, self.call, self.size = site.module, site.fn, site.call, site.size
    self.chain = site.chain
    self.proper = proper
    self.modes = modes
    self.drops = site.drops is True  # the reading's drop_remainder, True when it is known to be True
    self.how = None
    self.origin = None


class InputPlan(collections.namedtuple('InputPlan', ['use', 'proper', 'batches', 'estimators'])):
  """One input_fn use: the fact (uses.InputFnUse), the one function it resolves to (None: several or none), the
  BatchPlans it reaches, and the estimator Sites of the port it feeds (several when the program chooses one of
  them at run time; none when that cannot be told)."""

  @property
  def mode(self):
    return self.use.mode


class Plans(object):
  """The InputPlans of a port, and its BatchPlans by (input_fn, batch call)."""

  def __init__(self, port):
    self.port = port
    self.batches = collections.OrderedDict()  # (id(input_fn def), id(batch call)) -> BatchPlan
    self._modes = {}  # id(batch call) -> the modes of every input_fn that runs it
    self.inputs = []
    for use in port.uses.input_fns:
      if _ported_kind(port.program, use) and self._feeds_a_port(use):
        self.inputs.append(self._plan(use))

  def _feeds_a_port(self, use):
    """Whether the port changes this input: it feeds an estimator the port makes a TPUEstimator (or one the
    reading cannot see). A premade estimator left as a TODO keeps input_fns it can call: no params there."""
    if not use.sites:  # the reading cannot tell which estimator it feeds: the port's, if it makes one
      return bool(self.port.estimators) and all(s.kind != 'premade' for s in self.port.uses.index.sites.values())
    if any(site in self.port.held_back or (site.kind in ('estimator', 'premade') and site not in self.port.estimators)
           for site in use.sites):
      return False  # it also feeds an estimator left plain (a CPU branch), which sets no params['batch_size']
    return any(site in self.port.estimators for site in use.sites)

  def _plan(self, use):
    estimators = self._estimators_of(use)
    targets = [t for t in use.targets if isinstance(t, callables.Fn)]
    if len(targets) != 1:
      return InputPlan(use, None, [], estimators)
    proper = targets[0]
    batches = []
    for site in inputs.read_input_fn(self.port.program, proper).batches:
      if len(site.chain) > FOLLOW_DEPTH or not all(step.single and not step.handed and
                                                   not step.callee.bound_positional for step in site.chain):
        continue  # the port changes batches in the input_fn and the plain functions it calls
      key = (id(proper.node), id(site.call))
      if key not in self.batches:
        modes = self._modes.setdefault(id(site.call), set())
        plan = BatchPlan(site, proper, modes)
        plan.how, plan.origin = self._how(plan)
        self.batches[key] = plan
      plan = self.batches[key]
      plan.modes.add(use.mode)
      batches.append(plan)
    return InputPlan(use, proper, batches, estimators)

  def inputs_without_params(self, site):
    """The input_fn a TensorFlow function made for this estimator (numpy_input_fn, pandas_input_fn: no params
    argument, which TPUEstimator refuses and the port cannot add), as its source text; else None."""
    for target in self.port.uses.input_fn_targets_of(site):
      if isinstance(target, callables.Unresolved) and target.made_by:
        return '`%s(...)`' % target.made_by.replace('tensorflow.', 'tf.', 1)
    return None

  def _estimators_of(self, use):
    """The estimators a use feeds: the Sites the reading finds for it, else the program's only estimator."""
    found = [site for site in use.sites if site in self.port.estimators]
    if found or len(self.port.estimators) != 1:
      return found
    return list(self.port.estimators)

  # --- how a batch size becomes params['batch_size'] -------------------------------------------------------------

  def _how(self, plan):
    if plan.size is None:
      return None, None
    if inputs.reads_params(plan.size):
      return 'params', None
    return self._from_origin(plan, plan.site.origin, plan.fn, plan.chain)

  def _from_origin(self, plan, origin, fn, chain):
    """(how, Origin) for a SizeOrigin of a size used in `fn`, reached from the input_fn through `chain`."""
    kind, node, module = origin.kind, origin.node, origin.module
    default = 'replace' if fn is plan.proper.node else 'thread'
    if kind == 'params':
      return 'params', None
    if kind == 'literal':
      return default, Origin(module, origin.scope, node)
    if kind in ('flag', 'module value', 'import'):
      return default, Origin(module, None, node)
    if kind == 'closure':
      return default, Origin(module, origin.owner, node)
    if kind == 'parameter':
      return self._from_parameter(plan, origin.owner, node.id, node, fn, chain)
    if kind in ('attribute', 'unknown'):
      binding = origin.bound[0]
      if binding == 'param':
        return self._from_parameter(plan, origin.owner, syntax.root_name(node), node, fn, chain)
      if binding is None or (kind == 'unknown' and binding == 'value'):
        return None, None
      return default, Origin(module, origin.owner, node)
    return None, None  # an expression that is no name

  def _from_parameter(self, plan, owner, name, node, fn, chain):
    """A batch size read from a parameter `name` of `owner`: a helper the input_fn calls (its argument), or the
    builder around the input_fn (its argument in the builder call)."""
    if chain and owner is fn and chain[-1].callee.node is owner:
      step = chain[-1]
      argument = callables.bind_arguments(step.call, owner).get(name)
      default = values.default_of(owner, name) if argument is None and len(chain) == 1 else None
      if default is not None:
        # Left to the helper's default (`def input_fn(x, y, batch_size=16)`): the input_fn's call will hand
        # params['batch_size'] on by keyword, and the default is the global batch.
        module = self.port.program.module_of(owner)
        scope = self.port.program.enclosing_function(module, owner)
        inner = self._from_origin(plan, inputs.trace_size(self.port.program, module, scope, default), scope, ())
        return ('argument', inner[1]) if inner[0] is not None else (None, None)
      if argument is None or len(chain) != 1:
        return None, None
      if isinstance(node, ast.Attribute):
        # settings.batch_size, settings the helper's parameter: the global batch is that attribute of the
        # argument the input_fn hands over (`input_fn(x, y, settings)`), never the object itself.
        if inputs.reads_params(argument) or not isinstance(argument, (ast.Name, ast.Attribute)):
          return None, None
        suffix = self._attribute_suffix(self.port.program.module_of(owner), node)
        return 'argument', Origin(step.module, step.caller, argument, suffix)
      # The input_fn calls the helper: its argument becomes params['batch_size'].
      inner = self._from_origin(plan, inputs.trace_size(self.port.program, step.module, step.caller, argument),
                                step.caller, ())
      if inner[0] is None and not inputs.reads_params(argument):
        return 'argument', Origin(step.module, step.caller, argument)  # args.batch_size, args a parameter
      return ('argument', inner[1]) if inner[0] is not None else (None, None)
    for module, scope, call, builder in plan.proper.via:
      if builder is owner:
        argument = callables.bind_arguments(call, builder).get(name)
        if argument is None:
          # Left to its default (`def builder(mode, batch_size=BATCH_SIZE)`), which the def's own scope evaluates.
          argument = values.default_of(builder, name)
          module = self.port.program.module_of(builder)
          scope = self.port.program.enclosing_function(module, builder)
        if argument is None:
          return None, None
        how = 'replace' if fn is plan.proper.node else 'thread'
        if isinstance(node, ast.Attribute):  # fv.batch_size, fv the builder's parameter
          return how, Origin(module, scope, argument, self._attribute_suffix(plan.proper.module, node))
        return how, Origin(module, scope, argument)
    return None, None

  def _attribute_suffix(self, module, node):
    """What follows the root name of `settings.batch_size` (`.batch_size`), as the program writes it."""
    return edits_lib.code_of(self.port.file_of(module).node(node))[len(syntax.root_name(node)):]

  # --- questions of the fixers ------------------------------------------------------------------------------------

  def uses_of(self, site):
    return [p for p in self.inputs if any(e is site for e in p.estimators)]

  def batch_origins(self, site, mode):
    """[Origin or None] of the batch sizes the estimator's `mode` input_fns use."""
    origins = []
    for plan in self.uses_of(site):
      if plan.mode == mode:
        for batch in plan.batches:
          origins.append(batch.origin if batch.how != 'params' else None)
        if not plan.batches:
          origins.append(None)
    return origins

  def code_of(self, origin):
    """The source of an Origin's expression."""
    return edits_lib.code_of(self.port.file_of(origin.module).node(origin.node)) + (origin.suffix or '')

  def batch_expression(self, site, mode):
    """Code of the batch size the estimator's `mode` input_fns use, as seen from where the estimator is built."""
    origins = self.batch_origins(site, mode)
    if not origins or any(o is None for o in origins):
      return None
    codes = set()
    for origin in origins:
      if not self.visible(site.module, site.fn, origin, at=site.call):
        return None
      codes.add(self.code_of(origin))
    return codes.pop() if len(codes) == 1 else None

  def visible(self, module, scope, origin, at=None):
    """Whether an Origin's expression means the same in `scope` of `module`: a literal; names bound to the same
    thing; or parameters of the same name (the flag values handed to both). With `at` (the node it will be written
    in), a name the scope assigns must be assigned above it (`batch_size = FLAGS.batch_size` written after the
    Estimator's statement is unbound there)."""
    if syntax.is_literal(origin.node) and not origin.suffix:
      return True
    if module is not origin.module:
      return False
    program = self.port.program
    for name in free_names(origin.node):
      here = program.lookup(module, scope, name)
      there = program.lookup(origin.module, origin.scope, name)
      if here[0] is None or there[0] is None:
        return False
      if here[0] == 'param' and there[0] == 'param':
        continue
      if here[1] is not there[1] and here[1] != there[1]:
        return False
      if at is not None and here[0] == 'value' and here[3] is scope and not any(
          getattr(value, 'lineno', at.lineno) < at.lineno for value, _ in program.assignments(module, scope, name)):
        return False
    return True


def _ported_kind(program, use):
  """train/evaluate/predict calls and TrainSpec/EvalSpec: the uses the port changes (not Experiment's, not a
  boosted-trees factory's)."""
  call = use.call
  if isinstance(call.func, ast.Attribute) and call.func.attr in ('train', 'evaluate', 'predict'):
    return True
  name = program.canonical(use.module, use.fn, call.func) or ''
  return (apis.is_train_spec(name) or apis.is_eval_spec(name)) and '.estimator.' in name


def free_names(node):
  """Names an expression reads (not attribute names, not keyword names, not lambda parameters), in order."""
  names = []
  for child in syntax.in_source_order(node):
    if isinstance(child, ast.Name) and child.id not in names and not _lambda_parameter(node, child):
      names.append(child.id)
  return names


def _lambda_parameter(top, name):
  for child in ast.walk(top):
    if isinstance(child, ast.Lambda) and name.id in syntax.param_names(child) and \
        any(n is name for n in ast.walk(child.body)):
      return True
  return False
