"""The programs on gs://, end to end, through TensorFlow's own GCS client against the server of gcs_fixture.py.

Every program runs as a user runs it, in a subprocess inside the sandbox; what it left in the bucket is checked
through the server's own API (object names, sizes, content), not through TensorFlow. Both legs run all of it
except mnist_keras.py, which is TensorFlow 2 only.
"""
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from support.gcs_fixture import upload_splits
from support.paths import SUPPORT_DIR
from support.tiny_run import TINY_VALIDATION
from estimator_tpu.data import records
from support.programs import TINY

TF2 = tf.__version__.startswith('2.')
PREPARE = ['-m', 'tools.prepare_data']
SERVE = os.path.join(SUPPORT_DIR, 'serve_saved_model.py')
SPLIT_OBJECTS = ['mnist/test.tfrecords', 'mnist/train.tfrecords', 'mnist/validation.tfrecords']
PREPARED_OBJECTS = ['mnist/dataset.json'] + SPLIT_OBJECTS  # what a preparation writes: the splits, their description


def run(gcs, args, timeout=300, env=None):
  """Runs `python ARGS` from the repository root inside the sandbox; asserts it succeeded; returns its stderr."""
  result = gcs.run([sys.executable] + args, env=env, timeout=timeout)
  assert result.returncode == 0, result.stderr[-4000:]
  return result.stderr


def examples_of(data):
  """[(label, image bytes)] of a TFRecord file's bytes (parsed by TensorFlow in this process, from a local copy).

  Compared as parsed examples, not bytes: protobuf does not promise one byte order for the features map.
  """
  path = os.path.join(tempfile.gettempdir(), 'gcs-records-%d.tfrecords' % os.getpid())
  with open(path, 'wb') as f:
    f.write(data)
  try:
    images, labels = records.read_split(path)
    return list(zip(labels.tolist(), (image.tobytes() for image in images)))
  finally:
    os.remove(path)


def checkpoint_steps(gcs, prefix):
  """Steps of the checkpoints under `prefix` whose variables are all in the bucket (index and data; the .meta
  graph is written after the `checkpoint` index names the new one, and a restore does not need it)."""
  names = gcs.object_names(prefix)
  steps = {int(step) for step in re.findall(r'model\.ckpt-(\d+)\.index', ' '.join(names))}
  return sorted(step for step in steps if '%smodel.ckpt-%d.data-00000-of-00001' % (prefix, step) in names)


def latest_in_index(gcs, prefix):
  """The step the `checkpoint` index object names as the latest, or None."""
  if prefix + 'checkpoint' not in gcs.object_names(prefix):
    return None
  match = re.search(r'^model_checkpoint_path: ".*model\.ckpt-(\d+)"$', gcs.read_object(prefix + 'checkpoint').decode(),
                    re.M)
  return int(match.group(1))


def assert_no_temp_objects(gcs):
  names = gcs.object_names()
  assert not [name for name in names if '.tmp-' in name or '_temp' in name], names


