"""`mnist_tpu.py --mode=check_tpu`: the readiness check on the run the program's flags describe, without a TPU.

The program is checked as it is: its own build_estimator gives the TPUEstimator (the plan comes from it), and its
own train, evaluate and predict are called with a stand-in for that estimator, which keeps the input_fns and steps
they would pass instead of running them. The check reads the data but never prepares it, and contacts no TPU
except for a bounded pre-flight.
"""

from estimator_tpu import routes
from estimator_tpu.data import records
from estimator_tpu.porting import readiness
from estimator_tpu.porting.readiness import questions
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import topology
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.runtime import storage
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import accelerator_types


class RecordedCalls(object):
  """Stands in for the program's estimator in its train, evaluate and predict: records what they pass (the
  input_fn and the keyword arguments, steps among them) instead of running anything."""

  def __init__(self):
    self.calls = {}

  def input_fn(self, phase):
    return self.calls[phase][0] if phase in self.calls else None

  def train(self, input_fn, **kwargs):
    self.calls[routes.TRAIN] = (input_fn, kwargs)

  def evaluate(self, input_fn, **kwargs):
    self.calls[routes.EVALUATE] = (input_fn, kwargs)
    return {}

  def predict(self, input_fn, **kwargs):
    self.calls[routes.PREDICT] = (input_fn, kwargs)
    return iter(())

  @property
  def eval_steps(self):
    return self.calls[routes.EVALUATE][1].get('steps') if routes.EVALUATE in self.calls else None


def planned_slice(fv):
  """(SliceShape, where it comes from): --tpu_type, else --num_shards cores, else a v2/v3-8."""
  if fv.tpu_type:
    return accelerator_types.parse_tpu_type(fv.tpu_type), '--tpu_type=%s' % fv.tpu_type
  if fv.num_shards:
    return (accelerator_types.shape_from_cores(fv.num_shards),
            '--num_shards=%d, 8 cores per host as on v2/v3 slices; --tpu_type names any other' % fv.num_shards)
  return (accelerator_types.shape_from_cores(accelerator_types.DEFAULT_CORES_PER_HOST),
          'no --num_shards or --tpu_type: a v2-8/v3-8 assumed; the run itself uses every core it finds')


def count_if_present(data_dir, split):
  path = records.split_path(data_dir, split)
  return records.count_examples(path) if records.split_exists(path) else None


def check_storage(fv):
  """The lines about the run's gs:// paths (none without any): storage answers, the buckets exist, access is
  allowed."""
  # Checks rule 17 (Cloud Storage).
  try:
    paths = storage.check_flag_paths(fv)
  except UserError as e:
    return [check_results.failed('storage_access', e.problem, e.fix)]
  return [check_results.passed('storage_access', 'Cloud Storage answers for %s; every bucket exists and may be used.'
                         % ', '.join('--%s=%s' % pair for pair in paths))] if paths else []


def record_calls(fv, route, eval_examples):
  """The program's train, and its evaluate and predict when their splits have examples, recorded."""
  calls = RecordedCalls()
  route.train(fv, calls, fv.train_steps, [])
  if eval_examples:
    try:
      route.evaluate(fv, calls, None, [])
    except UserError:
      pass  # e.g. --eval_steps beyond the split: eval_coverage says so, from the plan
  if count_if_present(fv.data_dir, routes.PREDICT_SPLIT):
    route.predict(fv, calls, None, -1)
  return calls


def requiring_data(fv, input_fn):
  """The training input_fn, failing as the run would when the train split is missing (the input_fn line)."""

  def input_fn_with_data(params):
    records.require_split(fv.data_dir, 'train')
    return input_fn(params)

  return input_fn_with_data


def check_route(fv, route):
  """Checks on this CPU whether the run the flags describe would work on a TPU; prints it, returns the exit
  status. The TPU defaults apply whatever --use_tpu says: it plans the TPU run."""
  # Checks rule 14 (pod slices).
  fv.use_tpu = True
  batch_sizes.resolve(fv, use_tpu=True)
  storage_checks = check_storage(fv)
  if not all(check.passed for check in storage_checks):
    return readiness.print_results(storage_checks)  # the other checks read --data_dir: minutes of TF retries
  try:
    shape, source = planned_slice(fv)
  except UserError as e:
    return readiness.print_results([check_results.failed('topology', e.problem, e.fix)])
  runtime = [questions.tpu_runtime(shape, questions.ESTIMATOR)] if shape.generation else []
  if not all(check.passed for check in runtime):
    return readiness.print_results(storage_checks + runtime)  # TPUEstimator does not run there: nothing to plan
  # The estimator of the run, with a scratch model_dir when none is given: it is never written.
  model_dir = fv.model_dir or topology.scratch_model_dir()
  job = routes.Job(model_dir, None, None, None, routes.TRAIN)
  train_examples = count_if_present(fv.data_dir, 'train')
  eval_examples = count_if_present(fv.data_dir, fv.eval_split)
  calls = record_calls(fv, route, eval_examples)
  plan = readiness.TpuPlan(
      route.build_estimator(fv, job), shape, slice_source=source, tpu_name=fv.tpu_name, tpu_zone=fv.tpu_zone,
      gcp_project=fv.gcp_project, model_dir=fv.model_dir, data_dir=fv.data_dir, train_examples=train_examples,
      eval_split=fv.eval_split, eval_examples=eval_examples, eval_steps=calls.eval_steps or fv.eval_steps,
      eval_padded=True, requested_checkpoint_steps=fv.save_checkpoints_steps, precision=fv.precision)
  checks = readiness.check_tpu_readiness(
      route.build_model_fn(fv, model_dir), requiring_data(fv, calls.input_fn(routes.TRAIN)), plan,
      eval_input_fn=calls.input_fn(routes.EVALUATE), predict_input_fn=calls.input_fn(routes.PREDICT))
  return readiness.print_results(storage_checks + runtime + checks)
