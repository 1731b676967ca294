"""The TPU run being checked: the TPUEstimator the program builds, and what it does not hold itself."""
import copy

import tensorflow.compat.v1 as tf

from estimator_tpu.porting.readiness import topology
from estimator_tpu.tpu import cluster as tpu_cluster
from estimator_tpu.tpu import run_config


class PlannedRun(object):
  """What every readiness plan names besides the program: the slice (`shape`, an accelerator_types.SliceShape, and
  `slice_source`, where it comes from), the TPU (`tpu_name`, resolved with TPUClusterResolver, 'local' on a TPU VM;
  or a grpc:// `master`; with neither the checks that need a TPU are skipped), the paths the run names
  (`model_dir`, `data_dir`: on a TPU Node they must be on gs://), the split evaluate() reads (`eval_examples` and
  `eval_steps`, None: not checked; `eval_padded` when the input pads it with weight-0 rows to full batches, as this
  project's does) and `precision` ('float32' or 'bfloat16'; None: not known, only float32 variables and loss are
  checked). Subclasses say where the master and the core count come from."""

  def __init__(self, shape, slice_source=None, tpu_name=None, tpu_zone=None, gcp_project=None, model_dir=None,
               data_dir=None, eval_split='eval', eval_examples=None, eval_steps=None, eval_padded=False,
               precision=None):
    self.shape = shape
    self.slice_source = slice_source
    self.tpu_name = tpu_name
    self.tpu_zone = tpu_zone
    self.gcp_project = gcp_project
    self.model_dir = model_dir
    self.data_dir = data_dir
    self.eval_split = eval_split
    self.eval_examples = eval_examples
    self.eval_steps = eval_steps
    self.eval_padded = eval_padded
    self.precision = precision

  @property
  def names_cloud_tpu(self):
    return bool(self.tpu_name or self.master)

  @property
  def on_tpu_vm(self):
    return tpu_cluster.is_local_tpu(self.tpu_name)


# Where TPUEstimator's TPU context keeps each mode's global batch size.
CONTEXT_BATCH_SIZES = {tf.estimator.ModeKeys.TRAIN: '_train_batch_size', tf.estimator.ModeKeys.EVAL: '_eval_batch_size',
                       tf.estimator.ModeKeys.PREDICT: '_predict_batch_size'}


class TpuPlan(PlannedRun):
  """A TPUEstimator run on a Cloud TPU, as the program would start it.

  `estimator` is the program's own TPUEstimator (use_tpu=True): the batch sizes (global, all cores together),
  eval_on_tpu, params, and its RunConfig (TPUConfig, checkpoint cadence, master: grpc://HOST:PORT) come from it.
  `train_examples` is the size of the training split (for the per-host shards); `requested_checkpoint_steps` the
  cadence the flags asked for, when the RunConfig rounded it up to the device loops (tpu/run_config.py). The rest
  is PlannedRun's.
  """

  def __init__(self, estimator, shape, train_examples=None, requested_checkpoint_steps=None, **planned):
    super(TpuPlan, self).__init__(shape, **planned)
    self.estimator = estimator
    self.train_examples = train_examples
    self.requested_checkpoint_steps = requested_checkpoint_steps
    self._batches = {}  # mode -> a batch size that replaces the estimator's (with_batch)

  def with_batch(self, mode, batch_size):
    """A copy of this plan whose `mode` (TRAIN, EVAL or PREDICT) batch is `batch_size` instead of the estimator's."""
    fitted = copy.copy(self)
    fitted._batches = dict(self._batches, **{mode: batch_size})  # pylint: disable=protected-access
    return fitted

  @property
  def _context(self):
    return self.estimator._ctx  # pylint: disable=protected-access -- TPUEstimator keeps its sizes there

  @property
  def tpu_config(self):
    return self.estimator.config.tpu_config

  @property
  def num_shards(self):
    """TPUConfig.num_shards, or, when it is None (TPUEstimator counts the cores), the slice's core count."""
    return self.tpu_config.num_shards or self.shape.num_cores

  def _batch(self, mode):
    """`mode`'s global batch: with_batch's, else the estimator's (kept in its TPU context)."""
    return self._batches.get(mode) or getattr(self._context, CONTEXT_BATCH_SIZES[mode])

  @property
  def train_batch_size(self):
    return self._batch(tf.estimator.ModeKeys.TRAIN)

  @property
  def eval_batch_size(self):
    return self._batch(tf.estimator.ModeKeys.EVAL)

  @property
  def predict_batch_size(self):
    return self._batch(tf.estimator.ModeKeys.PREDICT)

  @property
  def eval_on_tpu(self):
    return self._context._eval_on_tpu  # pylint: disable=protected-access

  @property
  def iterations_per_loop(self):
    return self.tpu_config.iterations_per_loop

  @property
  def host_call_every_n_steps(self):
    return self.tpu_config.experimental_host_call_every_n_steps

  @property
  def save_checkpoints_steps(self):
    return self.estimator.config.save_checkpoints_steps

  @property
  def master(self):
    return self.estimator.config.master or None

  @property
  def params(self):
    return self.estimator.params

  @property
  def per_shard_batch_size(self):
    """What params['batch_size'] is on each core (PER_HOST_V1/V2 input): the global batch over the cores."""
    return self.train_batch_size // self.num_shards

  def simulated_master(self):
    """The master TPUEstimator would use: '' on a TPU VM, the given grpc:// address, or a stand-in TPU Node."""
    if self.on_tpu_vm:
      return ''
    return self.master or topology.SIMULATED_NODE_MASTER

  def run_config(self, evaluates_on_tpu=None):
    """The program's RunConfig, pointed at the simulated master. `evaluates_on_tpu` overrides where evaluation
    and prediction input goes (the check asks TensorFlow about the alternative too)."""
    tpu_config = self.tpu_config
    if evaluates_on_tpu is not None:
      tpu_config = tpu_config._replace(
          eval_training_input_configuration=run_config.eval_input_configuration(evaluates_on_tpu))
    return tf.estimator.tpu.RunConfig(master=self.simulated_master(), tpu_config=tpu_config,
                                      save_checkpoints_steps=self.save_checkpoints_steps)

  def tpu_params(self, batch_size=None):
    """The params TPUEstimator passes to model_fn when it really runs on the TPU (per-core batch): a copy of the
    program's, a dict or an HParams, given its keys as TPUEstimator gives them (tpu_estimator's
    _add_item_to_params: set_hparam/add_hparam on an HParams)."""
    params = copy.deepcopy(self.params) if hasattr(self.params, 'set_hparam') else dict(self.params or {})
    for key, value in (('use_tpu', True), ('batch_size', batch_size or self.per_shard_batch_size)):
      if hasattr(params, 'set_hparam'):
        (params.set_hparam if key in params else params.add_hparam)(key, value)
      else:
        params[key] = value
    return params
