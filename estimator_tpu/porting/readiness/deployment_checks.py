"""The per-host plan, asked of TensorFlow's own TPUEstimator on the planned slice (readiness/topology.py).

For each mode: does TensorFlow accept it on this slice (its own validation), where does it run, how many input_fn
calls does it make and with which params['batch_size'], and does it build the whole TPU graph around model_fn. The
answers become the plan lines of the check (topology, train_input, evaluate, predict) and feed the others: the
params TensorFlow gives host 0's training input_fn, the number of evaluation input calls, and model_fn's specs.
"""
import collections

import tensorflow.compat.v1 as tf

from estimator_tpu.porting.readiness import input_checks
from estimator_tpu.porting.readiness import outfeed_checks
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import topology
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import deployment as tpu_deployment
from estimator_tpu.tpu import run_config

TF_NAME = 'TensorFlow %s' % tf.__version__
MODE_NAMES = {topology.TRAIN: 'training', topology.EVAL: 'evaluation', topology.PREDICT: 'prediction'}
SLICED_FIX = ('evaluate and predict with TPUConfig(eval_training_input_configuration=SLICED) (input_fn once on host '
              '0, TensorFlow splits each batch over the cores; what tpu/run_config.py:build_run_config does), or '
              'evaluate on the CPU with TPUEstimator(eval_on_tpu=False).')


class ModeReport(collections.namedtuple('ModeReport', ['result', 'calls', 'specs', 'decision', 'graph_error'])):
  """What one mode came to: its plan line, input_fn's calls, model_fn's specs (empty when it did not build), and
  what TensorFlow raised building the rest of the graph around them (or None)."""

  def __new__(cls, result, calls, specs, decision, graph_error=None):
    return super(ModeReport, cls).__new__(cls, result, calls, specs, decision, graph_error)


class Deployment(collections.namedtuple('Deployment', ['shape', 'sim', 'results', 'train', 'evaluate',
                                                       'predict'])):
  """The plan lines, and per mode a ModeReport (None when the slice could not be simulated)."""

  @property
  def train_params(self):
    """The params TensorFlow gave host 0's training input_fn, or None."""
    return self.train.calls[0].params if self.train and self.train.calls else None


def plan_deployment(plan, model_fn, train_input_fn, eval_input_fn=None, predict_input_fn=None,
                    modes=(topology.TRAIN, topology.EVAL, topology.PREDICT)):
  """Simulates the plan's slice with the program's RunConfig and asks TensorFlow about every mode in `modes`
  (the others' reports are None)."""
  # Checks rule 14 (pod slices).
  shape = plan.shape
  try:
    sim = topology.simulate(plan.run_config(), shape, model_fn, plan.train_batch_size,
                            plan.eval_batch_size, plan.predict_batch_size, plan.eval_on_tpu, plan.params)
  except (UserError, ValueError) as e:
    problem, fix = (e.problem, e.fix) if isinstance(e, UserError) else (str(e), 'correct the TPU configuration.')
    failure = check_results.failed('topology', problem, fix)
    return Deployment(None, None, [failure], None, None, None)
  train = report_training(plan, sim, train_input_fn) if topology.TRAIN in modes else None
  evaluation = report_inference(plan, sim, eval_input_fn, topology.EVAL) if topology.EVAL in modes else None
  if topology.PREDICT not in modes:
    return Deployment(shape, sim, [check_topology(plan, sim, shape)], train, evaluation, None)
  if not plan.eval_on_tpu:
    # Prediction runs on the TPU even so, from an estimator whose input is SLICED (mnist_tpu.py).
    sim = topology.simulate(plan.run_config(evaluates_on_tpu=True), shape, model_fn, plan.train_batch_size,
                            plan.eval_batch_size, plan.predict_batch_size, True, plan.params)
  prediction = report_inference(plan, sim, predict_input_fn, topology.PREDICT)
  return Deployment(shape, sim, [check_topology(plan, sim, shape)], train, evaluation, prediction)


def check_topology(plan, sim, shape):
  # Checks rule 14 (pod slices).
  md = sim.metadata
  source = ' (%s)' % plan.slice_source if plan.slice_source else ''
  if plan.on_tpu_vm and shape.num_hosts > 1:
    return check_results.failed(
        'topology', "%s: %s, but on a TPU VM TPUClusterResolver('local') gives the in-process master '', which "
        'sees only the TPU chips of this VM: one host.' % (shape.name, shape.describe()),
        'run TPUEstimator on a single-host TPU VM (v2-8, v3-8, v4-8), or on a pod slice of TPU Nodes named by '
        '--tpu_name (TensorFlow 1.15 or 2.15).')
  name = '' if shape.name.endswith(' cores') else shape.name + ': '
  return check_results.passed('topology', '%s%s%s; %s counts %d host%s of %d cores in it (its own metadata parser on '
                                    'the devices that TPU would list).'
                        % (name, shape.describe(), source, TF_NAME, md.num_hosts,
                           '' if md.num_hosts == 1 else 's', md.num_of_cores_per_host))


