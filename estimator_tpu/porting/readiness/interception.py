"""Catching the estimators a program builds and the calls it makes on them, for `readiness --run`.

Every estimator a program can build, in either TensorFlow (tf.estimator.Estimator, tf.compat.v1's, the premade
ones, TPUEstimator under its tf.estimator.tpu, tf.compat.v1.estimator.tpu and tf.contrib.tpu names), is an instance
of tensorflow_estimator's `estimator.Estimator`, which defines __init__, train, evaluate, predict and
export_saved_model (export_savedmodel); TPUEstimator overrides __init__, train, evaluate and predict.
tf.estimator.train_and_evaluate calls the estimator's own train and evaluate (training.py, _TrainingExecutor), so
catching those catches it too. The methods are wrapped on those two classes while the program runs and restored
after; only the outermost call of a nesting (TPUEstimator.train -> Estimator.train) is seen, and nothing is seen
while the judge itself builds estimators (`suspended`).

For each call the `Judge` (call_checks.py) is asked first; then the call runs on the CPU, cut short: training for
`steps` steps, evaluation for at most `steps` batches, at most `steps` predictions, an export into a scratch folder.
Every estimator's model_dir is a scratch folder (one per model_dir the program names), so the program's own
checkpoints are never read or written, and a TPUEstimator runs with use_tpu=False and no master: on this CPU.
"""
import collections
import contextlib
import inspect
import os
import tempfile
import threading
import traceback

import tensorflow.compat.v1 as tf
from tensorflow_estimator.python.estimator import estimator as estimator_lib
from tensorflow_estimator.python.estimator.tpu import tpu_estimator

TRAIN, EVAL, PREDICT = tf.estimator.ModeKeys.TRAIN, tf.estimator.ModeKeys.EVAL, tf.estimator.ModeKeys.PREDICT
EXPORT = 'export'
BASE = estimator_lib.Estimator
TPU_ESTIMATOR = tpu_estimator.TPUEstimator
WRAPPED = ((BASE, ('__init__', 'train', 'evaluate', 'predict', 'export_saved_model', 'export_savedmodel')),
           (TPU_ESTIMATOR, ('__init__', 'train', 'evaluate', 'predict')))
JUDGE_DIR = os.path.dirname(os.path.abspath(__file__))
# Folders of code that is not the user's: this interpreter's library, installed packages, the judge; and outside the
# program's folder, this project (its command line and tools, which start the run).
NOT_USER_CODE = (os.path.dirname(os.path.abspath(os.__file__)), JUDGE_DIR)
PROJECT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(JUDGE_DIR)))


class Site(object):
  """Where in the user's program something happened: the innermost frame of the program's own files (a plain
  object, not a tuple, so that `'%s' % site` formats it)."""

  def __init__(self, path, line):
    self.path = path
    self.line = line

  def __str__(self):
    if self.path is None:
      return 'an unknown place'
    return '%s:%d' % (os.path.relpath(self.path), self.line)


def is_user_file(path, program_dir):
  """A file of the user's program: a source file on disk (not `<frozen runpy>`, `<string>`), not this interpreter's
  library, an installed package or the judge; in the program's folder, or outside it when no part of this project
  is (a program a launcher in another folder runs with runpy, a module the program puts on sys.path)."""
  if not os.path.isfile(path):
    return False
  path = os.path.abspath(path)
  if 'site-packages' in path or 'dist-packages' in path or _within(path, NOT_USER_CODE):
    return False
  return path.startswith(program_dir + os.sep) or not _within(path, (PROJECT_DIR,))


def _within(path, folders):
  return any(path == folder or path.startswith(folder + os.sep) for folder in folders)


def user_site(program_dir, frames=None):
  """The innermost frame of the user's files in `frames` (FrameSummary list, outermost first; default: the
  current stack)."""
  frames = frames if frames is not None else _stack()
  for frame in reversed(frames):
    if is_user_file(frame.filename, program_dir):
      return Site(os.path.abspath(frame.filename), frame.lineno)
  return Site(None, None)


