"""Our input_fns on Cloud TPU slices, as TensorFlow's own TPUEstimator calls them -- without a TPU.

Each test builds TensorFlow's real TPUEstimator and TPU context for a simulated slice (tests/tpu_topology.py,
estimator_tpu/readiness/topology.py): 1 host x 8 cores (v3-8), 4 hosts x 8 cores (v3-32) and 1 host x 4 cores
(v4-8), configured as mnist_tpu.py configures it. TensorFlow's input pipeline then calls our input_fns once per
host (or once, for SLICED input) with the params it gives them, and the tests read back what each call feeds.
"""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

import mnist_tpu
from estimator_tpu import runner
from support import programs
from support.programs import training_job
from support import tpu_topology
from estimator_tpu import model
from estimator_tpu.data import records
from estimator_tpu.porting.readiness import topology
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.tpu import accelerator_types
from estimator_tpu.runtime import batch_sizes
from estimator_tpu.tpu import deployment
from estimator_tpu.tpu import input_fn as tpu_input
from estimator_tpu.tpu import run_config
from support.tpu_topology import EVAL, PREDICT, SLICES, TRAIN

TRAIN_BATCH = 64  # global: 2 per core on 32 cores, 8 on 8, 16 on 4
EVAL_BATCH = 64   # the 110 test examples: 2 steps of 64, 18 rows of padding


def split_images(data_dir, split):
  images, _ = records.read_split(records.split_path(data_dir, split))
  keys = tpu_topology.image_keys(images)
  assert len(set(keys)) == len(keys)  # the synthetic images are distinct: a key identifies an example
  return keys


@pytest.mark.parametrize('tpu_type', SLICES)
def test_tensorflow_counts_the_simulated_slice(tpu_type):
  shape = accelerator_types.parse_tpu_type(tpu_type)
  sim = tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH)
  assert (sim.metadata.num_hosts, sim.metadata.num_of_cores_per_host) == (shape.num_hosts, shape.cores_per_host)
  decision = topology.decide(sim, TRAIN)
  assert decision.on_tpu and decision.num_replicas == shape.num_cores  # num_shards=None: every core
  assert decision.input_fn_batch_size == TRAIN_BATCH // shape.num_cores


