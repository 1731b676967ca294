"""Checks where estimators are built and driven (rules 1, 2, 8, 9, 14, 17), and the model_fns and
input_fns found there, with the modes each input_fn is used in."""
import ast
import collections

from estimator_tpu.porting.report import apis
from estimator_tpu.porting.report import input_fns
from estimator_tpu.porting.report import program as program_lib
from estimator_tpu.porting.report import pyast

# Estimator method -> (mode of its input_fn, position of steps, position of max_steps).
METHODS = {'train': (input_fns.TRAIN, 2, 3), 'evaluate': (input_fns.EVAL, 1, None), 'predict': (input_fns.PREDICT,
                                                                                                None, None)}


class Entries(object):
  """What the scan of estimator call sites found for the model_fn and input_fn checks."""

  def __init__(self):
    self.model_fns = []  # program.Fn
    self.input_fns = collections.OrderedDict()  # (id(node), via) -> [Fn, set of modes]


def check_call_sites(collector):
  """Checks every call in every module; returns the Entries found."""
  # Checks rule 1 (TPUEstimator).
  entries = Entries()
  program = collector.program
  for module in program.modules:
    for node in ast.walk(module.tree):
      if isinstance(node, ast.ClassDef) and _estimator_base(module, node) not in (None, 'tpu'):
        collector.required(module, node, 1, '`class %s(%s)` builds on a plain Estimator -> build on '
                           'tf.estimator.tpu.TPUEstimator (with a tpu RunConfig and the train/eval/predict batch '
                           'sizes): only TPUEstimator runs model_fn on TPU cores.' % (node.name, _short(
                               _estimator_base(module, node))))
    scopes = [module.tree] + [n for n in ast.walk(module.tree) if isinstance(n, pyast.FUNCTION_NODES)]
    for scope in scopes:
      fn = None if scope is module.tree else scope
      for node, _ in pyast.walk_local(scope):
        if isinstance(node, ast.Call):
          _CallSite(collector, entries, module, fn, node).check()
  return entries


