"""MNIST with an Estimator, the lesson of two files read side by side: mnist.py and mnist_tpu.py.

  python mnist.py                                   a plain tf.estimator.Estimator, on this machine
  python mnist_tpu.py --use_tpu=false --master=''   TPUEstimator, on this machine's CPU
  python mnist_tpu.py --tpu_name=local              TPUEstimator on the TPU of a TPU VM (TF 2.15)
  python mnist_tpu.py --mode=check_tpu --tpu_type=v3-8     would it run on that TPU? (no TPU needed)

`diff mnist.py mnist_tpu.py` is the port: each difference carries its numbered TPU rule
(estimator_tpu/rules.py, docs/MIGRATION.md). Both read top to bottom: the model_fn, the estimator,
then how to train, evaluate, predict and export with it. What --mode runs (default `all`: train,
evaluate on every test image, predict a few) and everything else around the lesson is
estimator_tpu/runner.py's.
"""
import tensorflow.compat.v1 as tf
from absl import app

from estimator_tpu import runner
from estimator_tpu import serving
# TPU rule 1 (TPUEstimator): the TPU route's model_fn and input_fn, and TPUEstimator's RunConfig.
from estimator_tpu.tpu import input_fn as input_fn_lib
from estimator_tpu.tpu import model_fn as model_fn_lib
from estimator_tpu.tpu import run_config as run_config_lib
from flags import mnist_tpu as program_flags
from flags import help as program_help
from flags import network
from flags import training

KEEP_CHECKPOINT_MAX = 5
# TPU rule 7 (summaries on the host): on the CPU, flush them every few steps: buffered ones cost
# memory.
LOCAL_SUMMARY_FLUSH_STEPS = 5


def build_model_fn(fv, model_dir):
  # TPU rule 7 (summaries on the host): model_fn's host_call writes them into model_dir, flushed
  # once per device loop on a TPU (each flush uploads the events file again to gs://).
  flush_steps = fv.iterations if fv.use_tpu else LOCAL_SUMMARY_FLUSH_STEPS
  # TPU rule 20 (bfloat16): --precision=bfloat16 computes the network in bfloat16.
  return model_fn_lib.model_fn_builder(**training.learning_rate_args(fv), summary_dir=model_dir,
                                       summary_flush_steps=flush_steps, precision=fv.precision,
                                       **network.network_args(fv))


def build_estimator(fv, job):
  """The estimator for one job of the runner (model_dir, seed, ...), configured by the flags."""
  # TPU rule 14 (pod slices): --eval_on_tpu=false evaluates on the CPU; prediction stays on the TPU.
  eval_on_tpu = fv.eval_on_tpu or job.phase == runner.PREDICT
  # TPU rule 1 (TPUEstimator): tpu.RunConfig with TPUConfig(iterations_per_loop, num_shards), and
  # where the TPU is (rule 2), in job.cluster or --master.
  config = run_config_lib.build_run_config(
      model_dir=job.model_dir, iterations_per_loop=fv.iterations, num_shards=fv.num_shards,
      save_checkpoints_steps=fv.save_checkpoints_steps, master=fv.master, cluster=job.cluster,
      keep_checkpoint_max=KEEP_CHECKPOINT_MAX, evaluates_on_tpu=fv.use_tpu and eval_on_tpu,
      tf_random_seed=job.graph_seed, host_call_every_n_steps=fv.host_call_every_n_steps)
  # TPU rule 1 (TPUEstimator): the global batch sizes, which TPUEstimator splits over the cores;
  # export_to_tpu adds a TPU metagraph (tags serve, tpu) to the SavedModel's CPU one.
  return tf.estimator.tpu.TPUEstimator(
      model_fn=build_model_fn(fv, job.model_dir), config=config, use_tpu=fv.use_tpu,
      train_batch_size=fv.batch_size, eval_batch_size=fv.eval_batch_size,
      predict_batch_size=fv.eval_batch_size, eval_on_tpu=eval_on_tpu,
      export_to_tpu=fv.use_tpu if fv.export_to_tpu is None else fv.export_to_tpu,
      warm_start_from=job.warm_start_from)


def train(fv, estimator, max_steps, hooks):
  # TPU rule 3 (params): TPUEstimator passes the batch size to input_fn, in params.
  input_fn = input_fn_lib.train_input_fn_builder(fv.data_dir)
  estimator.train(input_fn, max_steps=max_steps, hooks=hooks)


def evaluate(fv, estimator, checkpoint, hooks):
  # TPU rule 9 (steps): a TPU runs exactly `steps` full batches; the input pads the last one.
  steps = input_fn_lib.eval_steps(fv.data_dir, fv.eval_split, fv.eval_batch_size, fv.eval_steps)
  input_fn = input_fn_lib.eval_input_fn_builder(fv.data_dir, fv.eval_split, fv.eval_batch_size,
                                                steps)
  return estimator.evaluate(input_fn, steps=steps, checkpoint_path=checkpoint,
                            name=fv.eval_split, hooks=hooks)


def predict(fv, estimator, checkpoint, count):
  input_fn = input_fn_lib.predict_input_fn_builder(fv.data_dir, runner.PREDICT_SPLIT, count,
                                                   fv.eval_batch_size)
  return estimator.predict(input_fn, checkpoint_path=checkpoint, yield_single_examples=True)


def export(fv, estimator, export_dir, checkpoint):
  return estimator.export_saved_model(export_dir, serving.receiver_fn(fv.data_dir),
                                      checkpoint_path=checkpoint)


# TPU rule 1 (TPUEstimator): the TPU route (--use_tpu and the TPU's flags are this program's).
ROUTE = runner.Route(__file__, True, build_model_fn, build_estimator, train, evaluate, predict,
                     export)


def main(argv):
  """Runs --mode with the estimator build_estimator makes for each phase of it: by default trains,
  evaluates on every test image and predicts a few. The model directory, the data, the seed, the
  progress lines and the results file are estimator_tpu/runner.py's."""
  runner.run_program(argv, ROUTE)


if __name__ == '__main__':
  program_flags.define_flags()
  app.run(main, flags_parser=program_help.parse_flags)