def _stack():
  return traceback.extract_stack()


def defined(fn):
  """Where a function (model_fn, input_fn, a partial or a bound method of one) comes from, as a message names it:
  'defined at FILE:LINE, ', or 'made by TensorFlow's numpy_input_fn, ' for one a library function made (its own
  file is no place the user edits); '' when it cannot be told."""
  while hasattr(fn, 'func'):  # functools.partial
    fn = fn.func
  fn = inspect.unwrap(getattr(fn, '__func__', fn))
  try:
    path = inspect.getsourcefile(fn)
    line = inspect.getsourcelines(fn)[1]
  except (TypeError, OSError):
    return ''
  if not path:
    return ''
  if 'site-packages' in path or 'dist-packages' in path:
    maker = getattr(fn, '__qualname__', '').split('.<locals>')[0]
    library = (getattr(fn, '__module__', '') or '').split('.')[0].replace('_estimator', '')
    return 'made by %s\'s %s, ' % ('TensorFlow' if library == 'tensorflow' else library, maker) if maker else ''
  return 'defined at %s, ' % Site(os.path.abspath(path), line)


def kind_of(estimator):
  """'tpu' (TPUEstimator), 'premade' (TensorFlow's other estimators: canned ones, boosted trees, ...) or
  'estimator' (tf.estimator.Estimator, or the program's own subclass of it, which gives it a model_fn)."""
  if isinstance(estimator, TPU_ESTIMATOR):
    return 'tpu'
  cls = type(estimator)
  if cls in (BASE, estimator_lib.EstimatorV2) or not cls.__module__.startswith('tensorflow'):
    return 'estimator'
  return 'premade'


class Built(object):
  """An estimator the program built: where, its class, and what it was given (model_fn, params, config, the
  TPUEstimator's use_tpu), with what the judge found at construction (`findings`, CheckResults)."""

  def __init__(self, estimator, site, model_fn, params, config, use_tpu, findings):
    self.estimator = estimator
    self.site = site
    self.model_fn = model_fn
    self.params = params
    self.config = config
    self.use_tpu = use_tpu
    self.findings = findings
    self.judged_modes = set()

  @property
  def kind(self):
    return kind_of(self.estimator)

  @property
  def class_name(self):
    return type(self.estimator).__name__


class Call(collections.namedtuple('Call', ['built', 'mode', 'input_fn', 'kwargs', 'site'])):
  """One train/evaluate/predict/export call: the estimator, the mode, the input_fn and where it was called."""