class _CallSite(object):

  def __init__(self, collector, entries, module, fn, call):
    self.collector = collector
    self.entries = entries
    self.program = collector.program
    self.module = module
    self.fn = fn
    self.call = call
    self.canonical = self.program.canonical(module, fn, call.func)

  def check(self):
    # Checks rule 1 (TPUEstimator), rule 8 (iterations per loop), rule 14 (pod slices).
    name = self.canonical or ''
    if apis.is_plain_estimator(name):
      self._plain_estimator(name)
    elif apis.is_keras_to_estimator(name):
      self.collector.required(self.module, self.call, 1, '`%s` makes a plain Estimator -> call the Keras model '
                              'inside a model_fn(features, labels, mode, params) for tf.estimator.tpu.TPUEstimator, '
                              'or move to TPUStrategy (mnist_keras.py).' % _short(name))
    elif apis.is_tpu_estimator(name):
      self._tpu_estimator()
    elif apis.is_run_config(name):
      self._run_config(name)
    elif apis.is_tpu_config(name) and not pyast.has_star_args(self.call):
      if pyast.argument(self.call, 0, 'iterations_per_loop') is None:
        self.collector.advice(self.module, self.call, 8, 'TPUConfig without iterations_per_loop runs 2 steps per '
                              'host round trip -> set iterations_per_loop (hundreds of steps for a small model); '
                              'checkpoints and hooks only happen between loops.')
    elif apis.is_train_spec(name) or apis.is_eval_spec(name):
      self._spec(name)
    elif apis.is_train_and_evaluate(name):
      self.collector.advice(self.module, self.call, 14, 'tf.estimator.train_and_evaluate with a TF_CONFIG cluster '
                            '(chief, workers, ps) has no TPU counterpart: one TPUEstimator program drives a whole TPU '
                            'slice (--num_shards cores) -> on a TPU, loop train(max_steps=...) and evaluate(steps=...) '
                            'in one program.')
    elif isinstance(self.call.func, ast.Attribute) and self.call.func.attr in METHODS:
      self._estimator_method()
    elif self._is_estimator_super_init():
      self._model_fn_argument()
    self._model_dir()

  # --- constructors -------------------------------------------------------------------------------------------

  def _is_estimator_super_init(self):
    """super().__init__(model_fn=...) in a class that builds on an Estimator or a TPUEstimator."""
    func = self.call.func
    if not (isinstance(func, ast.Attribute) and func.attr == '__init__' and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == 'super' and self.fn is not None):
      return False
    owner = self.module.parents.get(id(self.fn))
    return isinstance(owner, ast.ClassDef) and _estimator_base(self.module, owner) is not None

  def _plain_estimator(self, name):
    # Checks rule 1 (TPUEstimator).
    short = _short(name)
    if apis.last(name) == 'Estimator':
      self.collector.required(self.module, self.call, 1, '`%s(...)` -> tf.estimator.tpu.TPUEstimator(model_fn, '
                              'config=tf.estimator.tpu.RunConfig(...), use_tpu=..., train_batch_size=..., '
                              'eval_batch_size=..., predict_batch_size=...): TPUEstimator runs the TPU loop, splits '
                              'every batch over the cores and so needs the global batch sizes.' % short)
      self._model_fn_argument()
    else:
      self.collector.required(self.module, self.call, 1, '`%s` is a premade estimator, which has no TPU version -> '
                              'write a model_fn(features, labels, mode, params) with the same network and use '
                              'tf.estimator.tpu.TPUEstimator.' % short)

  def _tpu_estimator(self):
    # Checks rule 1 (TPUEstimator).
    self._model_fn_argument()
    if pyast.has_star_args(self.call):
      return
    use_tpu = pyast.keyword(self.call, 'use_tpu')
    if use_tpu is not None and pyast.literal(use_tpu) is False:
      return  # runs model_fn on the CPU only: nothing about batches or the TPU config applies
    if pyast.argument(self.call, 2, 'config') is None:
      self.collector.required(self.module, self.call, 1, 'TPUEstimator without config= -> pass '
                              'config=tf.estimator.tpu.RunConfig(tpu_config=TPUConfig(iterations_per_loop, '
                              'num_shards)): TPUEstimator refuses a missing config.')
    if pyast.keyword(self.call, 'train_batch_size') is None:
      self.collector.required(self.module, self.call, 1, 'TPUEstimator without train_batch_size -> pass the global '
                              'train_batch_size: with use_tpu it refuses to run without one.')
    missing = [n for n in ('eval_batch_size', 'predict_batch_size') if pyast.keyword(self.call, n) is None]
    if missing:
      self.collector.advice(self.module, self.call, 1, 'TPUEstimator without %s -> pass %s if this estimator '
                            'evaluates or predicts on a TPU, which needs it.' % (' or '.join(missing),
                                                                               ' and '.join(missing)))

  def _model_fn_argument(self):
    # Checks rule 5 (TPUEstimatorSpec).
    model_fn = pyast.argument(self.call, 0, 'model_fn')
    if model_fn is None:
      return
    for target in self.program.resolve_callables(self.module, self.fn, model_fn):
      if isinstance(target, program_lib.Fn):
        self.entries.model_fns.append(target)
      else:
        self.collector.unknown(self.module, self.call, 5, 'the model_fn `%s`: %s, so its rules (3, 5, 6, 7, 18) '
                               'were not checked -> scan the file that defines it too.'
                               % (pyast.render(model_fn), target.reason))

  def _run_config(self, name):
    # Checks rule 1 (TPUEstimator), rule 2 (where the TPU is), rule 8 (iterations per loop).
    add = self.collector
    star = pyast.has_star_args(self.call)
    if not apis.is_tpu_run_config(name):
      add.required(self.module, self.call, 1, '`%s` -> tf.estimator.tpu.RunConfig(tpu_config=tf.estimator.tpu.'
                   'TPUConfig(iterations_per_loop=..., num_shards=...)): TPUEstimator refuses any other config.'
                   % _short(name))
      add.advice(self.module, self.call, 8, 'a plain RunConfig runs one step per session.run -> choose '
                 'TPUConfig(iterations_per_loop=N): N steps run on the TPU per host round trip; checkpoints and '
                 'hooks only happen between loops.')
      if not star and pyast.keyword(self.call, 'master') is None:
        add.advice(self.module, self.call, 2, 'nothing says where the TPU is -> pass '
                   'cluster=tf.distribute.cluster_resolver.TPUClusterResolver(tpu=[name], zone, project) or '
                   'master=\'grpc://HOST:8470\' (never both); a TPU VM runs with master=\'\'.')
      return
    if star:
      return
    if pyast.keyword(self.call, 'tpu_config') is None:
      add.advice(self.module, self.call, 8, 'tpu RunConfig without tpu_config: the default TPUConfig runs 2 steps '
                 'per host round trip -> tpu_config=TPUConfig(iterations_per_loop=..., num_shards=...).')
    master, cluster = pyast.keyword(self.call, 'master'), pyast.keyword(self.call, 'cluster')
    if master is None and cluster is None:
      add.advice(self.module, self.call, 2, 'RunConfig names no TPU -> pass cluster=TPUClusterResolver(...) or '
                 'master=\'grpc://HOST:8470\' for a TPU Node; only on a TPU VM is the default master \'\' right.')
    elif _surely_set(self.program, self.module, self.fn, master) and \
        _surely_set(self.program, self.module, self.fn, cluster):
      add.required(self.module, self.call, 2, 'RunConfig gets both master= and cluster= -> pass only one: '
                   'RunConfig refuses the combination.')

  def _model_dir(self):
    # Checks rule 17 (Cloud Storage).
    value = pyast.keyword(self.call, 'model_dir')
    path = pyast.literal(value) if value is not None else None
    if isinstance(path, str) and input_fns._is_local_path(path) and apis.is_tf(self.canonical):
      self.collector.advice(self.module, self.call, 17, 'model_dir=%r is on this machine\'s disk: the TPU '
                            'workers of a TPU Node write checkpoints and read them back there -> a gs:// model_dir for '
                            'a TPU run.' % path)

  # --- driving the estimator ----------------------------------------------------------------------------------

  def _spec(self, name):
    # Checks rule 9 (steps).
    mode = input_fns.TRAIN if apis.is_train_spec(name) else input_fns.EVAL
    self._input_fn_argument(pyast.argument(self.call, 0, 'input_fn'), mode)
    if pyast.has_star_args(self.call):
      return
    if mode == input_fns.TRAIN and _unset(pyast.argument(self.call, 1, 'max_steps'), missing_is_none=True):
      self.collector.required(self.module, self.call, 9, 'TrainSpec without max_steps -> set max_steps: on a TPU, '
                              'training needs a bound (iterations_per_loop steps run per device call).')
    if mode == input_fns.EVAL and _unset(pyast.argument(self.call, 1, 'steps'), missing_is_none=False):
      self.collector.required(self.module, self.call, 9, 'EvalSpec(steps=None) reads until the input ends -> set '
                              'steps to the number of full batches: evaluation on a TPU refuses steps=None.')

  def _estimator_method(self):
    # Checks rule 9 (steps).
    mode, steps_at, max_steps_at = METHODS[self.call.func.attr]
    input_fn = pyast.argument(self.call, 0, 'input_fn')
    if input_fn is None:
      return
    kind = _estimator_kind(self.program, self.module, self.fn, self.call.func.value)
    # Certain: an estimator built in the scanned code, or an input_fn= keyword. A receiver only *named* like an
    # estimator (a parameter `estimator`, `classifier`) counts when what it is given is a function the scanned
    # files define, so sklearn's or Keras' classifier.predict(x) is left alone.
    certain = kind == BUILT or pyast.keyword(self.call, 'input_fn') is not None
    if not certain and not (kind == NAMED and self._passes_a_function(input_fn)):
      return
    self._input_fn_argument(input_fn, mode)
    if kind is None or pyast.has_star_args(self.call):
      return
    receiver = pyast.render(self.call.func.value)
    steps = self._step_count(pyast.argument(self.call, steps_at, 'steps') if steps_at else None)
    if mode == input_fns.TRAIN:
      max_steps = self._step_count(pyast.argument(self.call, max_steps_at, 'max_steps'))
      counts = (steps, max_steps)
      if all(state == NONE for state, _ in counts):
        self.collector.required(self.module, self.call, 9, '`%s.train(...)` has neither max_steps nor steps%s -> '
                                'pass max_steps (a total) or steps: on a TPU, TPUEstimator runs iterations_per_loop '
                                'steps per device call and refuses to train without a bound.'
                                % (receiver, ''.join(why for _, why in counts)))
      elif not any(state == SET for state, _ in counts):
        unknown = [why for state, why in counts if state == RUN_TIME]
        self.collector.unknown(self.module, self.call, 9, 'whether `%s.train(...)` gets max_steps or steps: %s. '
                               'On a TPU it needs one (TPUEstimator refuses to train without a bound).'
                               % (receiver, unknown[0]))
    elif mode == input_fns.EVAL and steps[0] == NONE:
      self.collector.required(self.module, self.call, 9, '`%s.evaluate(...)` without steps%s reads until the input '
                              'ends -> pass steps = the number of full batches: evaluation on a TPU refuses '
                              'steps=None, and every batch must be full (pad the data, weight the padding 0).'
                              % (receiver, steps[1]))
    elif mode == input_fns.EVAL and steps[0] == RUN_TIME:
      self.collector.unknown(self.module, self.call, 9, 'whether `%s.evaluate(...)` gets steps: %s. If it can be '
                             'None, evaluation reads until the input ends, which a TPU refuses -> make it the number '
                             'of full batches (pad the data, weight the padding 0).' % (receiver, steps[1]))

  def _step_count(self, node):
    """(NONE, SET or RUN_TIME, why) for a steps/max_steps argument. A literal or a value computed here is taken
    as it is; a flag read (`FLAGS.eval_steps`, `fv.eval_steps`) is its flag's default when the scanned files
    define that flag, and only known at run time when they do not."""
    if node is None:
      return NONE, ''
    value = pyast.literal(node)
    if value is not pyast.NO_VALUE:
      return (NONE if value is None else SET), ''
    if not self._reads_flag_values(node):
      return SET, ''
    definition = self.program.flag_definition(node.attr)
    if definition is None:
      return RUN_TIME, '`%s` is only known at run time (a flag the scanned files do not define?)' % pyast.render(node)
    module, call, default = definition
    if pyast.literal(default) is None:
      return NONE, ' (`%s` is the flag --%s, which defaults to None: %s:%d)' % (
          pyast.render(node), node.attr, module.path, call.lineno)
    return SET, ''

  def _reads_flag_values(self, node):
    """FLAGS.x, or x.y of a parameter (the flag values handed down: fv.eval_steps, flags_obj.train_steps)."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
      return False
    if apis.is_flags(self.program.canonical(self.module, self.fn, node.value)):
      return True
    kind = self.program.lookup(self.module, self.fn, node.value.id)[0]
    return kind == 'param' and node.value.id not in ('self', 'cls')

  def _passes_a_function(self, node):
    """A function the scanned files define, one TensorFlow made, or one named as an input_fn (`input_fn`,
    `input_fn_lib.input_fn_builder(...)`) even when its file was not scanned."""
    if 'input_fn' in pyast.render(node):
      return True
    return any(isinstance(t, program_lib.Fn) or _made_by_tf_input_fn(t)
               for t in self.program.resolve_callables(self.module, self.fn, node))

  def _input_fn_argument(self, node, mode):
    # Checks rule 3 (params).
    if node is None:
      return
    for target in self.program.resolve_callables(self.module, self.fn, node):
      if isinstance(target, program_lib.Fn):
        key = (id(target.node), tuple(id(v[2]) for v in target.via))
        entry = self.entries.input_fns.setdefault(key, [target, set()])
        entry[1].add(mode)
      elif _made_by_tf_input_fn(target):
        self.collector.required(self.module, self.call, 3, 'the input_fn comes from `%s`, which feeds queues and '
                                'takes no params -> write an input_fn(params) that returns a tf.data.Dataset '
                                '(Dataset.from_tensor_slices(...).batch(params[\'batch_size\'], '
                                'drop_remainder=True)).' % _short(target.made_by))
      else:
        self.collector.unknown(self.module, self.call, 3, 'the input_fn `%s` (for %s): %s, so its rules (3, 4) were '
                               'not checked -> scan the file that defines it too.'
                               % (pyast.render(node), mode, target.reason))


def _made_by_tf_input_fn(target):
  made_by = getattr(target, 'made_by', None)
  return bool(made_by) and apis.last(made_by) in ('numpy_input_fn', 'pandas_input_fn')


def _short(name):
  return name.replace('tensorflow.', 'tf.', 1)


def _unset(node, missing_is_none):
  if node is None:
    return missing_is_none
  return pyast.literal(node) is None


def _surely_set(program, module, fn, node, depth=0):
  """True only when an argument is certainly not None: a non-empty string, a constructor call, or a local name
  every assignment of which is one (BERT's `tpu_cluster_resolver = None; if FLAGS.use_tpu: ...` is not)."""
  if node is None or depth > 2:
    return False
  value = pyast.literal(node)
  if value is not pyast.NO_VALUE:
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


BUILT, NAMED = 'built', 'named'
# What a steps/max_steps argument is: None, a number, or something only known at run time.
NONE, SET, RUN_TIME = 'none', 'set', 'run time'


def _estimator_kind(program, module, fn, node, depth=0):
  """BUILT when an expression holds an Estimator built by a constructor (or by a project function returning one),
  NAMED for a parameter or attribute only named like one (mnist_tpu.py's train(fv, job, estimator, ...)), else
  None."""
  if isinstance(node, ast.Call):
    if program.constructs(module, fn, node, lambda n: apis.is_any_estimator(n) or apis.is_keras_to_estimator(n)):
      return BUILT
    return None
  if isinstance(node, ast.Attribute):
    return NAMED if _named_like_estimator(node.attr) else None
  if not isinstance(node, ast.Name) or depth > 3:
    return None
  kind, bound, owner_module, owner = program.lookup(module, fn, node.id)
  if kind == 'value':
    return _estimator_kind(program, owner_module, owner, bound, depth + 1)
  if kind == 'param' and _named_like_estimator(node.id):
    return NAMED
  return None


def _named_like_estimator(name):
  name = name.lower().strip('_')
  return 'estimator' in name or name in ('est', 'clf') or name.endswith(('classifier', 'regressor'))


def _estimator_base(module, class_node):
  """The canonical name of a plain Estimator the class derives from, 'tpu' for a TPUEstimator, else None."""
  for base in class_node.bases:
    name = module.canonical(base) or ''
    if apis.is_tpu_estimator(name):
      return 'tpu'
    if apis.is_plain_estimator(name):
      return name
  return None
