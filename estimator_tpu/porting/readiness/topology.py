"""TensorFlow's own TPUEstimator on a simulated TPU: what it decides for a planned topology, without a TPU.

Uses TensorFlow internals (below); written against, and tested with, TensorFlow 1.15.5 and 2.15.1, where they
have the same names and behaviour. Citations are to tensorflow_estimator/python/estimator/tpu/ (tpu_context.py,
tpu_estimator.py) and tensorflow{_core,}/python/tpu/tpu_system_metadata.py of either version.

TPUEstimator learns the TPU's shape from one place: `_InternalTPUContext._get_tpu_system_metadata()` looks the
metadata up in the context's cache `_lazy_tpu_system_metadata_dict[master]` and only when it is missing asks the
master (`tpu_system_metadata._query_tpu_system_metadata`, which lists the master's devices and counts a host per
`task` of the TPU job, cores per host, ...). TensorFlow itself fills that cache by hand for its one-core context
(`_OneCoreTPUContext._get_tpu_system_metadata`); so does this module, with metadata that TensorFlow's own parser
computed from the device list the planned TPU would report (a stand-in for `Session.list_devices()`). From then on
everything is TensorFlow's code: validation (`_validate_tpu_configuration`: num_shards, batch divisibility, the
multi-host evaluate/predict rule), params['batch_size'] and params['context'] (`TPUEstimator._call_input_fn`), the
per-host input_fn calls (`_InputPipeline.generate_infeed_enqueue_ops_and_dequeue_fn`) and the replicated model
graph (`TPUEstimator._augment_model_fn`). Graphs are built, never run, and nothing connects to a TPU.

Internals touched, none modified:
  written:  `_InternalTPUContext._lazy_tpu_system_metadata_dict` (the cache), `TPUEstimator._rendezvous[mode]`
            (what TPUEstimator.train/evaluate/predict set before building), `tpu_system_metadata.session_lib`
            (swapped for one `_query_tpu_system_metadata` call, then restored);
  called:   `tpu_system_metadata._query_tpu_system_metadata`, `session._DeviceAttributes`, `TPUEstimator._ctx`,
            `_InternalTPUContext.with_mode/is_running_on_cpu/batch_size_for_input_fn`,
            `Estimator._create_and_assert_global_step`, `Estimator._get_features_and_labels_from_input_fn`,
            `Estimator._get_features_from_input_fn`, `Estimator._call_model_fn`, `tpu_estimator._InputPipeline`.
"""
import collections
import contextlib
import functools
import inspect
import logging
import tempfile

import tensorflow.compat.v1 as tf
from tensorflow.python.client import session as session_lib
from tensorflow.python.tpu import tpu_system_metadata as metadata_lib
from tensorflow_estimator.python.estimator.tpu import error_handling
from tensorflow_estimator.python.estimator.tpu import tpu_context
from tensorflow_estimator.python.estimator.tpu import tpu_estimator

TRAIN = tf.estimator.ModeKeys.TRAIN
EVAL = tf.estimator.ModeKeys.EVAL
PREDICT = tf.estimator.ModeKeys.PREDICT
# A TPU Node's master when the plan names none: a name only, never resolved or dialled.
SIMULATED_NODE_MASTER = 'grpc://simulated-tpu-worker:8470'


@functools.lru_cache(maxsize=None)
def scratch_model_dir():
  """The model_dir of the estimators the check builds, made the first time it is asked for: graphs are built,
  never run, so nothing is written there."""
  return tempfile.mkdtemp(prefix='tpu-topology-')


def device_list(shape, master):
  """(name, type) of every device the TPU master of `shape` lists: per host a CPU, a TPU_SYSTEM and its cores.

  A TPU Node's master lists /job:tpu_worker/replica:0/task:<host>/...; a TPU VM's in-process session (master '')
  /job:localhost/... . TensorFlow counts hosts as the distinct `task`s of the TPU devices.
  """
  job = 'localhost' if master in ('', 'local') else 'tpu_worker'
  devices = []
  for host in range(shape.num_hosts):
    prefix = '/job:%s/replica:0/task:%d/device:' % (job, host)
    devices += [(prefix + 'CPU:0', 'CPU'), (prefix + 'TPU_SYSTEM:0', 'TPU_SYSTEM')]
    devices += [(prefix + 'TPU:%d' % core, 'TPU') for core in range(shape.cores_per_host)]
  return devices


class _ListingSession(object):
  """Stands in for session.Session inside _query_tpu_system_metadata: it only lists `devices`."""

  devices = ()

  def __init__(self, target='', graph=None, config=None):
    del target, graph, config

  def __enter__(self):
    return self

  def __exit__(self, *exc_info):
    return False

  def list_devices(self):
    attributes = session_lib._DeviceAttributes  # pylint: disable=protected-access
    return [attributes(name, kind, 0, 0) for name, kind in self.devices]