def test_prepare_train_evaluate_predict_export_and_serve_on_gcs(gcs, idx_dir, tmp_path):
  # Data preparation from IDX files in the bucket into the bucket: what a local preparation writes, nothing else.
  idx_objects = []
  for name in sorted(os.listdir(idx_dir)):
    with open(os.path.join(idx_dir, name), 'rb') as f:
      gcs.write_object('idx/' + name, f.read())
    idx_objects.append('idx/' + name)
  run(gcs, PREPARE + ['--data_dir=%s' % gcs.url('mnist'), '--source_dir=%s' % gcs.url('idx'),
                      '--validation_size=%d' % TINY_VALIDATION])
  local = str(tmp_path / 'local')
  records.convert_idx_dir(idx_dir, local, validation_size=TINY_VALIDATION)
  assert gcs.object_names() == idx_objects + ['mnist/'] + PREPARED_OBJECTS
  for split in records.SPLITS:
    written = examples_of(gcs.read_object('mnist/%s.tfrecords' % split))
    assert written == examples_of(open(records.split_path(local, split), 'rb').read()), split

  # mnist_tpu.py --mode=all: trains, evaluates every test example exactly once, predicts into a gs:// CSV.
  model = gcs.url('model')
  log = run(gcs, ['mnist_tpu.py'] + TINY + ['--data_dir=%s' % gcs.url('mnist'), '--model_dir=%s' % model,
                                           '--num_predictions=-1', '--predictions_file=%s' % gcs.url('predictions.csv')])
  assert 'Evaluating on test: 110 real examples + 40 padding = 3 batches of 50.' in log
  assert checkpoint_steps(gcs, 'model/') == [0, 10, 20, 30] and latest_in_index(gcs, 'model/') == 30
  summary = json.loads(gcs.read_object('model/mnist_tpu_results.json').decode())
  assert summary['global_step'] == 30 and summary['eval']['examples'] == 110
  assert summary['eval']['accuracy'] >= 0.8
  rows = list(csv.DictReader(io.StringIO(gcs.read_object('predictions.csv').decode())))
  _, labels = records.read_split(records.split_path(local, 'test'))
  assert [int(row['label']) for row in rows] == labels.tolist()  # all 110, in order
  names = gcs.object_names()
  assert [name for name in names if name.startswith('model/events.out.tfevents.')]
  assert [name for name in names if name.startswith('model/eval_test/events.out.tfevents.')]
  assert_no_temp_objects(gcs)

  # --mode=export into the bucket; a fresh process that has only TensorFlow loads it from gs:// and serves it.
  log = run(gcs, ['mnist_tpu.py'] + TINY + ['--mode=export', '--model_dir=%s' % model,
                                           '--export_dir=%s' % gcs.url('export')])
  exported = re.search(r'Exported \S+ to (gs://\S+?)\.?$', log, re.M).group(1)
  assert exported.startswith(gcs.url('export/'))
  assert exported[len(gcs.url()):] + '/saved_model.pb' in gcs.object_names('export/')
  test_path = records.split_path(local, 'test')
  images = records.read_split(test_path)[0][:5].astype(np.float32)
  examples = [record for _, record in zip(range(5), tf.io.tf_record_iterator(test_path))]
  np.save(str(tmp_path / 'images.npy'), images)
  np.save(str(tmp_path / 'examples.npy'), np.array(examples, dtype=object))
  result = gcs.run([sys.executable, SERVE, exported, 'serve', str(tmp_path / 'images.npy'),
                    str(tmp_path / 'examples.npy')], timeout=300)
  assert result.returncode == 0, result.stderr[-4000:]
  served = json.loads(result.stdout.strip().splitlines()[-1])
  expected = [int(row['class_id']) for row in rows[:5]]  # the same checkpoint predicted them in --mode=all
  assert served['images']['class_ids'] == served['examples']['class_ids'] == expected

  # --checkpoint_path on gs://: evaluate an older checkpoint; its eval events go next to it.
  log = run(gcs, ['mnist_tpu.py'] + TINY + ['--mode=evaluate', '--data_dir=%s' % gcs.url('mnist'),
                                           '--checkpoint_path=%s' % gcs.url('model/model.ckpt-20'),
                                           '--eval_split=validation'])
  assert re.search(r'validation accuracy [\d.]+, mean loss [\d.]+ over 50 examples \(global step 20\)', log), log

  # mnist.py, the plain Estimator, warm-started from the TPUEstimator's gs:// checkpoint.
  log = run(gcs, ['mnist.py', '--train_steps=10', '--batch_size=16', '--save_checkpoints_steps=10',
                  '--eval_batch_size=50', '--num_predictions=3', '--data_dir=%s' % gcs.url('mnist'),
                  '--model_dir=%s' % gcs.url('plain'), '--warm_start_from=%s' % model])
  assert 'Warm-starting the trainable variables from %s' % gcs.url('model/model.ckpt-30') in log
  summary = json.loads(gcs.read_object('plain/mnist_results.json').decode())
  assert summary['global_step'] == 10 and summary['eval']['examples'] == 110
  assert summary['eval']['accuracy'] >= 0.8  # warm-started: 10 steps from scratch would not get there
  assert checkpoint_steps(gcs, 'plain/') == [0, 10]
  assert_no_temp_objects(gcs)


def test_training_killed_mid_run_resumes_from_the_gcs_checkpoint(gcs, data_dir):
  data = upload_splits(gcs, data_dir)
  command = [sys.executable, 'mnist_tpu.py'] + TINY + ['--data_dir=%s' % data, '--model_dir=%s' % gcs.url('model'),
                                                      '--train_steps=45', '--num_predictions=0']
  first = gcs.popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
  try:
    deadline = time.time() + 240
    while (latest_in_index(gcs, 'model/') or 0) < 10 and first.poll() is None and time.time() < deadline:
      time.sleep(0.05)
    os.kill(first.pid, signal.SIGKILL)  # nsenter execs the program: this pid is the program's own
  finally:
    first.kill()
    first.wait()
  killed_at = latest_in_index(gcs, 'model/')
  assert killed_at is not None and 10 <= killed_at < 45, killed_at
  assert killed_at in checkpoint_steps(gcs, 'model/')  # the index only ever names a complete checkpoint

  log = run(gcs, command[1:])
  assert 'Restoring parameters from %s' % gcs.url('model/model.ckpt-%d' % killed_at) in log
  assert latest_in_index(gcs, 'model/') == 45 and 45 in checkpoint_steps(gcs, 'model/')
  assert json.loads(gcs.read_object('model/mnist_tpu_results.json').decode())['global_step'] == 45
  # A kill in the middle of a checkpoint save may leave TensorFlow's staging objects (`..._temp...`, never read);
  # ours (`.tmp-`) must not be there.
  assert not [name for name in gcs.object_names() if '.tmp-' in name]


