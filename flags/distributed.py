"""Training one Estimator across processes (tools/mnist_cluster.py): TensorFlow's distributed runtime, configured
by TF_CONFIG.

TPU rule 14 (pod slices): TPUEstimator scales out differently -- to a bigger TPU slice (a pod slice named by
--tpu_name, more cores in --num_shards), one program feeding all its cores in lockstep. No TF_CONFIG, no ps.
"""
from absl import flags


def define_distributed_flags(fv=flags.FLAGS):
  flags.DEFINE_integer('eval_throttle_secs', 60, 'The evaluator evaluates the newest '
                       'checkpoint on the validation split at most this often, until one at --train_steps or later.',
                       lower_bound=0, flag_values=fv)
  flags.DEFINE_integer('wait_for_workers_secs', 0, 'The chief and the workers wait up to this '
                       'long for each other before their first step, so that they start training together. 0: no '
                       'waiting (TensorFlow\'s way: the chief starts at once, worker i joins 5*(i+1) s later, so in '
                       'a short run the chief may train alone).', lower_bound=0, flag_values=fv)
