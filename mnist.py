"""Trains, evaluates, predicts and exports the MNIST CNN with a plain tf.estimator.Estimator on the local CPU.

Local:      python mnist.py [--data_dir=DIR --model_dir=DIR --train_steps=N --batch_size=N ...]

The pre-TPU starting point of mnist_tpu.py: the same network, data, flags, optimiser, steps and modes. `--mode`
picks what to do (flags/modes.py); the default `all` trains, evaluates on the whole test split and logs a few
predictions. The same Estimator trained by a TF_CONFIG cluster of processes is tools/mnist_cluster.py.

Read it next to mnist_tpu.py: `diff mnist.py mnist_tpu.py` shows the port, each difference with its TPU rule
(and estimator_tpu/estimator/ next to estimator_tpu/tpu/; docs/MIGRATION.md lists them all).
"""
import numpy as np
import tensorflow.compat.v1 as tf
from absl import app
from absl import flags
from absl import logging

from estimator_tpu import model
from estimator_tpu import modes
from estimator_tpu.data import records
from estimator_tpu.distributed import training as distributed
from estimator_tpu.estimator import input_fn as input_fn_lib
from estimator_tpu.estimator import model_fn as model_fn_lib
from estimator_tpu.runtime import checkpoints
from estimator_tpu.runtime import logs
from estimator_tpu.runtime import progress
from estimator_tpu.runtime import results
from estimator_tpu.runtime.errors import exit_on_user_error
from flags import mnist as mnist_flags
from flags import training

FLAGS = flags.FLAGS
RESULTS_FILE = 'mnist_results.json'
PREDICT_SPLIT = 'test'
KEEP_CHECKPOINT_MAX = 5


def build_model_fn(fv):
  return model_fn_lib.model_fn_builder(**training.learning_rate_args(fv))


# TPU rule (where the TPU is): no cluster. mnist_tpu.py resolves --tpu_name and checks that the TPU answers first.
def build_estimator(fv, model_dir, unused_cluster=None, seed=None):
  """A plain Estimator from the flags; `seed` is the graph-level seed (runtime/seeds.py), None for none.

  TPU rule (where and how to run): mnist_tpu.py builds `tf.estimator.tpu.RunConfig` with a `TPUConfig`
  (iterations_per_loop, num_shards) and a TPU master or cluster resolver, and a `TPUEstimator` that is told
  `use_tpu` and the train/eval/predict batch sizes, because it splits each batch across the TPU cores itself.
  """
  # log_step_count_steps=None: runtime/progress.py logs the training progress instead of Estimator's hooks.
  config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=fv.save_checkpoints_steps,
                                  keep_checkpoint_max=KEEP_CHECKPOINT_MAX, tf_random_seed=seed,
                                  log_step_count_steps=None)
  model_fn = build_model_fn(fv)
  return tf.estimator.Estimator(
      model_fn=model_fn, config=config,
      warm_start_from=checkpoints.warm_start_checkpoint(fv.warm_start_from, model_dir))


def train(fv, estimator, max_steps, hooks=None):
  records.require_split(fv.data_dir, 'train')
  batch_size = training.effective_batch_size(fv.batch_size, use_tpu=False)
  logging.info('Training to step %d, batch %d, on CPU.', max_steps, batch_size)
  # max_steps is optional for a plain Estimator (it could also stop where the input ends); TPUEstimator on a TPU
  # refuses to train without max_steps or steps, because it runs iterations_per_loop steps per device call.
  every_steps = progress.every_steps(fv.log_every_steps)
  estimator.train(input_fn_lib.input_fn_builder(fv.data_dir, 'train', True, batch_size), max_steps=max_steps,
                  hooks=list(hooks or []) + [progress.TrainingProgress(max_steps, batch_size, every_steps)])


def evaluate(fv, estimator, checkpoint=None):
  """Evaluation of --eval_split, read to its end (or its first --eval_steps batches); returns (metrics, examples)."""
  path = records.require_split(fv.data_dir, fv.eval_split)
  num_examples = records.count_examples(path)
  # TPU rule (eval steps): steps=None reads the split to its end, short last batch included. On a TPU,
  # TPUEstimator.evaluate needs `steps` and every batch full, so mnist_tpu.py pads the split and counts the batches.
  counted = num_examples if fv.eval_steps is None else min(num_examples, fv.eval_steps * fv.eval_batch_size)
  input_fn = input_fn_lib.input_fn_builder(fv.data_dir, fv.eval_split, False, fv.eval_batch_size)
  # name= gives each split its own TensorBoard directory, model_dir/eval_<split>.
  batches = -(-counted // fv.eval_batch_size)
  metrics = estimator.evaluate(input_fn, steps=fv.eval_steps, checkpoint_path=checkpoint, name=fv.eval_split,
                               hooks=[progress.EvaluationProgress(batches, fv.eval_split)])
  logging.info('%s accuracy %.4f, mean loss %.4f over %d examples (global step %d).', fv.eval_split,
               metrics['accuracy'], metrics['mean_loss'], counted, metrics['global_step'])
  return metrics, counted


def predict(fv, estimator, checkpoint=None):
  """Predicts the first --num_predictions test images (-1: all) and logs a few next to their labels."""
  images, labels = records.read_split(records.require_split(fv.data_dir, PREDICT_SPLIT))
  count = len(labels) if fv.num_predictions < 0 else min(fv.num_predictions, len(labels))
  if count == 0:
    return []
  pixels = images[:count].reshape(count, model.NUM_PIXELS).astype(np.float32)

  def input_fn():
    # A short last batch is fine here; on a TPU, TPUEstimator.predict pads it itself.
    return tf.data.Dataset.from_tensor_slices(model.features_of(pixels)).batch(fv.eval_batch_size)

  outputs = estimator.predict(input_fn, checkpoint_path=checkpoint, yield_single_examples=True)
  predictions = results.prediction_rows(outputs, labels[:count])
  logging.info('Predicted %d %s images.', len(predictions), PREDICT_SPLIT)
  return predictions


ROUTE = modes.Route('mnist', RESULTS_FILE, build_estimator, train, evaluate, predict)
MODE_FUNCTIONS = modes.MODE_FUNCTIONS


def run(fv):
  """Runs --mode; returns its result."""
  distributed.task_from_tf_config(distributed=False)  # a cluster in TF_CONFIG is tools/mnist_cluster.py's
  return modes.run(fv, ROUTE, None, MODE_FUNCTIONS)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError('unexpected arguments: %s' % ' '.join(argv[1:]))
  logs.configure(FLAGS.tf_log)
  exit_on_user_error(run, FLAGS)


if __name__ == '__main__':
  mnist_flags.define_mnist_flags()
  app.run(main)