def test_fetched_mnist_goes_into_a_gcs_data_dir(gcs):
  """The MNIST fetch path (mirrors, checksums) writing into gs://, offline: a mirror on loopback inside the sandbox
  serves small IDX files that the checksums are set to (tests/gcs_fetch_mnist.py)."""
  result = gcs.run([sys.executable, os.path.join(SUPPORT_DIR, 'gcs_fetch_mnist.py'), gcs.url('mnist')])
  assert result.returncode == 0 and 'prepared %s' % gcs.url('mnist') in result.stdout, result.stderr[-4000:]
  names = gcs.object_names()
  assert names == sorted(['mnist/', 'mnist/idx/'] + ['mnist/idx/%s.gz' % name for name in (
      't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte', 'train-images-idx3-ubyte', 'train-labels-idx1-ubyte')]
                        + PREPARED_OBJECTS)
  assert len(examples_of(gcs.read_object('mnist/test.tfrecords'))) == 110


def test_readiness_check_reads_its_data_from_gcs(gcs, data_dir):
  data = upload_splits(gcs, data_dir)
  result = gcs.run([sys.executable, 'mnist_tpu.py', '--mode=check_tpu', '--num_shards=2', '--batch_size=32',
                    '--eval_batch_size=10', '--data_dir=%s' % data, '--model_dir=%s' % gcs.url('model')], timeout=600)
  assert result.returncode == 0, result.stdout + result.stderr[-3000:]
  lines = result.stdout.splitlines()
  assert lines[0] == ('PASS storage_access (rule 17): Cloud Storage answers for --data_dir=%s, --model_dir=%s; every bucket '
                      'exists and may be used.' % (data, gcs.url('model')))
  assert any(line.startswith('PASS eval_coverage (rule 9): ') and '110 examples' in line for line in lines), lines
  assert gcs.object_names() == SPLIT_OBJECTS  # it only reads


def test_cluster_route_on_gcs(gcs, data_dir, tmp_path):
  """tools/mnist_cluster.py with a chief and an evaluator sharing a gs:// model_dir."""
  data = upload_splits(gcs, data_dir)
  run(gcs, ['-m', 'tools.local_cluster', '--workers=0', '--ps=0', '--task_log_dir=%s' % (tmp_path / 'logs'),
            '--timeout_secs=400', '--', '-m', 'tools.mnist_cluster', '--data_dir=%s' % data,
            '--model_dir=%s' % gcs.url('cluster'), '--train_steps=20', '--batch_size=16', '--eval_batch_size=50',
            '--save_checkpoints_steps=10', '--eval_throttle_secs=1', '--num_predictions=3'], timeout=500)
  steps = json.loads(gcs.read_object('cluster/task_steps/chief-0.json').decode())
  assert steps['steps'] == 20 and steps['global_step_at_end'] == 20
  summary = json.loads(gcs.read_object('cluster/mnist_results.json').decode())
  assert summary['global_step'] == 20 and summary['eval']['examples'] == 110
  assert [name for name in gcs.object_names('cluster/eval_validation/') if 'tfevents' in name]
  assert_no_temp_objects(gcs)


@pytest.mark.skipif(not TF2, reason='mnist_keras.py is the TensorFlow 2 route')
def test_keras_route_on_gcs(gcs, data_dir):
  data = upload_splits(gcs, data_dir)
  command = ['mnist_keras.py', '--use_tpu=false', '--master=', '--train_steps=20', '--batch_size=16',
             '--iterations=5', '--save_checkpoints_steps=10', '--eval_batch_size=50', '--num_predictions=3',
             '--data_dir=%s' % data, '--model_dir=%s' % gcs.url('keras')]
  run(gcs, command)
  names = gcs.object_names('keras/')
  assert {'keras/ckpt-10.index', 'keras/ckpt-20.index', 'keras/checkpoint'} <= set(names), names
  summary = json.loads(gcs.read_object('keras/mnist_keras_results.json').decode())
  assert summary['global_step'] == 20 and summary['eval']['examples'] == 110  # every test image, exactly once
  log = run(gcs, command[:3] + ['--train_steps=25'] + command[4:])  # restores from gs://, trains 5 more
  assert 'Restored %s (step 20)' % gcs.url('keras/ckpt-20') in log
  assert 'keras/ckpt-25.index' in gcs.object_names('keras/')
