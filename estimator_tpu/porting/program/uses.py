"""What the program hands its estimators: each model_fn with the modes it runs on a TPU and the params it gets,
and each input_fn with the call that uses it (train, evaluate, predict, a TrainSpec/EvalSpec, an Experiment, a
boosted-trees factory), its mode and the estimators it feeds.

estimators.Index finds the estimators and what the program does with them; this module follows their model_fn=,
params= and input_fn= arguments to the functions the program defines, once, for the report's checks and the
rewrite's fixers alike.
"""
import ast
import collections

from estimator_tpu.porting.program import anchors
from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import estimators
from estimator_tpu.porting.program import mode_branches
from estimator_tpu.porting.program import params as params_lib
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values

TRAIN, EVAL, PREDICT = mode_branches.TRAIN, mode_branches.EVAL, mode_branches.PREDICT
METHODS = estimators.DRIVEN_METHODS

# One use of a model_fn: the function, the modes it runs on a TPU, what params holds, whether a TPUEstimator
# (or a port of one) calls it.
ModelFnUse = collections.namedtuple('ModelFnUse', ['target', 'modes', 'params', 'ported'])


class ModelFnArgument(collections.namedtuple('ModelFnArgument', ['module', 'fn', 'call', 'node', 'targets',
                                                                 'site', 'anchor'])):
  """A model_fn= argument (of an estimator, or of a subclass's super().__init__): what it resolves to (callables.Fn
  or callables.Unresolved), the estimator Site it is given to (None for super().__init__), and the anchor of the
  argument."""


class InputFnUse(collections.namedtuple('InputFnUse', ['module', 'fn', 'call', 'node', 'mode', 'sites',
                                                       'targets', 'anchor'])):
  """An input_fn argument: the call that passes it (estimator.train, TrainSpec, ...), the expression, the mode it
  feeds, the estimator Sites it reaches ([] when static analysis cannot tell), what it resolves to, and the anchor of
  the call."""

  @property
  def on_tpu(self):
    """Whether its mode runs on a TPU once the program is ported (unknown estimators: yes)."""
    return not self.sites or any(self.mode in site.tpu_modes for site in self.sites)

  @property
  def ported(self):
    """Whether an estimator it feeds is ported (then the input_fn must take params); unknown: yes."""
    return not self.sites or any(site.ported for site in self.sites)


def read_uses(program):
  """The Uses of a program's estimators, read once per program."""
  if 'uses' not in program.memo:
    program.memo['uses'] = Uses(program, estimators.Index(program))
  return program.memo['uses']