class Interceptor(object):
  """Wraps the estimator classes while active (a context manager). `judge` has on_build(estimator, args, kwargs,
  site) -> (args, kwargs, findings), called before an estimator is built, and on_call(Call), called before each
  call runs; `steps` caps every call."""

  def __init__(self, judge, program_dir, steps):
    self.judge = judge
    self.program_dir = os.path.abspath(program_dir)
    self.steps = steps
    self.built = {}  # id(estimator) -> Built
    self.scratch = tempfile.mkdtemp(prefix='readiness-run-')
    self._model_dirs = {}
    self._local = threading.local()
    self._active = set()  # (id(estimator), method) of the calls running
    self._originals = []
    self.contrib_built = set()  # id() of the tf.contrib.learn estimators the program built

  # --- installing -------------------------------------------------------------------------------------------------

  def __enter__(self):
    for cls, names in WRAPPED:
      for name in names:
        original = cls.__dict__[name]
        self._originals.append((cls, name, original))
        setattr(cls, name, self._wrap(name, original))
    learn = _contrib_learn_estimator()
    if learn is not None:
      original = learn.__dict__['__init__']
      self._originals.append((learn, '__init__', original))
      setattr(learn, '__init__', self._wrap_contrib(original))
    return self

  def __exit__(self, *exc_info):
    for cls, name, original in reversed(self._originals):
      setattr(cls, name, original)
    del self._originals[:]
    return False

  @contextlib.contextmanager
  def suspended(self):
    """Nothing is intercepted meanwhile: the judge's own estimators and calls."""
    self._local.suspended = getattr(self._local, 'suspended', 0) + 1
    try:
      yield
    finally:
      self._local.suspended -= 1

  @contextlib.contextmanager
  def _inside(self, key):
    """While a call (estimator, method) runs, the same call on the same estimator is TensorFlow's own (a subclass
    calling super()), not the program's; another one (an evaluate from a listener of train_and_evaluate's train)
    is the program's."""
    self._active.add(key)
    try:
      yield
    finally:
      self._active.discard(key)

  def _wrap(self, name, original):
    interceptor = self
    handler = getattr(self, '_on_' + name.strip('_'))
    method = 'export' if name.startswith('export') else name

    def wrapper(estimator, *args, **kwargs):
      key = (id(estimator), method)
      if getattr(interceptor._local, 'suspended', 0) or key in interceptor._active:  # pylint: disable=protected-access
        return original(estimator, *args, **kwargs)
      with interceptor._inside(key):  # pylint: disable=protected-access
        return handler(original, estimator, args, kwargs)

    wrapper.__name__ = name
    wrapper.__doc__ = original.__doc__
    wrapper.__signature__ = inspect.signature(original)
    return wrapper

  def _wrap_contrib(self, original):
    """tf.contrib.learn's estimators (TF 1.15 only) are not tf.estimator ones: no TPUEstimator can be built from
    them, so each is one FAIL line where the program builds it, and then runs as it is."""
    interceptor = self

    def wrapper(estimator, *args, **kwargs):
      if not getattr(interceptor._local, 'suspended', 0) and id(estimator) not in interceptor.contrib_built:  # pylint: disable=protected-access
        interceptor.contrib_built.add(id(estimator))
        with interceptor.suspended():
          interceptor.judge.on_contrib_build(estimator, user_site(interceptor.program_dir))
      return original(estimator, *args, **kwargs)

    wrapper.__name__ = '__init__'
    return wrapper

  # --- building ---------------------------------------------------------------------------------------------------

  def _on_init(self, original, estimator, args, kwargs):
    site = user_site(self.program_dir)
    bound = inspect.signature(original).bind(estimator, *args, **kwargs)
    bound.apply_defaults()
    given = dict(bound.arguments)
    given.pop('self', None)
    with self.suspended():
      args, kwargs, findings = self.judge.on_build(estimator, given, site)
    original(estimator, *args, **kwargs)
    self._to_scratch(estimator)
    self.built[id(estimator)] = Built(estimator, site, given.get('model_fn'), given.get('params'),
                                      given.get('config'), given.get('use_tpu'), findings)
    self.judge.report(findings)

  def _to_scratch(self, estimator):
    """model_dir -> a scratch folder (the same one for every estimator naming the same model_dir); on the CPU."""
    # pylint: disable=protected-access -- Estimator keeps its model_dir and config there and has no setter
    config = estimator._config
    asked = config.model_dir
    if asked not in self._model_dirs or asked is None:
      self._model_dirs[asked] = tempfile.mkdtemp(prefix='model-', dir=self.scratch)
    scratch = self._model_dirs[asked]
    if asked:
      self.judge.model_dirs_moved[asked] = scratch
    estimator._config = config.replace(model_dir=scratch)
    if hasattr(config, 'uid'):
      # contrib.learn's learn_runner checks that the Experiment's estimator kept the RunConfig experiment_fn was
      # given, by a uid that covers model_dir: the scratch copy answers with the given one's.
      estimator._config.uid = config.uid
    estimator._model_dir = scratch
    if config.master:
      # Off the TPU: the session runs in this process (tpu/run_config.py's RunConfig keeps them as attributes).
      estimator._config._master = ''
      estimator._config._evaluation_master = ''

  # --- calls ------------------------------------------------------------------------------------------------------

  def _call(self, estimator, mode, input_fn, kwargs):
    built = self.built.get(id(estimator))
    if built is None:
      return None
    call = Call(built, mode, input_fn, kwargs, user_site(self.program_dir))
    with self.suspended():
      self.judge.on_call(call)
    return call

  @staticmethod
  def _run(original, estimator, args, kwargs):
    return original(estimator, *args, **kwargs)

  def _on_train(self, original, estimator, args, kwargs):
    given = _arguments(original, estimator, args, kwargs)
    self._call(estimator, TRAIN, given.get('input_fn'), given)
    given.update(steps=self.steps, max_steps=None)
    self.judge.trained_steps = self.steps  # what the program does with the model after this, it does untrained
    return self._run(original, estimator, (), given)

  def _on_evaluate(self, original, estimator, args, kwargs):
    given = _arguments(original, estimator, args, kwargs)
    call = self._call(estimator, EVAL, given.get('input_fn'), given)
    given['steps'] = min(given.get('steps') or self.steps, self.steps)
    metrics = self._run(original, estimator, (), given)
    if call is not None:
      with self.suspended():
        self.judge.evaluated(call, metrics)
    return metrics

  def _on_predict(self, original, estimator, args, kwargs):
    given = _arguments(original, estimator, args, kwargs)
    call = self._call(estimator, PREDICT, given.get('input_fn'), given)
    return self._capped(self._predictions(original, estimator, given), call.site if call else user_site(
        self.program_dir))

  def _capped(self, predictions, site):
    """The first `steps` predictions; where the input holds more, the judge hears of the cut (predictions_cut), so
    a program that reads on past it (next() after next()) is not blamed for what the cut did."""
    for count, prediction in enumerate(predictions):
      if count == self.steps:
        self.judge.predictions_cut = (site, self.steps)
        return
      yield prediction

  def _predictions(self, original, estimator, given):
    """The predictions, each computed as the program's predict call (TPUEstimator.predict's own call of
    Estimator.predict is TensorFlow's, not the program's): the generator runs lazily, after predict returned."""
    key = (id(estimator), 'predict')
    predictions = original(estimator, **given)
    try:
      while True:
        with self._inside(key):
          try:
            prediction = next(predictions)
          except StopIteration:
            return
        yield prediction
    finally:
      with self._inside(key):
        predictions.close()

  def _export(self, original, estimator, args, kwargs):
    given = _arguments(original, estimator, args, kwargs)
    self._call(estimator, EXPORT, given.get('serving_input_receiver_fn'), given)
    base = given.get('export_dir_base')
    if isinstance(base, bytes):
      base = base.decode('utf-8', 'replace')
    # Inside the scratch model_dir already (an exporter of train_and_evaluate exports to model_dir/export/NAME,
    # where the program may look for it next): kept. Anywhere else: the scratch folder's, not the user's disk.
    if not (isinstance(base, str) and _inside(base, self.scratch)):
      given['export_dir_base'] = os.path.join(self.scratch, 'export')
    return self._run(original, estimator, (), given)

  _on_export_saved_model = _export
  _on_export_savedmodel = _export


def _inside(path, folder):
  path, folder = os.path.realpath(path), os.path.realpath(folder)
  return path == folder or path.startswith(folder + os.sep)


def _contrib_learn_estimator():
  """tf.contrib.learn's estimator base class on TensorFlow 1.x (importing tf.contrib there), else None."""
  if not tf.__version__.startswith('1.'):
    return None
  try:
    from tensorflow.contrib.learn.python.learn.estimators import estimator as learn_estimator  # pylint: disable=g-import-not-at-top
  except ImportError:
    return None
  return learn_estimator.BaseEstimator


def _arguments(method, estimator, args, kwargs):
  bound = inspect.signature(method).bind(estimator, *args, **kwargs)
  bound.apply_defaults()
  given = dict(bound.arguments)
  given.pop('self', None)
  return given


def program_frames(traceback_object, program_dir):
  """The user's site of an exception: the innermost frame of its traceback in the program's files."""
  return user_site(os.path.abspath(program_dir), traceback.extract_tb(traceback_object))