@pytest.mark.parametrize('tpu_type', SLICES)
def test_training_input_runs_on_every_host_with_the_per_core_batch(shared_data_dir, tpu_type):
  shape = accelerator_types.parse_tpu_type(tpu_type)
  sim = tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH)
  calls = topology.input_fn_calls(sim, tpu_input.train_input_fn_builder(shared_data_dir), TRAIN)
  assert [call.deployment[1:] for call in calls] == [(host, shape.num_hosts, shape.cores_per_host)
                                                     for host in range(shape.num_hosts)]
  assert {call.batch_size for call in calls} == {TRAIN_BATCH // shape.num_cores}
  assert all('context' in call.keys_read for call in calls)
  hosts = [call.deployment[0] for call in calls]
  assert len(set(hosts)) == shape.num_hosts and all('task:%d' % i in host for i, host in enumerate(hosts))


@pytest.mark.parametrize('tpu_type', SLICES)
def test_training_shards_are_disjoint_and_cover_the_split(shared_data_dir, tpu_type):
  sim = tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH)
  input_fn = tpu_input.train_input_fn_builder(shared_data_dir)
  examples = split_images(shared_data_dir, 'train')
  epochs = []
  for call in topology.input_fn_calls(sim, input_fn, TRAIN):
    _, index, count, _ = call.deployment
    size = deployment.shard_size(len(examples), index, count)
    batches = tpu_topology.read_batches(input_fn, call.params, max_batches=-(-size // call.batch_size))
    first_epoch = [key for features, _ in batches for key in tpu_topology.image_keys(features[model.IMAGE_KEY])]
    epochs.append(first_epoch[:size])
    assert sorted(epochs[-1]) == sorted(examples[index::count])  # this host's shard, read before shuffling
  every = [key for epoch in epochs for key in epoch]
  assert len(every) == len(set(every)) == len(examples)  # disjoint, and together the whole split


def assert_exact(batches, batch_size, examples):
  """Full batches; weight-1 rows are every example exactly once, all other rows weight 0."""
  assert all(len(features[model.WEIGHT_KEY]) == batch_size for features, _ in batches)
  keys, weights = tpu_topology.images_and_weights(batches)
  assert set(weights) <= {0.0, 1.0}
  return [key for key, weight in zip(keys, weights) if weight == 1.0]


@pytest.mark.parametrize('tpu_type', SLICES)
def test_evaluation_on_the_tpu_counts_every_example_once(shared_data_dir, tpu_type):
  examples = split_images(shared_data_dir, 'test')
  sim = tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH)
  steps = tpu_input.eval_steps(shared_data_dir, 'test', EVAL_BATCH)
  input_fn = tpu_input.eval_input_fn_builder(shared_data_dir, 'test', EVAL_BATCH, steps)  # as mnist_tpu.py's
  padding = steps * EVAL_BATCH - len(examples)
  calls = topology.input_fn_calls(sim, input_fn, EVAL)
  # SLICED: one call on host 0 with the global batch, whatever the slice; TensorFlow splits it over the cores.
  assert [(call.deployment[1:3], call.batch_size) for call in calls] == [((0, 1), EVAL_BATCH)]
  batches = tpu_topology.read_batches(input_fn, calls[0].params)
  assert len(batches) == steps == 2 and padding == 18
  real = assert_exact(batches, EVAL_BATCH, examples)
  assert real == examples


def per_host_contexts(sim, batch_size):
  """params as a per-host (PER_HOST_V2) call on each host gets them: the real TPUContexts of training input."""
  calls = topology.input_fn_calls(sim, tpu_input.train_input_fn_builder('/unused'), TRAIN)
  return [dict(call.params, batch_size=batch_size) for call in calls]


def test_per_host_evaluation_counts_every_example_once_where_tensorflow_runs_it(shared_data_dir):
  """4 hosts, each its own shard. TF 2.15 runs per-host evaluation (with a warning); TF 1.15 refuses it, so there
  the same input_fn is fed the per-host contexts of training, which are the same deployments."""
  examples = split_images(shared_data_dir, 'test')
  sim = tpu_topology.simulate('v3-32', TRAIN_BATCH, EVAL_BATCH, evaluates_on_tpu=False)
  steps = deployment.eval_steps(len(examples), EVAL_BATCH, invocations=4)
  input_fn = tpu_input.eval_input_fn_builder(shared_data_dir, 'test', EVAL_BATCH, steps)
  decision = topology.decide(sim, EVAL)
  if decision.error is None:
    assert 'PER_HOST_V2 and num_hosts 4' in ' '.join(decision.warnings)
    params = [call.params for call in topology.input_fn_calls(sim, input_fn, EVAL)]
  else:
    assert 'TPUEstimator.evaluate is only supported under three conditions' in str(decision.error)
    params = per_host_contexts(sim, EVAL_BATCH // 32)
  assert [p['context'].current_input_fn_deployment()[1:] for p in params] == [(h, 4, 8) for h in range(4)]
  real, fed_steps = [], set()
  for host_params in params:
    batches = tpu_topology.read_batches(input_fn, host_params)
    assert len(batches) % 8 == 0  # 8 cores, one batch each per step
    fed_steps.add(len(batches) // 8)
    real += assert_exact(batches, EVAL_BATCH // 32, examples)
  assert fed_steps == {steps}  # every host feeds the same number of full steps
  assert sorted(real) == sorted(examples)


def test_evaluation_steps_that_miss_examples_are_refused():
  with pytest.raises(UserError, match='exact evaluation is impossible: input_fn call 0 of 4 holds 28 examples, '
                                      'but 1 steps of 16'):
    deployment.invocation_padding(110, EVAL_BATCH, 1, 0, 4)


@pytest.mark.parametrize('tpu_type', SLICES)
def test_tensorflow_accepts_the_routes_we_choose_for_evaluation_and_prediction(tpu_type):
  for mode in (EVAL, PREDICT):
    decision = topology.decide(tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH), mode)
    assert decision.error is None and decision.on_tpu
    assert decision.input_fn_batch_size == EVAL_BATCH  # SLICED: the global batch, split by TensorFlow
  cpu = tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH, evaluates_on_tpu=False, eval_on_tpu=False)
  decision = topology.decide(cpu, EVAL)
  assert decision.error is None and not decision.on_tpu and decision.input_fn_batch_size == EVAL_BATCH


def test_evaluation_on_the_cpu_is_one_call_without_a_context(shared_data_dir):
  examples = split_images(shared_data_dir, 'test')
  sim = tpu_topology.simulate('v3-32', TRAIN_BATCH, EVAL_BATCH, evaluates_on_tpu=False, eval_on_tpu=False)
  steps = tpu_input.eval_steps(shared_data_dir, 'test', EVAL_BATCH)
  input_fn = tpu_input.eval_input_fn_builder(shared_data_dir, 'test', EVAL_BATCH, steps)
  calls = topology.input_fn_calls(sim, input_fn, EVAL)
  assert [(call.deployment, call.batch_size) for call in calls] == [(None, EVAL_BATCH)]
  assert assert_exact(tpu_topology.read_batches(input_fn, calls[0].params), EVAL_BATCH, examples) == examples


def test_per_host_evaluation_and_prediction_on_a_pod_would_be_refused():
  """Why build_run_config makes evaluation and prediction input SLICED: per-host input on 4 hosts is refused."""
  sim = tpu_topology.simulate('v3-32', TRAIN_BATCH, EVAL_BATCH, evaluates_on_tpu=False)
  evaluation, prediction = topology.decide(sim, EVAL), topology.decide(sim, PREDICT)
  assert 'TPUEstimator.predict is only supported under three conditions' in str(prediction.error)
  if tf.__version__.startswith('1.'):
    assert 'TPUEstimator.evaluate is only supported under three conditions' in str(evaluation.error)
  else:
    assert evaluation.error is None  # TF 2.15 evaluates per host, each host reading the same data unless sharded
  for tpu_type in ('v3-8', 'v4-8'):  # one host: per-host input is accepted
    single = tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH, evaluates_on_tpu=False)
    assert topology.decide(single, EVAL).error is None and topology.decide(single, PREDICT).error is None


def test_sliced_input_is_refused_where_evaluation_runs_on_the_cpu(shared_data_dir):
  """Why build_run_config makes evaluation input SLICED only when evaluation runs on the TPU."""
  sim = tpu_topology.simulate('v3-8', TRAIN_BATCH, EVAL_BATCH, evaluates_on_tpu=True, eval_on_tpu=False)
  steps = tpu_input.eval_steps(shared_data_dir, 'test', EVAL_BATCH)
  input_fn = tpu_input.eval_input_fn_builder(shared_data_dir, 'test', EVAL_BATCH, steps)
  with pytest.raises(ValueError, match='SLICED mode only works on use_tpu = True'):
    topology.input_fn_calls(sim, input_fn, EVAL)


@pytest.mark.parametrize('tpu_type', SLICES)
def test_prediction_feeds_every_requested_image_once_in_order(shared_data_dir, tpu_type):
  examples = split_images(shared_data_dir, 'test')
  sim = tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH)
  input_fn = tpu_input.predict_input_fn_builder(shared_data_dir, 'test', 100, EVAL_BATCH)
  calls = topology.input_fn_calls(sim, input_fn, PREDICT)
  assert [(call.deployment[1:3], call.batch_size) for call in calls] == [((0, 1), EVAL_BATCH)]
  rows = [key for batch in tpu_topology.read_batches(input_fn, calls[0].params)
          for key in tpu_topology.image_keys(batch[model.IMAGE_KEY])]
  assert rows == examples[:100]  # the short last batch (36) is TensorFlow's to pad


