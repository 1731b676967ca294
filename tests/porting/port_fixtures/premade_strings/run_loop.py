"""Fixture for the port report (premade_strings): the shared run loop; see census.py."""
import tensorflow.compat.v1 as tf


def logging_hooks(tensors_to_log, every_n_iter=2):
  return [tf.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=every_n_iter)]


def run_loop(train_input_fn, eval_input_fn, model_column_fn, build_estimator_fn, model_dir, model_type,
             tensors_to_log):
  model = build_estimator_fn(model_dir=model_dir, model_type=model_type, model_column_fn=model_column_fn)
  prefix = 'linear/' if model_type == 'wide' else ''
  train_hooks = logging_hooks(tensors_to_log={k: prefix + v for k, v in tensors_to_log.items()})
  for _ in range(2):
    model.train(input_fn=train_input_fn, hooks=train_hooks)
    print(model.evaluate(input_fn=eval_input_fn))
