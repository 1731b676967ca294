"""Training one Estimator across processes (mnist.py): TensorFlow's distributed runtime, configured by TF_CONFIG.

TPU rule (where to run): TPUEstimator scales out differently -- to a bigger TPU slice (a pod slice named by
--tpu_name, more cores in --num_shards), one program feeding all its cores in lockstep. No TF_CONFIG, no ps.
"""
from absl import flags


def define_distributed_flags(fv=flags.FLAGS):
  flags.DEFINE_bool('distributed', False, 'Run as the task of a multi-process cluster that TF_CONFIG describes '
                    '(chief, worker, ps or evaluator), with tf.estimator.train_and_evaluate. Every task needs the '
                    'same flags, an explicit --model_dir and --data_dir they all can read, and data prepared '
                    'beforehand (prepare_data.py). local_cluster.py starts such a cluster on this machine.',
                    flag_values=fv)
  flags.DEFINE_integer('eval_throttle_secs', 60, 'With --distributed: the evaluator evaluates the newest '
                       'checkpoint on the validation split at most this often (and the final one always).',
                       lower_bound=0, flag_values=fv)
  flags.DEFINE_integer('wait_for_workers_secs', 0, 'With --distributed: the chief and the workers wait up to this '
                       'long for each other before their first step, so that they start training together. 0: no '
                       'waiting (TensorFlow\'s way: the chief starts at once, worker i joins 5*(i+1) s later, so in '
                       'a short run the chief may train alone).', lower_bound=0, flag_values=fv)
  flags.register_multi_flags_validator(
      ['distributed', 'model_dir'], lambda values: not values['distributed'] or bool(values['model_dir']),
      message='with --distributed every task must use the same --model_dir (the chief writes checkpoints there, '
              'the evaluator reads them): pass it explicitly, on storage all tasks share (e.g. gs://BUCKET/model).',
      flag_values=fv)
