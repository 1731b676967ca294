"""The TPU run being checked, as plain values (the same ones TPUEstimator, RunConfig and TPUConfig receive)."""


class TpuPlan(object):
  """What a TPUEstimator run on a Cloud TPU would be given.

  Batch sizes are global (all cores together), as passed to TPUEstimator. `eval_examples` is the size of the split
  evaluate() reads and `eval_steps` the steps it is asked for; leave them None to skip that check. Set
  `eval_padded` when the eval input pads the split with weight-0 rows to full batches (as this project's does). Name the TPU
  with `tpu_name` (resolved with TPUClusterResolver) or `master` (grpc://HOST:PORT); with neither, the checks that
  need a TPU are skipped. `params` are extra model_fn/input_fn params (TPUEstimator's `params`).
  """

  def __init__(self, num_shards, train_batch_size, eval_batch_size=None, predict_batch_size=None,
               iterations_per_loop=1, save_checkpoints_steps=None, eval_examples=None, eval_steps=None,
               model_dir=None, data_dir=None, tpu_name=None, tpu_zone=None, gcp_project=None, master=None,
               params=None, eval_padded=False):
    self.num_shards = num_shards
    self.train_batch_size = train_batch_size
    self.eval_batch_size = eval_batch_size
    self.predict_batch_size = predict_batch_size
    self.iterations_per_loop = iterations_per_loop
    self.save_checkpoints_steps = save_checkpoints_steps
    self.eval_examples = eval_examples
    self.eval_steps = eval_steps
    self.eval_padded = eval_padded
    self.model_dir = model_dir
    self.data_dir = data_dir
    self.tpu_name = tpu_name
    self.tpu_zone = tpu_zone
    self.gcp_project = gcp_project
    self.master = master
    self.params = dict(params or {})

  @property
  def per_shard_batch_size(self):
    """What params['batch_size'] is on each core (PER_HOST_V1/V2 input): the global batch over the cores."""
    return self.train_batch_size // self.num_shards

  @property
  def names_cloud_tpu(self):
    return bool(self.tpu_name or self.master)

  def tpu_params(self):
    """The params TPUEstimator passes to model_fn and input_fn when it really runs on the TPU."""
    params = dict(self.params)
    params.update(use_tpu=True, batch_size=self.per_shard_batch_size)
    return params
