"""Entry points of the serving_scripts fixture (main.py) for the port proofs: its training input as main.py gives
it, and an evaluation input that reads the same 32 examples once (main.py itself never evaluates).

`import main` finds the original or the ported copy: whichever folder the proof runs in.
"""
import inspect

import main

EXAMPLES = 32  # main.input_fn's data, repeated


def _input(params):
  """main.input_fn as its estimator calls it: the original takes nothing, the port takes params."""
  takes_params = 'params' in inspect.signature(main.input_fn).parameters
  return main.input_fn(params=params) if takes_params else main.input_fn()


def train_input_fn(params=None):
  return _input(params)


def eval_input_fn(params=None):
  """The examples once: the original batches by 8 (4 batches), the port by params['batch_size']."""
  batch = (params or {}).get('batch_size', 8)
  return _input(params).take(-(-EXAMPLES // batch))
