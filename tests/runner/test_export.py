"""SavedModel export: load it in a fresh process and get the predictions estimator.predict gives."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow.compat.v1 as tf
from tensorflow.core.protobuf import saved_model_pb2

import mnist_tpu
from estimator_tpu import runner
from support import tiny_run
from support.programs import training_job
from support.paths import SUPPORT_DIR
from estimator_tpu import model
from estimator_tpu.data import records
from support.loopback import closed_port

SERVER = os.path.join(SUPPORT_DIR, 'serve_saved_model.py')
NUM_IMAGES = 7


def serve(export_dir, tags, images, examples, tmp_path):
  """Outputs of both serving signatures, computed by a new Python process that only has TensorFlow."""
  images_path, examples_path = str(tmp_path / 'images.npy'), str(tmp_path / 'examples.npy')
  np.save(images_path, images)
  np.save(examples_path, np.array(examples, dtype=object))
  result = subprocess.run([sys.executable, SERVER, export_dir, tags, images_path, examples_path],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
  assert result.returncode == 0, result.stderr[-3000:]
  return json.loads(result.stdout.strip().splitlines()[-1])


def in_memory_predictions(estimator, images, checkpoint):
  def input_fn(params):
    dataset = tf.data.Dataset.from_tensor_slices({model.IMAGE_KEY: images.reshape(-1, 784)})
    return dataset.batch(params['batch_size'])
  return list(estimator.predict(input_fn, checkpoint_path=checkpoint))


@pytest.fixture(scope='module')
def exported(tmp_path_factory, tiny_model):
  """Exports tiny_model with --export_to_tpu (the TPU metagraph builds without a TPU); returns (fv, path)."""
  export_base = str(tmp_path_factory.mktemp('export'))
  fv = tiny_run.parse(tiny_run.TINY_ARGS + [
      '--mode=export', '--export_to_tpu', '--model_dir=%s' % tiny_model[1], '--export_dir=%s' % export_base])
  return fv, runner.run(fv, mnist_tpu.ROUTE)


def test_saved_model_has_a_cpu_and_a_tpu_metagraph(exported):
  saved_model = saved_model_pb2.SavedModel()
  with tf.io.gfile.GFile(os.path.join(exported[1], 'saved_model.pb'), 'rb') as f:
    saved_model.ParseFromString(f.read())
  tag_sets = sorted(sorted(meta_graph.meta_info_def.tags) for meta_graph in saved_model.meta_graphs)
  assert tag_sets == [['serve'], ['serve', 'tpu']]


def test_served_predictions_match_estimator_predict(exported, tiny_model, tmp_path):
  fv, path = exported
  test_path = records.split_path(tiny_model[0], 'test')
  images = records.read_split(test_path)[0][:NUM_IMAGES].astype(np.float32)  # raw 0..255, like the input pipeline
  examples = [record for _, record in zip(range(NUM_IMAGES), tf.io.tf_record_iterator(test_path))]
  checkpoint = tf.train.latest_checkpoint(tiny_model[1])
  expected = in_memory_predictions(mnist_tpu.build_estimator(fv, training_job(tiny_model[1])), images, checkpoint)

  served = serve(path, 'serve', images, examples, tmp_path)
  assert served['signatures'] == ['examples:serving_default', 'serving_default']
  for signature in ('images', 'examples'):
    assert served[signature]['class_ids'] == [int(p['class_ids']) for p in expected]
    np.testing.assert_allclose(served[signature]['probabilities'], [p['probabilities'] for p in expected],
                               rtol=1e-5, atol=1e-6)


def test_export_with_use_tpu_needs_no_reachable_tpu(tmp_path, tiny_model):
  """An export runs on this machine: no resolver, no probe (nothing listens on the master's port), local paths."""
  fv = tiny_run.parse(tiny_run.TINY_ARGS + [
      '--use_tpu=true', '--master=grpc://127.0.0.1:%d' % closed_port(), '--mode=export',
      '--model_dir=%s' % tiny_model[1], '--export_dir=%s' % (tmp_path / 'export')])
  path = runner.run(fv, mnist_tpu.ROUTE)
  saved_model = saved_model_pb2.SavedModel()
  with tf.io.gfile.GFile(os.path.join(path, 'saved_model.pb'), 'rb') as f:
    saved_model.ParseFromString(f.read())
  assert sorted(sorted(graph.meta_info_def.tags) for graph in saved_model.meta_graphs) == [['serve'],
                                                                                          ['serve', 'tpu']]