def tf_rejection(name, mode_name, error):
  return check_results.failed(name, '%s refuses %s on this slice: %s' % (TF_NAME, mode_name,
                                                                        check_results.error_line(error)),
                        SLICED_FIX if 'three conditions' in str(error) else
                        'make the batch sizes and num_shards fit the slice (see batch_split).')




def build_graph(sim, input_fn, mode):
  """(calls, specs, error) of TensorFlow building `mode`'s whole graph; error is (problem, fix) or None."""
  calls = []
  try:
    calls, specs = topology.model_graph(sim, input_fn, mode, calls)
  except UserError as e:
    return calls, list(sim.specs), (e.problem, e.fix)
  except Exception as e:  # pylint: disable=broad-except -- user code under TF: report it as a check
    return calls, list(sim.specs), ('TPUEstimator could not build the %s graph: %s: %s' % (
        MODE_NAMES[mode], type(e).__name__, check_results.error_line(e)), None)
  return calls, specs, None


def _with_shape_cause(error, input_fn, calls, mode):
  """(problem, fix) of TensorFlow's error building a mode's graph, with its cause where the input is not of static
  shape (TensorFlow's own error then is a TypeError about None). In prediction TensorFlow pads a short batch
  itself: a dynamic batch dimension is no cause there."""
  problem, fix = error
  dynamic = input_checks.dynamic_components(input_fn, calls[0].params) if (
      calls and not fix and mode != topology.PREDICT) else []
  if dynamic:
    problem, fix = ('%s; the input is not of static shape: %s (see input_shapes).' % (
        problem.rstrip('.'), ', '.join(dynamic)), input_checks.STATIC_FIX)
  return problem, fix


def report_training(plan, sim, input_fn):
  # Checks rule 3 (params).
  decision = topology.decide(sim, topology.TRAIN)
  if decision.error is not None:
    return ModeReport(tf_rejection('train_input', 'training', decision.error), [], [], decision)
  calls, specs, error = build_graph(sim, input_fn, topology.TRAIN)
  if not calls:  # input_fn raised: input_checks reports it
    reason = error[0] if error else 'input_fn was not called.'
    return ModeReport(check_results.skipped('train_input', 'input_fn failed under TPUEstimator (see input_fn): %s'
                                      % reason), calls, specs, decision)
  return ModeReport(check_train_input(plan, sim, calls), calls, specs, decision,
                    error and _with_shape_cause(error, input_fn, calls, topology.TRAIN)[0])


def with_graph_error(result, graph_error):
  """train_input failed by what TensorFlow raised building the training graph after calling input_fn."""
  # Checks rule 3 (params).
  return check_results.failed('train_input', '%s; but %s' % (result.message.rstrip('.'), graph_error),
                        'make model_fn build the TPU training graph TPUEstimator expects.')


def check_train_input(plan, sim, calls):
  """Per host: params['batch_size'], examples per step, and whether input_fn read its deployment to shard."""
  # Checks rule 3 (params).
  md = sim.metadata
  batch = calls[0].batch_size
  where = ('on each of the %d hosts' % len(calls)) if len(calls) > 1 else 'on the one host'
  if plan.tpu_config.per_host_input_for_training in (True, tf.estimator.tpu.InputPipelineConfig.PER_HOST_V1):
    summary = ("input_fn runs once %s (PER_HOST_V1, TPUConfig's default) with params['batch_size'] = %d per host, "
               'which TensorFlow splits over its %d cores (global %d)' % (where, batch, md.num_of_cores_per_host,
                                                                         plan.train_batch_size))
  else:
    summary = ("input_fn runs once %s (PER_HOST_V2) with params['batch_size'] = %d per core; each host feeds its "
               '%d cores %d examples per step (global %d)' % (where, batch, md.num_of_cores_per_host,
                                                             batch * md.num_of_cores_per_host, plan.train_batch_size))
  if len(calls) > 1 and not any('context' in call.keys_read for call in calls):
    return check_results.failed(
        'train_input', "%s, but input_fn never reads params['context'], so every host would read the same "
        'examples: TensorFlow does not shard the input between hosts (tpu_estimator.py, PER_HOST_V2).' % summary,
        "shard by params['context'].current_input_fn_deployment(): (host device, index, count, replicas); "
        "dataset.shard(count, index) before shuffling (what tpu/input_fn.py does with tpu/deployment.py).")
  if plan.train_examples is None:
    return check_results.passed('train_input', summary + '.')
  if len(calls) == 1:
    return check_results.passed('train_input', '%s, from all %d training examples.' % (summary, plan.train_examples))
  sizes = [tpu_deployment.shard_size(plan.train_examples, call.deployment[1], call.deployment[2]) for call in calls]
  return check_results.passed('train_input', '%s, host h reading shard h of %d: %s of %d training examples.'
                        % (summary, len(calls), ', '.join(str(size) for size in sizes), plan.train_examples))


