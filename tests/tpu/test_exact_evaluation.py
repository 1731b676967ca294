"""Exact evaluation: every example of the split counts once, although the split does not fill its last batch."""
import shutil

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

import mnist_tpu
from estimator_tpu import model
from estimator_tpu import runner
from support import tiny_run
from support.programs import training_job
from estimator_tpu.data import records
from estimator_tpu.tpu import input_fn as tpu_input

EVAL_BATCH = 50  # the 110 test examples fill 2 batches and leave 10 over
MISLABELED = 10


@pytest.fixture
def relabeled_data_dir(tmp_path, tiny_model):
  """tiny_model's data, but the last 10 test examples (the ones a dropped remainder loses) carry a wrong label.

  The model gets those wrong, so the accuracy over all 110 examples differs from the one over the first 100.
  """
  data_dir = str(tmp_path / 'data')
  shutil.copytree(tiny_model[0], data_dir)
  path = records.split_path(data_dir, 'test')
  images, labels = records.read_split(path)
  labels[-MISLABELED:] = (labels[-MISLABELED:] + 1) % 10
  records.write_split(path, images, labels)
  return data_dir


def dropping_input_fn(data_dir):
  """Evaluation input that drops the partial last batch: what exact evaluation replaces."""
  path = records.split_path(data_dir, 'test')

  def input_fn(params):
    dataset = records.read_dataset(path).batch(params['batch_size'], drop_remainder=True)
    return model.parse_dataset(dataset, params['batch_size'], path)

  return input_fn


def test_accuracy_and_loss_count_every_example_exactly_once(tmp_path, tiny_model, relabeled_data_dir):
  checkpoint = tf.train.latest_checkpoint(tiny_model[1])
  fv = tiny_run.parse(tiny_run.TINY_ARGS + [
      '--mode=evaluate', '--data_dir=%s' % relabeled_data_dir, '--model_dir=%s' % (tmp_path / 'model'),
      '--checkpoint_path=%s' % checkpoint, '--eval_batch_size=%d' % EVAL_BATCH])
  metrics, counted = runner.run(fv, mnist_tpu.ROUTE)

  # Independently: the model's probabilities for exactly those 110 examples, and their labels.
  _, labels = records.read_split(records.split_path(relabeled_data_dir, 'test'))
  estimator = mnist_tpu.build_estimator(fv, training_job(str(tmp_path / 'model')))
  outputs = estimator.predict(tpu_input.predict_input_fn_builder(relabeled_data_dir, 'test', -1, EVAL_BATCH),
                              checkpoint_path=checkpoint)
  probabilities = np.array([output['probabilities'] for output in outputs], np.float64)
  assert counted == len(probabilities) == len(labels) == 110
  correct = probabilities.argmax(axis=1) == labels
  assert metrics['accuracy'] == pytest.approx(correct.mean(), abs=1e-6)
  true_class = probabilities[np.arange(len(labels)), labels]
  underflowed = true_class == 0.0  # a confident wrong answer: float32 softmax rounds the label's probability to 0
  cross_entropy = -np.log(true_class[~underflowed])
  if not underflowed.any():
    assert metrics['mean_loss'] == pytest.approx(cross_entropy.mean(), rel=1e-3)
  else:
    # Each underflowed example's loss (the metric computes it from the logits) is at least -log of the smallest
    # normal float32 (TensorFlow's CPU kernels flush denormals to zero), and every example is counted once: the rest
    # of the mean's total is theirs.
    rest = metrics['mean_loss'] * len(labels) - cross_entropy.sum()
    floor = -np.log(np.finfo(np.float32).tiny)
    assert rest >= underflowed.sum() * floor * (1 - 1e-3), (rest, underflowed.sum())

  # What dropping the partial batch reports (the old behaviour): the first 100 examples only -- a different number.
  dropped = estimator.evaluate(dropping_input_fn(relabeled_data_dir),
                               steps=110 // EVAL_BATCH, checkpoint_path=checkpoint, name='dropped')
  assert dropped['accuracy'] == pytest.approx(correct[:100].mean(), abs=1e-6)
  assert dropped['accuracy'] != pytest.approx(metrics['accuracy'], abs=1e-3)