def test_prediction_input_refuses_several_calls(shared_data_dir):
  sim = tpu_topology.simulate('v3-32', TRAIN_BATCH, EVAL_BATCH)
  input_fn = tpu_input.predict_input_fn_builder(shared_data_dir, 'test', 100, EVAL_BATCH)
  with pytest.raises(UserError, match='prediction input would be read by 4 input_fn calls'):
    input_fn(per_host_contexts(sim, 2)[1])


def test_a_sliced_batch_that_does_not_split_over_the_cores_is_a_user_error(shared_data_dir):
  # With SLICED input TensorFlow skips its divisibility check (and would fail later splitting the batch).
  sim = tpu_topology.simulate('v3-32', TRAIN_BATCH, 100)
  assert topology.decide(sim, EVAL).error is None
  steps = tpu_input.eval_steps(shared_data_dir, 'test', 100)
  input_fn = tpu_input.eval_input_fn_builder(shared_data_dir, 'test', 100, steps)
  with pytest.raises(UserError, match='the eval batch 100 does not split evenly over the 32 TPU cores'):
    topology.input_fn_calls(sim, input_fn, EVAL)


@pytest.mark.parametrize('tpu_type', SLICES)
def test_tensorflow_builds_the_whole_tpu_graph_of_every_mode(shared_data_dir, tpu_type):
  shape = accelerator_types.parse_tpu_type(tpu_type)
  sim = tpu_topology.simulate(tpu_type, TRAIN_BATCH, EVAL_BATCH)
  per_core = EVAL_BATCH // shape.num_cores
  _, (train,) = topology.model_graph(sim, tpu_input.train_input_fn_builder(shared_data_dir), TRAIN)
  _, (evaluation,) = topology.model_graph(
      sim, tpu_input.eval_input_fn_builder(shared_data_dir, 'test', EVAL_BATCH, steps=2), EVAL)
  _, (prediction,) = topology.model_graph(
      sim, tpu_input.predict_input_fn_builder(shared_data_dir, 'test', 110, EVAL_BATCH), PREDICT)
  assert train.host_call is None  # no summary_dir given
  metric_shapes = {name: tensor.shape.as_list() for name, tensor in evaluation.eval_metrics[1].items()}
  assert metric_shapes == {'labels': [per_core], 'logits': [per_core, 10], 'weights': [per_core]}
  assert {name: t.shape.as_list() for name, t in prediction.predictions.items()} == {
      'class_ids': [per_core], 'probabilities': [per_core, 10]}