# mode -> (the check's name, the plan's batch size attribute, how a message names that batch size)
INFERENCE_MODES = {topology.EVAL: ('evaluate', 'eval_batch_size', 'eval'),
                   topology.PREDICT: ('predict', 'predict_batch_size', 'predict')}


def report_inference(plan, sim, input_fn, mode):
  """The evaluate() or predict() report: skipped without a batch size, TensorFlow's refusal, or the route's."""
  name, batch_size_attribute, batch_name = INFERENCE_MODES[mode]
  decision = topology.decide(sim, mode)
  if getattr(plan, batch_size_attribute) is None:
    return ModeReport(check_results.skipped(name, 'no %s batch size given.' % batch_name), [], [], decision)
  if decision.error is not None:
    return ModeReport(tf_rejection(name, '%s()' % name, decision.error), [], [], decision)
  return report_mode(plan, sim, input_fn, mode, name, decision)


def report_mode(plan, sim, input_fn, mode, name, decision):
  where = describe_route(decision, name, sliced(sim))
  per_host = per_host_verdict(plan, sim, name) if decision.on_tpu and decision.num_hosts > 1 else ''
  if input_fn is None:
    return ModeReport(check_results.passed(name, '%s%s; no input_fn given, so its calls are not checked.'
                                     % (where, per_host)), [], [], decision)
  calls, specs, error = build_graph(sim, input_fn, mode)
  if error is not None:
    problem, fix = _with_shape_cause(error, input_fn, calls, mode)
    if specs and not fix:
      problem, fix = explain_outfeed(problem, specs[0], mode, decision.model_fn_batch_size)
    return ModeReport(check_results.failed(name, '%s. %s' % (where, problem),
                                     fix or 'make model_fn and input_fn build for %s on the TPU.' % name),
                      calls, specs, decision)
  return ModeReport(check_results.passed(name, '%s: %s%s.' % (where, describe_calls(calls, sliced(sim)), per_host)),
                    calls, specs, decision)


def explain_outfeed(problem, spec, mode, per_core_batch):
  """TensorFlow's error, and the tensors to blame when some of those leaving the TPU are not batch-major."""
  tensors = outfeed_checks.outfed_tensors(spec, mode)
  refused = outfeed_checks.check_outfed_values('evaluate', tensors, 'eval_metrics', 'eval_metrics')
  if mode == topology.EVAL and refused is not None:
    return '%s; %s' % (problem.rstrip('.'), refused.message), refused.fix
  wrong = outfeed_checks.not_batch_major(tensors, per_core_batch)
  if not wrong:
    return problem, None
  return ('%s; the tensors that leave the TPU are %s, and %s not batch-major (%d per core).'
          % (problem.rstrip('.'), outfeed_checks.describe(tensors), ', '.join(wrong), per_core_batch),
          'return per-example tensors of shape [batch, ...]; TensorFlow concatenates them over the cores.')


def sliced(sim):
  return run_config.is_sliced(sim.estimator.config.tpu_config)


def describe_route(decision, name, is_sliced):
  """Where TensorFlow runs the mode and how many examples each core takes per step."""
  if not decision.on_tpu:
    return ('%s runs on the CPU (eval_on_tpu=False), in a session on the evaluation master, i.e. on the TPU host'
            % name)
  return '%s runs on the TPU, %d cores x %d examples per step%s' % (
      name, decision.num_replicas, decision.model_fn_batch_size, ', SLICED input' if is_sliced else '')


def per_host_verdict(plan, sim, name):
  """What TensorFlow says to per-host (PER_HOST_V2) input for this mode on this slice: the reason for SLICED."""
  per_host = topology.simulate(plan.run_config(evaluates_on_tpu=False), sim.shape,
                               lambda features, labels, mode: None, plan.train_batch_size, plan.eval_batch_size,
                               plan.predict_batch_size)
  decision = topology.decide(per_host, topology.EVAL if name == 'evaluate' else topology.PREDICT)
  if decision.error is not None:
    return '. Per-host input would be refused on %d hosts: %s says "%s"' % (
        sim.metadata.num_hosts, TF_NAME, shorten(check_results.error_line(decision.error)))
  return '. %s would take per-host input on %d hosts too (with a warning), each host reading its own shard' % (
      TF_NAME, sim.metadata.num_hosts)


def shorten(text, limit=80):
  return text if len(text) <= limit else text[:limit - 3].rstrip() + '...'


def describe_calls(calls, is_sliced):
  if not calls:
    return 'input_fn was not called'
  if calls[0].deployment is None:
    return "input_fn runs once, params['batch_size'] = %d (the global batch), no params['context']" % (
        calls[0].batch_size)
  hosts = ', '.join(call.deployment[0].split('/device:')[0] for call in calls)
  if is_sliced:
    return ("input_fn runs once, on %s, params['batch_size'] = %d, and TensorFlow splits each batch over the cores"
            % (hosts, calls[0].batch_size))
  return "input_fn runs %d times, on %s, params['batch_size'] = %d" % (len(calls), hosts, calls[0].batch_size)
