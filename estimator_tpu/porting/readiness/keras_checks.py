"""TPU readiness of a Keras model under TPUStrategy, without a TPU: the Keras route's check (TF 2.x only).

`mnist_keras.py --mode=check_tpu` runs it on the program's own model, datasets and callbacks; as a library:

  from estimator_tpu.porting.readiness import keras_checks
  plan = keras_checks.KerasPlan(accelerator_types.parse_tpu_type('v5litepod-8'), batch_size=1024,
                                eval_batch_size=1024, steps_per_execution=50)
  checks = keras_checks.check_keras_readiness(build_model, train_dataset, plan, eval_dataset=eval_dataset,
                                              predict_input=images, callbacks=callbacks)

`build_model(strategy)` builds and compiles the model (inside strategy.scope(), as a TPU program must); the datasets
are at the global batch, as `model.fit` gets them under TPUStrategy (which splits each batch over the replicas);
`callbacks(model)` returns the callbacks `fit` would get (the checkpoint and TensorBoard cadence are read from them).

No TPUStrategy can be built without a TPU. The model is built under a real non-default strategy instead, a
MirroredStrategy of this CPU (one replica), which creates and tracks variables as TPUStrategy does; one replica's
training, evaluation and prediction steps are then compiled with XLA on the CPU (Keras' jit_compile) at the
per-replica batch and run once. What the plan says about the slice (replicas, batch split, cadence, runtime) is
arithmetic and the Cloud TPU documentation (estimator_tpu/tpu/accelerator_types.py). Shared questions are answered
by readiness/questions.py in the same words as the TPUEstimator check; every line cites its rule.
"""
import math
import re
import tempfile

import numpy as np
import tensorflow as tf

from estimator_tpu.keras import checkpoints as keras_checkpoints
from estimator_tpu.porting.readiness import config_checks
from estimator_tpu.porting.readiness import input_checks
from estimator_tpu.porting.readiness import plan as plan_lib
from estimator_tpu.porting.readiness import questions
from estimator_tpu.porting.readiness import check_results
from estimator_tpu.porting.readiness import xla
from estimator_tpu.runtime import preflight
from estimator_tpu.runtime.errors import UserError
from estimator_tpu.runtime.errors import essence

KERAS_STEP = "one replica's %s step"
BUILD_FIX = ('build and compile the model in build_model(strategy) under strategy.scope(), from Keras layers, with '
             'an optimizer, a loss and metrics.')
STATIC_FIX = ('batch the tf.data input with dataset.batch(global_batch, drop_remainder=True) and give every other '
              'dimension a fixed size (tf.reshape or set_shape in the map function).')
DYNAMIC_PADDER = (' With a dynamic dimension TPUStrategy pads every step to a bound (its dynamic padder, '
                  'tf.distribute.RunOptions.experimental_enable_dynamic_batch_size) and XLA compiles again for new '
                  'shapes (RunOptions.experimental_bucketizing_dynamic_shape exists "to reduce XLA recompilation"); '
                  'a short last training batch also weighs its few examples as much as a full batch.')