def test_a_tpu_vm_is_one_in_process_host():
  sim = tpu_topology.simulate('v4-8', TRAIN_BATCH, EVAL_BATCH, master='')
  calls = per_host_contexts(sim, 16)
  assert len(calls) == 1
  assert calls[0]['context'].current_input_fn_deployment()[0] == '/replica:0/task:0/device:CPU:0'
  assert np.prod(calls[0]['context'].current_input_fn_deployment()[2:]) == 4


@pytest.mark.parametrize('args, sliced, eval_on_tpu', [
    (['--use_tpu=false', '--master='], False, True),     # TF refuses SLICED where the mode runs on the CPU
    (['--tpu_name=local'], True, True),
    (['--tpu_name=local', '--eval_on_tpu=false'], False, False),
])
def test_mnist_tpu_configures_the_route_it_logs(tmp_path, args, sliced, eval_on_tpu):
  fv = programs.parse(args + ['--model_dir=%s' % tmp_path, '--data_dir=%s' % tmp_path])
  batch_sizes.resolve(fv, fv.use_tpu)
  estimator = mnist_tpu.build_estimator(fv, training_job(str(tmp_path)))
  assert run_config.is_sliced(estimator.config.tpu_config) == sliced
  assert estimator.config.tpu_config.per_host_input_for_training == run_config.input_pipeline_config().PER_HOST_V2
  assert estimator._ctx._eval_on_tpu == eval_on_tpu  # pylint: disable=protected-access
  route = runner.evaluation_route(fv.use_tpu, fv.eval_on_tpu, 1024)
  assert ('SLICED' in route) == sliced
  # Prediction runs on the TPU either way: with --eval_on_tpu=false, predict() builds this estimator.
  predictor = mnist_tpu.build_estimator(fv, training_job(str(tmp_path))._replace(phase=runner.PREDICT))
  assert run_config.is_sliced(predictor.config.tpu_config) == fv.use_tpu


