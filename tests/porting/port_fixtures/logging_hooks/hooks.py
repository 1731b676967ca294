"""Fixture for the port report (logging_hooks): hook makers chosen by name, as the official models' hooks_helper;
see train.py."""
import tensorflow.compat.v1 as tf

TENSORS_TO_LOG = {'learning_rate': 'learning_rate', 'cross_entropy': 'cross_entropy'}


def logging_hooks(tensors_to_log=None, every_n_iter=2):
  return [tf.train.LoggingTensorHook(tensors=tensors_to_log or TENSORS_TO_LOG, every_n_iter=every_n_iter)]


HOOKS = {'loggingtensorhook': logging_hooks}


def get_train_hooks(names, **kwargs):
  return [hook for name in names for hook in HOOKS[name.lower()](**kwargs)]