class KerasPlan(plan_lib.PlannedRun):
  """The Keras + TPUStrategy run being checked: the global batch sizes, `steps_per_execution` (TPUEstimator's
  iterations_per_loop), the checkpoint cadence the flags asked for and the TPU's `master` (grpc://HOST:PORT, if
  named so); the slice, the TPU, the paths, the evaluation split and `precision` are PlannedRun's."""

  def __init__(self, shape, batch_size, steps_per_execution=1, eval_batch_size=None, predict_batch_size=None,
               save_checkpoints_steps=None, master=None, precision='float32', **planned):
    super(KerasPlan, self).__init__(shape, precision=precision, **planned)
    self.batch_size = batch_size
    self.eval_batch_size = eval_batch_size
    self.predict_batch_size = predict_batch_size or eval_batch_size
    self.steps_per_execution = steps_per_execution
    self.save_checkpoints_steps = save_checkpoints_steps
    self.master = master or None

  @property
  def num_shards(self):
    """TPUStrategy's num_replicas_in_sync on the slice: one replica per TPU core (config_checks' name)."""
    return self.shape.num_cores

  @property
  def per_replica_batch_size(self):
    return max(1, self.batch_size // self.num_shards)


def check_keras_readiness(build_model, train_dataset, plan, eval_dataset=None, predict_input=None, callbacks=None,
                          probe_timeout_secs=preflight.DEFAULT_TIMEOUT_SECS):
  """Runs every check of the Keras route; returns [CheckResult]: the slice, the datasets, the model, its compiled
  steps, the cadence of checkpoints and summaries, evaluation coverage, then storage and the TPU itself."""
  checks = [questions.tpu_runtime(plan.shape, questions.KERAS)] if plan.shape.generation else []
  checks.append(check_topology(plan))
  batches = [('train', plan.batch_size), ('eval', plan.eval_batch_size), ('predict', plan.predict_batch_size)]
  datasets = [('train', train_dataset, plan.batch_size), ('eval', eval_dataset, plan.eval_batch_size)]
  dataset_checks, first_batches = check_datasets([entry for entry in datasets if entry[1] is not None])
  checks += dataset_checks
  checks.append(questions.batch_split([(kind, size) for kind, size in batches if size], plan.num_shards,
                                      'replicas', 'num_replicas_in_sync'))
  checks += check_model(build_model, plan, first_batches, predict_input, callbacks)
  checks.append(config_checks.check_eval_coverage(plan))
  checks.append(config_checks.check_cloud_storage(plan))
  checks.append(config_checks.check_tpu_reachable(plan, probe_timeout_secs))
  return checks


def check_topology(plan):
  # Checks rule 14 (pod slices).
  shape = plan.shape
  source = ' (%s)' % plan.slice_source if plan.slice_source else ''
  name = '' if shape.name.endswith(' cores') else shape.name + ': '
  if plan.on_tpu_vm and shape.num_hosts > 1:
    return check_results.failed(
        'topology', "%s%s, but on a TPU VM TPUClusterResolver('local') sees only the TPU chips of this VM: one "
        'host.' % (name, shape.describe()),
        'name the slice with --tpu_name=NAME (TPUClusterResolver looks its hosts up), or plan a single-host slice.')
  return check_results.passed('topology', '%s%s%s: TPUStrategy would run %s (num_replicas_in_sync), fed by this one '
                                    'program; checked here on one replica of a MirroredStrategy of this CPU.'
                        % (name, shape.describe(), source, check_results.plural(plan.num_shards, 'replica')))


def check_datasets(datasets):
  """dataset_shapes, dataset_dtypes and dataset_batch over the (kind, dataset, global batch) given, and the first
  batch of each as numpy ({kind: batch}; a dataset that cannot be read is a failure)."""
  # Checks rule 3 (params), rule 4 (static shapes), rule 15 (TPU dtypes).
  components, wrong_batch, errors, first = [], [], [], {}
  for kind, dataset, batch_size in datasets:
    try:
      dataset = dataset() if callable(dataset) else dataset
    except UserError as e:
      errors.append('the %s dataset: %s' % (kind, e.problem))
      continue
    spec = dataset.element_spec
    parts = input_checks.named_components(tf.nest.map_structure(lambda s: s.shape, spec),
                                          tf.nest.map_structure(lambda s: s.dtype, spec))
    components += [('%s %s' % (kind, part), shape, dtype) for part, shape, dtype in parts]
    wrong_batch += ['%s %s has batch dimension %d' % (kind, part, shape[0]) for part, shape, _ in parts
                    if shape.ndims and shape[0] is not None and shape[0] != batch_size]
    try:
      first[kind] = tf.nest.map_structure(lambda t: t.numpy(), next(iter(dataset.take(1))))
    except (tf.errors.OpError, StopIteration, ValueError) as e:
      errors.append('reading the first %s batch failed: %s' % (kind, essence(e)))
  if errors:
    failure = check_results.failed('dataset_batch', '; '.join(errors) + '.',
                             'make the datasets read without errors (prepared data: python -m tools.prepare_data).')
    return [failure], first
  shapes = questions.static_shapes('dataset_shapes', components, STATIC_FIX)
  if not shapes.passed:
    shapes = shapes._replace(message=shapes.message + DYNAMIC_PADDER)
  checks = [shapes, questions.infeed_dtypes('dataset_dtypes', components, where='the tf.data input')]
  if wrong_batch:
    checks.append(check_results.failed(
        'dataset_batch', '%s, but the global batch is %s.' % (', '.join(wrong_batch), ', '.join(
            '%s %d' % (kind, size) for kind, _, size in datasets)),
        'batch the Keras datasets with the global batch: TPUStrategy splits each batch over the replicas itself.'))
  else:
    checks.append(check_results.passed('dataset_batch',
                                       'batches of the global batch (%s); TPUStrategy splits each over '
                                                  'the replicas itself.' % ', '.join(
                                                      '%s %d' % (kind, size) for kind, _, size in datasets)))
  return checks, first


def per_replica(batch, rows):
  """The first `rows` rows of every array of a (nested) numpy batch."""
  return tf.nest.map_structure(lambda value: value[:rows], batch)


def check_model(build_model, plan, first_batches, predict_input, callbacks):
  """keras_layers, strategy_scope, the compiled steps, step_dtypes, precision, the cadences and the checkpoint."""
  # Checks rule 10 (Keras layers), rule 11 (strategy scope).
  strategy = tf.distribute.MirroredStrategy(['/cpu:0'])
  model, created, error = build_recording(build_model, strategy)
  names = ('keras_layers', 'strategy_scope', 'keras_train_step', 'step_dtypes', 'keras_eval_step',
           'keras_predict_step', 'precision', 'checkpoint_cadence', 'summary_cadence', 'keras_checkpoint')
  if model is None:
    return [error] + [check_results.skipped(name, 'the model did not build.') for name in names[1:]]
  checks = [check_tracked(model, created)]
  train = first_batches.get('train')
  rows = plan.per_replica_batch_size
  if train is None:
    step_checks = [check_results.skipped(name, 'needs one training batch.') for name in names[1:7]]
  else:
    step_checks = check_steps(model, strategy, plan, per_replica(train, rows), first_batches.get('eval'),
                              predict_input)
  checks += step_checks
  checks += check_cadence(model, plan, callbacks)
  return checks


def build_recording(build_model, strategy):
  """(model, names of the variables created while it was built, None) or (None, None, the failed check)."""
  created = []

  def record(next_creator, **kwargs):
    variable = next_creator(**kwargs)
    # Weights only: metrics and the optimizer create theirs untrainable, Keras' step counters are int64.
    if kwargs.get('trainable') is not False and variable.dtype.is_floating:
      created.append(variable.name)
    return variable

  try:
    with tf.variable_creator_scope(record):
      model = build_model(strategy)
  except ValueError as e:
    if 'not tracked' in str(e):
      # Checks rule 10 (Keras layers).
      return None, None, check_results.failed(
          'keras_layers', 'building the model failed: Keras refuses variables its layers do not track: %s'
          % essence(e), 'build the network from Keras layers (tf.keras.layers), not tf.compat.v1.layers or '
                        'tf.Variable inside a Lambda: only tracked variables are saved, trained and replicated.')
    return None, None, check_results.failed('keras_layers', 'building the model failed: %s: %s'
                                      % (type(e).__name__, essence(e)), BUILD_FIX)
  except Exception as e:  # pylint: disable=broad-except -- user code: report it as a check, not a traceback
    return None, None, check_results.failed('keras_layers', 'building the model failed: %s: %s'
                                      % (type(e).__name__, essence(e)), BUILD_FIX)
  if not isinstance(model, tf.keras.Model) or model.optimizer is None:
    return None, None, check_results.failed('keras_layers', 'build_model(strategy) returned %s, not a compiled Keras '
                                                      'model.' % type(model).__name__, BUILD_FIX)
  return model, created, None


def check_tracked(model, created):
  """Every variable created while the model was built belongs to it (or its optimizer)."""
  # Checks rule 10 (Keras layers).
  untracked = sorted(set(created) - set(v.name for v in model.trainable_variables))
  if untracked:
    return check_results.failed(
        'keras_layers', '%s created while the model was built %s not tracked by it: %s; Keras neither trains, '
        'saves nor replicates them.' % (check_results.plural(len(untracked), 'variable'),
                                        'is' if len(untracked) == 1 else 'are', ', '.join(untracked[:5])),
        'create every variable in a Keras layer (add_weight in a custom layer), not with tf.Variable or '
        'tf.compat.v1.layers around the model.')
  return check_results.passed('keras_layers', 'the model tracks all %s its layers created (%d trainable).'
                        % (check_results.plural(len(model.variables), 'variable'), len(model.trainable_variables)))


def check_scope(model, strategy):
  """Model and optimizer variables (the slots exist after one step) were created by the strategy."""
  # Checks rule 11 (strategy scope).
  variables = model.variables + model.optimizer.variables
  outside = [v.name for v in variables if not strategy.extended.variable_created_in_scope(v)]
  if outside:
    return check_results.failed(
        'strategy_scope', '%s of %d %s created outside strategy.scope(): %s; under TPUStrategy they would live on '
        'the host, not on every TPU core.' % (check_results.plural(len(outside), 'variable'), len(variables),
                                              'was' if len(outside) == 1 else 'were', ', '.join(outside[:5])),
        'build and compile the model inside `with strategy.scope():` (the optimizer too: compile creates it).')
  return check_results.passed('strategy_scope',
                              'all %s of the model and its optimizer (slots included, after one step) '
                                          'were created in strategy.scope().' % check_results.plural(len(variables),
                                                                                               'variable'))


def jit_failure(name, step, error):
  """The failed check of a step jit_compile rejected: the ops XLA names, or its first error line."""
  # Checks rule 18 (XLA ops).
  message = getattr(error, 'message', None) or str(error)
  return questions.xla_failure(name, step, xla.rejected_ops_in_error(message), xla.first_error_line(message),
                               questions.KERAS)


def check_steps(model, strategy, plan, train_rows, eval_batch, predict_input):
  """strategy_scope, then the training, evaluation and prediction steps of one replica, compiled with XLA
  (jit_compile) and run once, with step_dtypes and precision from the traced training step."""
  # Checks rule 18 (XLA ops), rule 15 (TPU dtypes), rule 20 (bfloat16).
  model.jit_compile = True  # on a TPU every step is XLA-compiled; here XLA on the CPU stands in
  xla.register_xla_kernels()  # the process's first XLA run, whose SetPriority line it drops
  rows = plan.per_replica_batch_size
  try:
    before = int(model.optimizer.iterations.numpy())
    history = model.fit(tf.data.Dataset.from_tensors(train_rows).repeat(), steps_per_epoch=1, epochs=1, verbose=0)
    after = int(model.optimizer.iterations.numpy())
  except (tf.errors.OpError, ValueError, TypeError) as e:
    checks = [check_results.skipped('strategy_scope', 'the training step did not run (the optimizer has no slots).'),
              jit_failure('keras_train_step', KERAS_STEP % 'training', e),
              check_results.skipped('step_dtypes', 'the training step did not compile.')]
    graph_ops = None
  else:
    loss = history.history.get('loss', [float('nan')])[-1]
    graph_ops = traced_ops(model.train_step, model.distribute_strategy, train_rows)
    wide = [(op.type, op.name) for op in graph_ops if op.type not in ('Placeholder', '_Arg')
            and any(t.dtype == tf.float64 for t in op.outputs)]
    checks = [check_scope(model, strategy),
              check_results.passed('keras_train_step',
                                   '%s (%d examples) compiled with XLA on the CPU (jit_compile) and '
                                                 'ran once: loss %.4g, optimizer step %d -> %d.'
                             % (KERAS_STEP % 'training', rows, loss, before, after)),
              questions.float64_in_step(wide, KERAS_STEP % 'training')]
  checks.append(check_eval_step(model, eval_batch, rows))
  predict_check, logits_dtype = check_predict_step(model, predict_input, rows)
  checks.append(predict_check)
  checks.append(check_precision(model, plan.precision, graph_ops, logits_dtype))
  return checks


def traced_ops(step, strategy, batch):
  """The ops of `step` (model.train_step) as one replica of the model's strategy runs it, traced, not run."""
  spec = tf.nest.map_structure(lambda value: tf.TensorSpec(value.shape, tf.as_dtype(value.dtype)), batch)
  function = tf.function(lambda data: strategy.run(step, args=(data,)))
  return function.get_concrete_function(spec).graph.get_operations()


def check_eval_step(model, eval_batch, rows):
  # Checks rule 18 (XLA ops).
  if eval_batch is None:
    return check_results.skipped('keras_eval_step', 'no evaluation dataset given.')
  try:
    metrics = model.evaluate(tf.data.Dataset.from_tensors(per_replica(eval_batch, rows)), steps=1, verbose=0,
                             return_dict=True)
  except (tf.errors.OpError, ValueError, TypeError) as e:
    return jit_failure('keras_eval_step', KERAS_STEP % 'evaluation', e)
  return check_results.passed('keras_eval_step', '%s (%d examples) compiled with XLA on the CPU and ran once: %s.'
                        % (KERAS_STEP % 'evaluation', rows, ', '.join(
                            '%s %.4g' % pair for pair in sorted(metrics.items()))))


def check_predict_step(model, predict_input, rows):
  """(the keras_predict_step check, the dtype name of the predictions or None)."""
  # Checks rule 18 (XLA ops).
  if predict_input is None:
    return check_results.skipped('keras_predict_step', 'no prediction input given.'), None
  first = per_replica(predict_input, rows)
  try:
    outputs = model.predict(first, batch_size=rows, verbose=0)
  except (tf.errors.OpError, ValueError, TypeError) as e:
    return jit_failure('keras_predict_step', KERAS_STEP % 'prediction', e), None
  return (check_results.passed('keras_predict_step', '%s (%d examples) compiled with XLA on the CPU and ran once: '
                                               'outputs %s %s.' % (KERAS_STEP % 'prediction', rows,
                                                                   np.asarray(outputs).dtype.name,
                                                                   list(np.shape(outputs)))),
          np.asarray(outputs).dtype.name)


def check_precision(model, requested, graph_ops, logits_dtype):
  # Checks rule 20 (bfloat16).
  if graph_ops is None:
    return check_results.skipped('precision', 'the training step did not compile.')
  variable_dtypes = set(v.dtype.name for v in model.variables)
  compute = set(t.dtype.name for op in graph_ops for t in op.outputs if t.dtype.is_floating)
  output = logits_dtype or model.outputs[0].dtype.name
  return questions.precision(requested, variable_dtypes, compute, output, "the Keras 'mixed_bfloat16' policy")


def check_cadence(model, plan, callbacks):
  """checkpoint_cadence and summary_cadence from the callbacks fit would get, and keras_checkpoint."""
  # Checks rule 8 (iterations per loop), rule 12 (checkpoints).
  spe = plan.steps_per_execution
  given = list(callbacks(model)) if callbacks else []
  saver = next((c for c in given if isinstance(c, keras_checkpoints.SaveCheckpoints)), None)
  board = next((c for c in given if isinstance(c, tf.keras.callbacks.TensorBoard)), None)
  every = saver.every_steps if saver else plan.save_checkpoints_steps
  checks = [questions.loop_cadence(
      'checkpoint_cadence', 'a checkpoint', every, spe, 'execution',
      'save_checkpoints_steps=%s is not a multiple of steps_per_execution=%d; Keras calls callbacks only between '
      'executions, so SaveCheckpoints saves at the first boundary past each due step' % (every, spe))]
  checks.append(check_summary_cadence(board, spe))
  checks.append(check_checkpoint(model, saver))
  return checks


def check_summary_cadence(board, spe):
  """TensorBoard(update_freq=N) writes when Keras' step counter is a multiple of N, seen only between executions."""
  # Checks rule 8 (iterations per loop).
  if board is None:
    return check_results.skipped('summary_cadence', 'no TensorBoard callback given.')
  freq = board.update_freq
  if freq == 'epoch':
    return check_results.passed('summary_cadence', 'TensorBoard writes once per epoch.')
  if freq % spe:
    every = freq * spe // math.gcd(freq, spe)
    return check_results.failed(
        'summary_cadence', 'TensorBoard(update_freq=%d) writes only when the step count is a multiple of %d, and '
        'Keras updates it once per execution of steps_per_execution=%d steps: summaries land every %d steps, not '
        'every %d.' % (freq, freq, spe, every, freq),
        'make update_freq a multiple of steps_per_execution (e.g. update_freq=%d).' % spe)
  return check_results.passed('summary_cadence',
                              'TensorBoard writes every %d steps = every %s of %d steps, on the host, '
                                           'from the values each execution returns.'
                        % (freq, check_results.plural(freq // spe, 'execution'), spe))


def check_checkpoint(model, saver):
  """The checkpoint the program writes holds the optimizer's step counter: a rerun resumes, --train_steps is a
  total."""
  # Checks rule 12 (checkpoints).
  if saver is None:
    return check_results.skipped('keras_checkpoint', 'no checkpoint callback (keras/checkpoints.py) given.')
  checkpoint = saver.manager.checkpoint
  path = checkpoint.write(tempfile.mkdtemp(prefix='keras-readiness-') + '/ckpt')
  saved = [name for name, _ in tf.train.list_variables(path)]
  has_step = any(re.match(r'optimizer/_?iter', name) for name in saved)
  weights = [name for name in saved if name.startswith('model/')]
  state = [name for name in saved if name.startswith('optimizer/')]
  if not has_step:
    return check_results.failed('keras_checkpoint', "the program's checkpoint holds %s but not the optimizer's step "
                                              'counter: a rerun would train --train_steps more steps.'
                          % check_results.plural(len(weights), 'model variable'),
                          'checkpoint tf.train.Checkpoint(model=model, optimizer=model.optimizer).')
  return check_results.passed('keras_checkpoint',
                              "the program's checkpoint holds the model (%s) and the optimizer (%s, "
                                            'its step counter among them): a rerun restores the step, so '
                                            '--train_steps is a total.'
                        % (check_results.plural(len(weights), 'value'), check_results.plural(len(state), 'value')))
