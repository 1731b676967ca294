"""`mnist_keras.py --mode=check_tpu`: the Keras route's readiness check on the run its flags describe, without a TPU.

The program hands over its own pieces (a KerasRoute): how it builds and compiles the model under a strategy, its
training and evaluation datasets, its prediction input and its training callbacks. The plan flags are
mnist_tpu.py's (--tpu_type or --num_shards, --batch_size, --iterations as steps_per_execution, ...), with the TPU
defaults whatever --use_tpu says (estimator_tpu/runtime/batch_sizes.py). The check reads the data but never
prepares it, and contacts no TPU except for a bounded pre-flight of the one named.
"""
import collections
import functools
import tempfile

from estimator_tpu.data import records
from estimator_tpu.porting.readiness import keras_checks
from estimator_tpu.porting.readiness import route_check
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.runtime.errors import UserError



@functools.lru_cache(maxsize=None)
def scratch_model_dir():
  """The folder the callbacks' checkpoint manager gets when --model_dir is not given (nothing is written there),
  made the first time it is asked for."""
  return tempfile.mkdtemp(prefix='keras-readiness-')

# build_model(strategy) -> compiled Keras model; train_dataset(global batch) -> Dataset; eval_dataset(split, global
# batch) -> (Dataset, steps); predict_input(count) -> what model.predict gets; callbacks(model) -> fit's callbacks.
KerasRoute = collections.namedtuple('KerasRoute', ['build_model', 'train_dataset', 'eval_dataset', 'predict_input',
                                                   'callbacks'])


def requiring(data_dir, split, make):
  """make(), failing as the run would when the split is missing (one line, not TensorFlow's retries)."""

  def made():
    records.require_split(data_dir, split)
    return make()

  return made


def check_keras_route(fv, route):
  """Checks on this CPU whether the Keras run the flags describe would work under TPUStrategy on the planned slice;
  prints one line per check and returns the exit status."""
  # Checks rule 14 (pod slices).
  fv.use_tpu = True
  batch_sizes.resolve(fv, use_tpu=True)
  storage_checks = route_check.check_storage(fv)
  if not all(check.passed for check in storage_checks):
    return check_results.print_results(storage_checks)  # the other checks read --data_dir: minutes of TF retries
  try:
    shape, source = route_check.planned_slice(fv)
  except UserError as e:
    return check_results.print_results([check_results.failed('topology', e.problem, e.fix)])
  eval_examples = route_check.count_if_present(fv.data_dir, fv.eval_split)
  eval_steps = None
  if eval_examples:
    try:
      eval_dataset, eval_steps = route.eval_dataset(fv.eval_split, fv.eval_batch_size)
    except UserError as e:
      eval_dataset = e
  else:
    eval_dataset = UserError('%s has no %s split.' % (fv.data_dir, fv.eval_split),
                             'prepare the data: python -m tools.prepare_data --data_dir=%s.' % fv.data_dir)
  test_examples = route_check.count_if_present(fv.data_dir, 'test')
  plan = keras_checks.KerasPlan(
      shape, fv.batch_size, steps_per_execution=fv.iterations, slice_source=source,
      eval_batch_size=fv.eval_batch_size, save_checkpoints_steps=fv.save_checkpoints_steps, precision=fv.precision,
      tpu_name=fv.tpu_name, tpu_zone=fv.tpu_zone, gcp_project=fv.gcp_project, master=fv.master,
      model_dir=fv.model_dir, data_dir=fv.data_dir, eval_split=fv.eval_split, eval_examples=eval_examples,
      eval_steps=fv.eval_steps or eval_steps, eval_padded=True)
  checks = keras_checks.check_keras_readiness(
      route.build_model, requiring(fv.data_dir, 'train', lambda: route.train_dataset(fv.batch_size)), plan,
      eval_dataset=_raise(eval_dataset) if isinstance(eval_dataset, UserError) else eval_dataset,
      predict_input=route.predict_input(plan.per_replica_batch_size) if test_examples else None,
      callbacks=route.callbacks)
  return check_results.print_results(storage_checks + checks)


def _raise(error):
  def failing():
    raise error
  return failing