class Uses(object):
  """The model_fns and input_fns of a program's estimators, in program order."""

  def __init__(self, program, index):
    self.program = program
    self.index = index
    self.params = {}  # id(site call) -> params_lib.Params of an Estimator/TPUEstimator
    self.model_fn_arguments = []  # ModelFnArgument, estimators first, then super().__init__ calls
    self.model_fns = collections.OrderedDict()  # id(def) -> ModelFnUse
    self.input_fns = []  # InputFnUse
    for site in index.sites.values():
      self._site(site)
    for module, fn, call in program.calls():
      self._call(module, fn, call)
    self.input_fn_targets = collections.OrderedDict()  # (id(node), via, partial) -> [Fn, set of TPU modes]
    for use in self.input_fns:
      if use.ported:
        for target in use.targets:
          if isinstance(target, callables.Fn):
            # One per functools.partial too: each partial that binds params is a change of its own.
            key = (id(target.node), tuple(id(v[2]) for v in target.via),
                   id(target.partial[1]) if target.partial else None)
            entry = self.input_fn_targets.setdefault(key, [target, set()])
            if use.on_tpu:
              entry[1].add(use.mode)

  @property
  def unresolved_input_fns(self):
    """How many input_fn arguments of ported estimators static analysis could not follow."""
    return sum(1 for use in self.input_fns if use.ported for target in use.targets
               if isinstance(target, callables.Unresolved) and not estimators.made_by_tf_input_fn(target))

  def input_fn_targets_of(self, site):
    """What every input_fn argument that can feed an estimator Site resolves to (callables.Fn or Unresolved):
    those of uses that name the site, and of those whose estimator static analysis cannot tell."""
    return [target for use in self.input_fns if not use.sites or site in use.sites for target in use.targets]

  def model_fns_of(self, site):
    """The functions (callables.Fn) an estimator Site runs as its model_fn."""
    return [t for argument in self.model_fn_arguments if argument.site is site for t in argument.targets
            if isinstance(t, callables.Fn)]

  # --- collecting ---------------------------------------------------------------------------------------------------

  def _site(self, site):
    if site.kind in ('estimator', 'tpu'):
      node = params_lib.argument(site.call, site.kind)
      if node is None:
        node = values.star_keyword(site.module, site.fn, site.call, 'params')
      params = params_lib.describe(self.program, site.module, site.fn, node) if node is not None else \
          params_lib.Params()
      self.params[id(site.call)] = params
      model_fn = syntax.argument(site.call, 0, 'model_fn')
      if model_fn is None:  # Estimator(**keys) with keys['model_fn'] = ... written just before
        model_fn = values.star_keyword(site.module, site.fn, site.call, 'model_fn')
      if model_fn is not None:
        targets = self.program.callables.resolve(site.module, site.fn, model_fn)
        self.model_fn_arguments.append(ModelFnArgument(site.module, site.fn, site.call, model_fn, targets, site,
                                                       anchors.anchor(self.program, site.module, model_fn)))
        for target in targets:
          if isinstance(target, callables.Fn):
            self._add_model_fn(target, site.tpu_modes, [params], site.ported)
    elif site.kind == 'factory':
      self._input_fn(site.module, site.fn, site.call, syntax.argument(site.call, 0, 'train_input_fn'), TRAIN, [site])

  def _call(self, module, fn, call):
    index = self.index
    name = self.program.canonical(module, fn, call.func) or ''
    if id(call) in index.sites:
      return
    if apis.is_train_spec(name) or apis.is_eval_spec(name):
      if estimators.discarded(self.program, module, fn, call):
        return  # a spec nothing hands to train_and_evaluate: its input_fn never runs
      mode = TRAIN if apis.is_train_spec(name) else EVAL
      self._input_fn(module, fn, call, syntax.argument(call, 0, 'input_fn'), mode, [])
    elif apis.is_experiment(name):
      receiver = syntax.argument(call, 0, 'estimator')
      found = index.sites_of(module, fn, receiver) if receiver is not None else []
      # Experiment(estimator, train_input_fn, eval_input_fn, ...): by keyword or by position
      for mode, position, keyword in ((TRAIN, 1, 'train_input_fn'), (EVAL, 2, 'eval_input_fn')):
        self._input_fn(module, fn, call, syntax.argument(call, position, keyword), mode, found)
    elif apis.is_run_config(name) or apis.is_tpu_config(name) or apis.is_train_and_evaluate(name):
      return
    elif isinstance(call.func, ast.Attribute) and call.func.attr in METHODS and index.drives(module, fn, call):
      mode = METHODS[call.func.attr].mode
      found = index.sites_of(module, fn, call.func.value)
      self._input_fn(module, fn, call, estimators.driven_input_fn(call), mode, found)
    elif estimators.is_estimator_super_init(self.program, module, fn, call):
      model_fn = syntax.argument(call, 0, 'model_fn')
      if model_fn is not None:
        targets = self.program.callables.resolve(module, fn, model_fn)
        self.model_fn_arguments.append(ModelFnArgument(module, fn, call, model_fn, targets, None,
                                                       anchors.anchor(self.program, module, model_fn)))
        for target in targets:
          if isinstance(target, callables.Fn):
            self._add_model_fn(target, mode_branches.ALL, [], True)

  def _input_fn(self, module, fn, call, node, mode, sites):
    if node is None:
      return
    targets = self.program.callables.resolve(module, fn, node)
    self.input_fns.append(InputFnUse(module, fn, call, node, mode, list(sites), targets,
                                     anchors.anchor(self.program, module, call)))

  def _add_model_fn(self, target, modes, params, ported):
    key = id(target.node)
    if key in self.model_fns:
      old = self.model_fns[key]
      target = old.target if old.target.bound_positional >= target.bound_positional else target
      self.model_fns[key] = ModelFnUse(target, old.modes | modes, old.params + params, old.ported or ported)
    else:
      self.model_fns[key] = ModelFnUse(target, frozenset(modes), list(params), ported)
