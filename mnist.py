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
from estimator_tpu.estimator import input_fn as input_fn_lib
from estimator_tpu.estimator import model_fn as model_fn_lib
from flags import mnist as program_flags
from flags import help as program_help
from flags import network
from flags import training

KEEP_CHECKPOINT_MAX = 5


def build_model_fn(fv, model_dir):
  del model_dir  # the Estimator writes model_fn's summaries into it itself
  return model_fn_lib.model_fn_builder(**training.learning_rate_args(fv),
                                       **network.network_args(fv))


def build_estimator(fv, job):
  """The estimator for one job of the runner (model_dir, seed, ...), configured by the flags."""
  # TPU rule 1 (TPUEstimator): a plain RunConfig and Estimator, which run model_fn on this machine's
  # devices; the batch sizes are the input_fns' business.
  config = tf.estimator.RunConfig(
      model_dir=job.model_dir, save_checkpoints_steps=fv.save_checkpoints_steps,
      keep_checkpoint_max=KEEP_CHECKPOINT_MAX, tf_random_seed=job.graph_seed,
      log_step_count_steps=None)
  return tf.estimator.Estimator(model_fn=build_model_fn(fv, job.model_dir), config=config,
                                warm_start_from=job.warm_start_from)


def train(fv, estimator, max_steps, hooks):
  # TPU rule 3 (params): the input_fn builder takes the batch size.
  input_fn = input_fn_lib.train_input_fn_builder(fv.data_dir, fv.batch_size)
  estimator.train(input_fn, max_steps=max_steps, hooks=hooks)


def evaluate(fv, estimator, checkpoint, hooks):
  input_fn = input_fn_lib.eval_input_fn_builder(fv.data_dir, fv.eval_split, fv.eval_batch_size)
  # TPU rule 9 (steps): without --eval_steps, steps=None reads the split to its end.
  return estimator.evaluate(input_fn, steps=fv.eval_steps, checkpoint_path=checkpoint,
                            name=fv.eval_split, hooks=hooks)


def predict(fv, estimator, checkpoint, count):
  input_fn = input_fn_lib.predict_input_fn_builder(fv.data_dir, runner.PREDICT_SPLIT, count,
                                                   fv.eval_batch_size)
  return estimator.predict(input_fn, checkpoint_path=checkpoint, yield_single_examples=True)


def export(fv, estimator, export_dir, checkpoint):
  return estimator.export_saved_model(export_dir, serving.receiver_fn(fv.data_dir),
                                      checkpoint_path=checkpoint)


# TPU rule 1 (TPUEstimator): not the TPU route (no --use_tpu, no TPU flags).
ROUTE = runner.Route(__file__, False, build_model_fn, build_estimator, train, evaluate, predict,
                     export)


def main(argv):
  """Runs --mode with the estimator build_estimator makes for each phase of it: by default trains,
  evaluates on every test image and predicts a few. The model directory, the data, the seed, the
  progress lines and the results file are estimator_tpu/runner.py's."""
  runner.run_program(argv, ROUTE)


if __name__ == '__main__':
  program_flags.define_flags()
  app.run(main, flags_parser=program_help.parse_flags)