@contextlib.contextmanager
def _sessions_listing(devices):
  listing = type('SimulatedTpuSession', (_ListingSession,), {'devices': tuple(devices)})
  attributes = session_lib._DeviceAttributes  # pylint: disable=protected-access
  shim = type('SessionModule', (object,), {'Session': listing, '_DeviceAttributes': attributes})
  real = metadata_lib.session_lib
  metadata_lib.session_lib = shim
  try:
    yield
  finally:
    metadata_lib.session_lib = real


def simulated_metadata(shape, master):
  """TensorFlow's TPU system metadata for `shape`, computed by TensorFlow's own parser from its device list."""
  with tf.Graph().as_default(), _sessions_listing(device_list(shape, master)):
    return metadata_lib._query_tpu_system_metadata(master)  # pylint: disable=protected-access


Simulation = collections.namedtuple('Simulation', ['estimator', 'shape', 'metadata', 'specs'])


def simulate(config, shape, model_fn, train_batch_size, eval_batch_size=None, predict_batch_size=None,
             eval_on_tpu=True, params=None):
  """A real TPUEstimator for `config` whose context sees a TPU of `shape` at config.master.

  `specs` collects what model_fn returns while model_graph builds. With num_shards=1 TensorFlow builds its
  one-core context, whose own metadata is kept.
  """
  specs = []
  estimator = tpu_estimator.TPUEstimator(
      model_fn=_recording_model_fn(model_fn, specs), config=config.replace(model_dir=scratch_model_dir()),
      params=params, use_tpu=True, train_batch_size=train_batch_size, eval_batch_size=eval_batch_size,
      predict_batch_size=predict_batch_size, eval_on_tpu=eval_on_tpu)
  metadata = simulated_metadata(shape, config.master)
  context = estimator._ctx  # pylint: disable=protected-access
  if not isinstance(context, tpu_context._OneCoreTPUContext):  # pylint: disable=protected-access
    # EVAL looks the metadata up under the evaluation master (tpu_context.py, _get_master_address).
    for master in {config.master, config.evaluation_master}:
      context._lazy_tpu_system_metadata_dict[master] = metadata  # pylint: disable=protected-access
  return Simulation(estimator, shape, metadata, specs)


def _recording_model_fn(model_fn, specs):
  """model_fn, recording each spec it returns; passes `params` and `config` on only if model_fn takes them."""
  names = inspect.getfullargspec(model_fn).args

  def recorded_model_fn(features, labels, mode, params, config):
    extra = {name: value for name, value in (('params', params), ('config', config)) if name in names}
    spec = model_fn(features, labels, mode, **extra)
    specs.append(spec)
    return spec

  return recorded_model_fn


@contextlib.contextmanager
def mode_context(sim, mode):
  """The estimator's _InternalTPUContext for `mode` (tpu_context.py, with_mode)."""
  with sim.estimator._ctx.with_mode(mode) as context:  # pylint: disable=protected-access
    yield context


class _WarningRecorder(logging.Handler):

  def __init__(self):
    logging.Handler.__init__(self, level=logging.WARNING)
    self.messages = []

  def emit(self, record):
    self.messages.append(record.getMessage())


@contextlib.contextmanager
def tensorflow_warnings():
  """The WARNING records TensorFlow logs meanwhile (tf.logging writes to the Python logger 'tensorflow')."""
  recorder = _WarningRecorder()
  logger = logging.getLogger('tensorflow')
  logger.addHandler(recorder)
  try:
    yield recorder.messages
  finally:
    logger.removeHandler(recorder)


Decision = collections.namedtuple('Decision', ['mode', 'on_tpu', 'error', 'warnings', 'input_fn_batch_size',
                                               'model_fn_batch_size', 'num_replicas', 'num_hosts'])


def decide(sim, mode):
  """What TensorFlow decides for `mode`: on the TPU or the CPU, with which batch sizes, or the error it raises.

  `is_running_on_cpu()` is the first call of every TPUEstimator path; when the answer is "the TPU" it validates the
  configuration against the TPU's metadata (tpu_context.py, _validate_tpu_configuration).
  """
  with mode_context(sim, mode) as context, tensorflow_warnings() as warned:
    try:
      on_cpu = context.is_running_on_cpu()
    except (ValueError, RuntimeError) as e:
      return Decision(mode, None, e, warned, None, None, None, None)
    return Decision(mode, not on_cpu, None, warned, context.batch_size_for_input_fn, context.batch_size_for_model_fn,
                    None if on_cpu else context.num_replicas, context.num_hosts)


def is_hparams(params):
  """Whether params is an HParams (tf.contrib.training's or one like it), which TPUEstimator keeps as it is, adding
  its keys with add_hparam (tpu_estimator's _add_item_to_params), and which the program reads as attributes."""
  return hasattr(params, 'set_hparam') and hasattr(params, 'values')


def fresh_params(params):
  """A copy of params in the program's kind, for another input_fn call: an HParams stays an HParams (the
  program's input_fn reads params.batch_size), anything else becomes a dict."""
  return type(params)(**params.values()) if is_hparams(params) else dict(params)