# (type, TPU VMs = TensorFlow's hosts, TPU devices per host, PJRT only) from the Cloud TPU docs of each generation
# (estimator_tpu/tpu/accelerator_types.py cites them).
GENERATIONS = [
    ('v2-8', 1, 8, False), ('v2-32', 4, 8, False), ('v3-8', 1, 8, False), ('v3-32', 4, 8, False),
    ('v3-128', 16, 8, False), ('v4-8', 1, 4, False), ('v4-16', 2, 4, False), ('v4-32', 4, 4, False),
    ('v4-128', 16, 4, False), ('v5litepod-1', 1, 1, True), ('v5litepod-4', 1, 4, True),
    ('v5litepod-8', 1, 8, True), ('v5litepod-16', 4, 4, True), ('v5litepod-256', 64, 4, True),
    ('v5p-8', 1, 4, True), ('v5p-16', 2, 4, True), ('v5p-128', 16, 4, True),
    ('v6e-1', 1, 1, True), ('v6e-8', 1, 8, True), ('v6e-16', 4, 4, True), ('v6e-256', 64, 4, True)]


@pytest.mark.parametrize('tpu_type, hosts, cores_per_host, pjrt_only', GENERATIONS)
def test_accelerator_types_as_tensorflow_sees_them(tpu_type, hosts, cores_per_host, pjrt_only):
  shape = accelerator_types.parse_tpu_type(tpu_type)
  assert (shape.num_hosts, shape.cores_per_host, shape.pjrt_only) == (hosts, cores_per_host, pjrt_only)
  # TensorFlow's own metadata parser counts the devices such a slice would list the same way.
  metadata = topology.simulated_metadata(shape, topology.SIMULATED_NODE_MASTER)
  assert (metadata.num_hosts, metadata.num_of_cores_per_host) == (hosts, cores_per_host)


@pytest.mark.parametrize('tpu_type, fix', [
    ('v5e-8', 'v5litepod-8'), ('v3-12', 'v3-32'), ('v4-7', 'v4-8'), ('v6e-2', 'v6e-1'), ('v5p-12', 'v5p-8'),
    ('v7-8', 'v2-8'), ('tpu', 'v2-8'), ('', 'v2-8')])
def test_unknown_accelerator_types(tpu_type, fix):
  with pytest.raises(UserError) as raised:
    accelerator_types.parse_tpu_type(tpu_type)
  assert fix in raised.value.fix


@pytest.mark.parametrize('tpu_type, version', [
    ('v3-8', 'tpu-vm-tf-2.15.1-se'), ('v4-32', 'tpu-vm-tf-2.15.1-pod-se'), ('v5litepod-8', 'tpu-vm-tf-2.15.1-pjrt'),
    ('v6e-16', 'tpu-vm-tf-2.15.1-pod-pjrt')])
def test_the_software_version_to_create_each_slice_with(tpu_type, version):
  shape = accelerator_types.parse_tpu_type(tpu_type)
  assert shape.generation.software_version(multi_host=shape.num_hosts > 1) == version
