"""The TPU run being checked, as plain values (the same ones TPUEstimator, RunConfig and TPUConfig receive)."""
from estimator_tpu.porting.readiness import topology
from estimator_tpu.tpu import accelerator_types
from estimator_tpu.tpu import cluster as tpu_cluster
from estimator_tpu.tpu import run_config


class TpuPlan(object):
  """What a TPUEstimator run on a Cloud TPU would be given.

  Batch sizes are global (all cores together), as passed to TPUEstimator. The slice has `num_shards` cores,
  `cores_per_host` on each host (default: 8 as on v2/v3, or all of them when fewer); `slice_name` and
  `slice_source` say what it is and where that came from, for the plan's first line. `eval_examples` is the size of
  the split evaluate() reads and `eval_steps` the steps it is asked for; leave them None to skip that check. Set
  `eval_padded` when the eval input pads its shard with weight-0 rows to full batches (as this project's does).
  `train_examples` (optional) gives the per-host shard sizes. `eval_on_tpu` and `host_call_every_n_steps` are
  TPUEstimator's and TPUConfig's. Name the TPU with `tpu_name` (resolved with TPUClusterResolver; 'local' for a TPU
  VM) or `master` (grpc://HOST:PORT); with neither, the checks that need a TPU are skipped. `params` are extra
  model_fn/input_fn params (TPUEstimator's `params`).
  """

  def __init__(self, num_shards, train_batch_size, eval_batch_size=None, predict_batch_size=None,
               iterations_per_loop=1, save_checkpoints_steps=None, eval_examples=None, eval_steps=None,
               model_dir=None, data_dir=None, tpu_name=None, tpu_zone=None, gcp_project=None, master=None,
               params=None, eval_padded=False, cores_per_host=None, slice_name=None, slice_source=None,
               eval_on_tpu=True, host_call_every_n_steps=1, train_examples=None, eval_split='eval'):
    self.num_shards = num_shards
    self.train_batch_size = train_batch_size
    self.eval_batch_size = eval_batch_size
    self.predict_batch_size = predict_batch_size
    self.iterations_per_loop = iterations_per_loop
    self.save_checkpoints_steps = save_checkpoints_steps
    self.eval_examples = eval_examples
    self.eval_steps = eval_steps
    self.eval_padded = eval_padded
    self.eval_split = eval_split
    self.train_examples = train_examples
    self.model_dir = model_dir
    self.data_dir = data_dir
    self.tpu_name = tpu_name
    self.tpu_zone = tpu_zone
    self.gcp_project = gcp_project
    self.master = master
    self.params = dict(params or {})
    self.cores_per_host = cores_per_host
    self.slice_name = slice_name
    self.slice_source = slice_source
    self.eval_on_tpu = eval_on_tpu
    self.host_call_every_n_steps = host_call_every_n_steps

  @property
  def per_shard_batch_size(self):
    """What params['batch_size'] is on each core (PER_HOST_V1/V2 input): the global batch over the cores."""
    return self.train_batch_size // self.num_shards

  @property
  def names_cloud_tpu(self):
    return bool(self.tpu_name or self.master)

  @property
  def on_tpu_vm(self):
    return tpu_cluster.is_local_tpu(self.tpu_name)

  def slice_shape(self):
    """accelerator_types.SliceShape of the planned slice; UserError when the cores do not fill whole hosts."""
    per_host = self.cores_per_host or accelerator_types.DEFAULT_CORES_PER_HOST
    shape = accelerator_types.shape_from_cores(self.num_shards, per_host)
    return shape._replace(name=self.slice_name or shape.name)

  def simulated_master(self):
    """The master TPUEstimator would use: '' on a TPU VM, the given grpc:// address, or a stand-in TPU Node."""
    if self.on_tpu_vm:
      return ''
    return self.master or topology.SIMULATED_NODE_MASTER

  def run_config(self, evaluates_on_tpu=None):
    """The RunConfig the program builds for this plan (tpu/run_config.py), pointed at the simulated master.

    `evaluates_on_tpu` overrides what the plan says (the check asks TensorFlow about the alternative too).
    """
    evaluates_on_tpu = self.eval_on_tpu if evaluates_on_tpu is None else evaluates_on_tpu
    return run_config.build_run_config(
        model_dir=None, iterations_per_loop=self.iterations_per_loop, num_shards=self.num_shards,
        save_checkpoints_steps=run_config.aligned_checkpoint_steps(
            self.save_checkpoints_steps or self.iterations_per_loop, self.iterations_per_loop),
        master=self.simulated_master(), evaluates_on_tpu=evaluates_on_tpu,
        host_call_every_n_steps=self.host_call_every_n_steps)

  def tpu_params(self, batch_size=None):
    """The params TPUEstimator passes to model_fn when it really runs on the TPU (per-core batch)."""
    params = dict(self.params)
    params.update(use_tpu=True, batch_size=batch_size or self.per_shard_batch_size)
    return params