def param_value(params, key, default=None):
  """params[key] of a dict or an HParams."""
  return params.values().get(key, default) if is_hparams(params) else params.get(key, default)


class _ReadRecordingParams(dict):
  """params that remember which keys input_fn read, so the check can tell whether it looked at its deployment."""

  def __init__(self, values, read):
    dict.__init__(self, values)
    self._read = read

  def __getitem__(self, key):
    self._read.add(key)
    return dict.__getitem__(self, key)

  def get(self, key, default=None):
    self._read.add(key)
    return dict.get(self, key, default)


def _read_recording(params, read):
  """A copy of params that adds to `read` every key input_fn reads: a dict, or for an HParams an HParams of the
  same class whose attribute reads are recorded."""
  if not is_hparams(params):
    return _ReadRecordingParams(params, read)
  names = set(params.values())

  class ReadRecordingHParams(type(params)):
    def __getattribute__(self, name):
      if name in names:
        read.add(name)
      return super(ReadRecordingHParams, self).__getattribute__(name)

  return ReadRecordingHParams(**params.values())


class InputCall(collections.namedtuple('InputCall', ['params', 'deployment', 'keys_read'])):
  """One input_fn call as TPUEstimator makes it: a copy of its params (with the real TPUContext in 'context'; an
  HParams stays one), the context's current_input_fn_deployment() (None on the CPU path) and the params keys
  input_fn read.

  TensorFlow passes the same params to every host's call and overwrites 'context' each time
  (TPUEstimator._call_input_fn), so the copy is taken during the call. The context stays usable afterwards: call
  input_fn(fresh_params(call.params)) again to read what that host would feed.
  """

  @property
  def batch_size(self):
    return param_value(self.params, 'batch_size')


def _recording(input_fn, calls):
  def recorded_input_fn(params):  # TPUEstimator requires the argument name `params`
    snapshot = fresh_params(params)
    context = param_value(snapshot, 'context')
    read = set()
    result = input_fn(_read_recording(params, read))
    deployment = None if context is None else tuple(context.current_input_fn_deployment())
    calls.append(InputCall(snapshot, deployment, read))
    return result
  return recorded_input_fn


def _estimator_inputs(estimator, input_fn, mode, graph):
  """(features, labels) as Estimator.train/evaluate/predict get them: the global step first, then the input."""
  estimator._create_and_assert_global_step(graph)  # pylint: disable=protected-access
  if mode == PREDICT:
    features, _ = estimator._get_features_from_input_fn(input_fn, mode)  # pylint: disable=protected-access
    return features, None
  get_inputs = estimator._get_features_and_labels_from_input_fn  # pylint: disable=protected-access
  features, labels, _ = get_inputs(input_fn, mode)
  return features, labels


def input_fn_calls(sim, input_fn, mode):
  """Builds (never runs) TensorFlow's input side of `mode` and returns input_fn's calls, one per host or one.

  On the CPU path TPUEstimator._call_input_fn calls input_fn at once; on the TPU it returns a wrapper, which, as
  TPUEstimator's model_fn does, goes to _InputPipeline(...).generate_infeed_enqueue_ops_and_dequeue_fn(): one call
  per host (PER_HOST_V2) or one on host 0 (SLICED). Raises what TensorFlow raises.
  """
  calls = []
  with tf.Graph().as_default() as graph:
    features, _ = _estimator_inputs(sim.estimator, _recording(input_fn, calls), mode, graph)
    if callable(features):
      with mode_context(sim, mode) as context:
        pipeline = tpu_estimator._InputPipeline(features, None, context)  # pylint: disable=protected-access
        pipeline.generate_infeed_enqueue_ops_and_dequeue_fn()
  return calls


def model_graph(sim, input_fn, mode, calls=None):
  """Builds (never runs) the whole graph TPUEstimator would run for `mode`; returns (input calls, model_fn specs).

  As Estimator.train/evaluate/predict: the input side (see input_fn_calls), then Estimator._call_model_fn ->
  TPUEstimator's model_fn wrapper, which replicates model_fn over the cores and adds the infeed, the outfeed and
  the host_call / eval_metrics plumbing, raising what TensorFlow raises. The specs are what model_fn returned
  (TPUEstimatorSpecs, for one core). Nothing is compiled: XLA compiles on the TPU when the graph runs. Pass a list
  as `calls` to keep the input calls even when TensorFlow raises afterwards (sim.specs keeps the specs).
  """
  calls = [] if calls is None else calls
  del sim.specs[:]
  estimator = sim.estimator
  estimator._rendezvous[mode] = error_handling.ErrorRendezvous(num_sources=3)  # pylint: disable=protected-access
  with tf.Graph().as_default() as graph:
    features, labels = _estimator_inputs(estimator, _recording(input_fn, calls), mode, graph)
    estimator._call_model_fn(features, labels, mode, estimator.config)  # pylint: disable=protected-access
  return calls, list(sim.specs)
