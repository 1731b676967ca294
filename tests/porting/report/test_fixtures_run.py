"""The port report's pattern fixtures are real programs: each runs as `python SCRIPT.py` does (runpy, in a fresh
folder), trains a few steps on data written in its code and ends without an error, under this leg's TensorFlow.
The fixtures for tf.contrib patterns run under TensorFlow 1.15 only. (The older fixtures custom_estimator,
keras_in_model_fn, bert_like and contrib_tpu are scanned, never run: their docstrings say so.)"""
import os
import runpy
import shutil
import sys
import tempfile

import pytest
import tensorflow.compat.v1 as tf

from support.paths import PORT_FIXTURES

# fixture -> the scripts to run, in order, from one folder.
RUNS = {
    'main_block': ['ner_tagger.py'],
    'class_input': ['train.py'],
    'bound_method_input': ['main.py'],
    'logging_hooks': ['train.py'],
    'reserved_params': ['resnet_like.py'],
    'namespace_params': ['trainer.py'],
    'premade_strings': ['census.py'],
    'columns_in_model_fn': ['regression.py'],
    'in_memory_dtypes': ['iris.py'],
    'distribute_strategy': ['towers.py'],
    'argparse_steps': ['task.py'],
    'predict_branch_export': ['resnet_tpu.py'],
    'serving_scripts': ['main.py', 'export.py', 'interact.py'],
    'run_loop_input': ['cifar_main.py'],
    'iterator_predict': ['blog_estimator.py'],
    'contrib_rnn': ['sketch_rnn.py'],
    'boosted_trees_factory': ['higgs.py'],
    'builder_closures': ['clusters.py'],
    'column_dicts': ['ratings.py'],
    'model_class': ['tagger.py'],
    'contrib_decoder': ['copy_task.py'],
    'contrib_arrays': ['train.py'],
    'contrib_fit': ['linear.py'],
    'params_object': ['train.py'],
}
TF1_ONLY = {'contrib_rnn': 'uses tf.contrib, which TensorFlow 2 does not have',
            'boosted_trees_factory': 'uses tf.contrib.estimator, which TensorFlow 2 does not have',
            'contrib_arrays': 'uses tf.contrib.learn, which TensorFlow 2 does not have',
            'contrib_fit': 'uses tf.contrib.learn, which TensorFlow 2 does not have',
            'contrib_decoder': 'uses tf.contrib.learn and tf.contrib.seq2seq, which TensorFlow 2 does not have',
            'builder_closures': 'iterates a Dataset made outside input_fn, in another graph than Estimator\'s, which '
                                'TensorFlow 2 refuses'}


def run_scripts(folder, scripts):
  """Runs each script as __main__ with `folder` as the current folder and first on sys.path, as Python would."""
  saved_argv, saved_path, saved_cwd, saved_tempdir = sys.argv, list(sys.path), os.getcwd(), tempfile.tempdir
  before = set(sys.modules)
  try:
    tempfile.tempdir = folder  # an Estimator without model_dir makes one with tempfile: keep it in here
    os.chdir(folder)
    sys.path.insert(0, folder)
    for script in scripts:
      sys.argv = [script]
      runpy.run_path(script, run_name='__main__')
  finally:
    sys.argv, sys.path[:], tempfile.tempdir = saved_argv, saved_path, saved_tempdir
    os.chdir(saved_cwd)
    for name in set(sys.modules) - before:  # the fixtures' own modules (main, run_loop ...) must not leak
      if getattr(sys.modules[name], '__file__', '') and folder in (sys.modules[name].__file__ or ''):
        del sys.modules[name]


@pytest.mark.parametrize('fixture', sorted(RUNS))
def test_the_fixture_runs(tmp_path, fixture):
  if fixture in TF1_ONLY and not tf.__version__.startswith('1.'):
    pytest.skip('%s (TensorFlow %s)' % (TF1_ONLY[fixture], tf.__version__))
  folder = str(tmp_path / fixture)
  shutil.copytree(os.path.join(PORT_FIXTURES, fixture), folder)
  run_scripts(folder, RUNS[fixture])  # raises what the program raises


def test_every_fixture_but_the_scan_only_ones_is_run_here():
  scan_only = {'custom_estimator', 'keras_in_model_fn', 'bert_like', 'contrib_tpu'}
  assert sorted(RUNS) == sorted(set(os.listdir(PORT_FIXTURES)) - scan_only)
