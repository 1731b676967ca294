"""XLA on the CPU as a stand-in for the TPU compiler: kernel registry lookups, compiling and running a cluster.

Both TensorFlows ship XLA's CPU backend. Its op coverage is close to the TPU backend's, with known differences
that the step checks cover separately: the TPU backend compiles the cross-core collectives (CrossReplicaSum)
that the CPU one lacks, and it refuses float64 and data-dependent shapes, which newer CPU XLA accepts.
"""
import contextlib
import re

import tensorflow.compat.v1 as tf
# No public API lists XLA's kernels; this module reads TensorFlow's kernel registry, where XLA registers its
# compilation kernels under the device type below.
from tensorflow.python.framework import kernels
# TPUEstimator runs every TPU computation inside this module's loop (train and predict: while_loop; evaluation:
# repeat); there is no public API for it.
from tensorflow.python.tpu import training_loop

from estimator_tpu.runtime import native_stderr

XLA_DEVICE = 'XLA_CPU_JIT'
# The attribute xla.compile puts on every op of the computation it compiles.
XLA_COMPILE_ATTR = '_xla_compile_id'
# Cross-core collectives: only the TPU backend compiles them (CPU XLA has no kernel), and with one core their
# result is their input, which is how compile_and_run() stands them in.
TPU_COLLECTIVES = frozenset(['CrossReplicaSum'])
# TF 1 control flow: XLA has no kernels for these because it never compiles them as ops; it first turns the
# frames they make into While and If (tf2xla's FunctionalizeControlFlow), and the compile judges the rest.
V1_CONTROL_FLOW = frozenset(['Enter', 'Exit', 'Merge', 'Switch', 'LoopCond', 'NextIteration', 'RefEnter', 'RefExit',
                             'RefMerge', 'RefSwitch', 'RefNextIteration'])
# 'No registered 'PyFunc' OpKernel for XLA_CPU_JIT devices compatible with node {{node py_func}}' -- TF 1.15 turns
# '{{node X}}' into 'node X (defined at ...)' when it raises the error in Python.
UNSUPPORTED_OP = re.compile(r"No registered '(?P<type>[^']+)' OpKernel for XLA_\w+ devices compatible with node "
                            r"(?:\{\{)?node (?P<name>[^\s}]+)")
# What TF 2.15's XLA writes, as an error, the first time a process runs an XLA computation on the CPU: its stream
# pool asks every new stream for a priority, which the host platform's streams do not implement
# (xla/stream_executor/stream_executor_internal.h). It is about TensorFlow's CPU backend, not the user's program.
SET_PRIORITY_LINE = re.compile(br'^[\d-]+ [\d:.]+: E \S+\] SetPriority unimplemented for this stream\.\s*$')
ERROR_NOISE = re.compile(r'^(Graph execution error|Detected at node|Node:|The op is created at|dummy_|\s*\[\[)')

_registered = []


def register_xla_kernels():
  """XLA adds its compilation kernels to the registry lazily, on the first compile: compile something tiny.

  Every check calls this before its own first XLA run, so this run is the process's first one, the one TF 2.15
  writes its SetPriority line at (SET_PRIORITY_LINE): dropped here, with nothing else."""
  if _registered:
    return
  with native_stderr.dropping(SET_PRIORITY_LINE):
    with tf.Graph().as_default():
      total = tf.xla.experimental.compile(lambda: tf.constant(1.0) + 1.0)
      with tf.Session() as session:
        session.run(total)
  _registered.append(True)


def cluster_ops(graph):
  """The ops xla.compile put into its computation, in creation (= topological) order."""
  return [op for op in graph.get_operations() if XLA_COMPILE_ATTR in op.node_def.attr]


def compile_as_tpu_iteration(step_fn, inputs):
  """Compiles one iteration of step_fn(*inputs) -> (float32 scalar, [tensors or ops that must run]) as
  TPUEstimator compiles a TPU step; returns (the scalar's output tensor, the ops XLA compiles).

  TPUEstimator builds model_fn inside training_loop's while loop. With TF 1 control flow, XLA makes that loop a
  While whose body holds only the ops the loop's results reach (tf2xla's functionalize_while copies the body back
  from NextIteration and deletes the rest of the frame), so ops model code builds and never uses are not compiled:
  the Placeholder and the symbolic copy of the network a Keras Sequential with `input_shape` makes inside model_fn.
  The step is built inside the same loop here, so XLA drops the same ops, and those ops are left out of the checks.
  With TF 2 control flow (while_v2) the loop body is a function XLA compiles whole, the same ops a computation
  without the loop has: then no loop is built, and every op of the computation is compiled and checked.
  """
  looped = not tf.control_flow_v2_enabled()

  def computation(*args):
    if not looped:
      with tpu_variable_scope():
        value, must_run = step_fn(*args)
      with tf.control_dependencies(must_run):
        return tf.identity(value)

    def body(unused_value):
      # Outside the loop's name scope ('while/'), so the ops keep the names model code gives them.
      with tf.get_default_graph().name_scope(None), tpu_variable_scope():
        value, must_run = step_fn(*args)
      return [value] + ([tf.group(*must_run)] if must_run else [])

    return training_loop.repeat(1, body, [tf.constant(0.0)])

  outputs = tf.xla.experimental.compile(computation, inputs=inputs)
  value = outputs[0] if isinstance(outputs, (list, tuple)) else outputs
  graph = value.graph
  ops = cluster_ops(graph)
  if looped:
    reached = _reaching(value.op)
    ops = [op for op in ops if op in reached]
  return value, ops


@contextlib.contextmanager
def tpu_variable_scope():
  """The variable scope a TPU computation builds model code in: resource variables, no partitioner.

  TensorFlow's TPU rewrite (tpu.py, split_compile_and_replicate, both TFs) turns on use_resource for the current
  variable scope while the computation is built, because only resource variables work inside it, and drops any
  partitioner with a warning. Variables model code makes there without asking for resource variables (tf.metrics'
  counters, a plain tf.Variable) are therefore resource variables on the TPU; built as reference variables under
  tf.xla.experimental.compile, XLA fails with "invalid XlaOp with handle -1". The same two settings here.
  """
  scope = tf.get_variable_scope()
  saved_use_resource, saved_getter = scope.use_resource, scope.custom_getter

  def without_partitioner(getter, name, *args, **kwargs):  # TensorFlow calls it with getter= by name
    kwargs['partitioner'] = None
    if saved_getter is None:
      return getter(name, *args, **kwargs)
    return saved_getter(getter, name, *args, **kwargs)

  scope.set_use_resource(True)
  scope.set_custom_getter(without_partitioner)
  try:
    yield
  finally:
    scope.set_use_resource(saved_use_resource)
    scope.set_custom_getter(saved_getter)


def _reaching(op):
  """The ops `op` depends on, through data and control inputs, itself included."""
  seen, pending = set([op]), [op]
  while pending:
    current = pending.pop()
    for before in [t.op for t in current.inputs] + list(current.control_inputs):
      if before not in seen:
        seen.add(before)
        pending.append(before)
  return seen


def has_xla_kernel(op):
  """True if XLA registers a kernel for op's type whose type constraints admit op's attributes."""
  return any(_admits(kernel, op) for kernel in kernels.get_registered_kernels_for_op(op.type).kernel
             if kernel.device_type == XLA_DEVICE)


def _admits(kernel, op):
  for constraint in kernel.constraint:
    allowed = set(constraint.allowed_values.list.type)
    try:
      value = op.get_attr(constraint.name)
    except ValueError:
      continue  # attribute left at its default: nothing to compare
    values = value if isinstance(value, list) else [value]
    if any(tf.as_dtype(v).as_datatype_enum not in allowed for v in values):
      return False
  return True


def ops_without_xla_kernel(ops):
  register_xla_kernels()
  return [op for op in ops if op.type not in TPU_COLLECTIVES and op.type not in V1_CONTROL_FLOW
          and not has_xla_kernel(op)]


def compile_and_run(graph_def, init_name, feed, fetches, fetches_after):
  """Imports the graph with its collectives replaced, runs init, `fetches` (fed), then `fetches_after`.

  The graph is the exact TPU step. Only the TPU backend can compile CrossReplicaSum, so each one becomes an
  Identity (a sum over one core is its input) and everything else -- forward, loss, gradients, optimizer update
  -- compiles and runs as XLA would compile it for one TPU core. Returns both lists of values; raises
  tf.errors.OpError if XLA fails.
  """
  graph_def = _replace_collectives(graph_def)
  with tf.Graph().as_default():
    tf.import_graph_def(graph_def, name='')
    with tf.Session() as session:
      session.run(init_name)
      values = session.run(fetches, feed_dict=feed)
      return values, session.run(fetches_after)


def _replace_collectives(graph_def):
  rewritten = tf.GraphDef()
  rewritten.CopyFrom(graph_def)
  for node in rewritten.node:
    if node.op in TPU_COLLECTIVES:
      node.op = 'Identity'
      del node.input[1:]  # CrossReplicaSum(input, group_assignment) -> Identity(input)
  return rewritten


def rejected_ops_in_error(message):
  """[(type, name)] of the ops an XLA compile error names as unsupported, in order, without repeats."""
  seen = []
  for match in UNSUPPORTED_OP.finditer(message):
    pair = (match.group('type'), match.group('name'))
    if pair not in seen:
      seen.append(pair)
  return seen


def first_error_line(message, limit=300):
  """The informative line of a TensorFlow error message (TF 2.x prefixes several lines of context)."""
  lines = [line.strip() for line in message.splitlines() if line.strip() and not ERROR_NOISE.match(line)]
  text = lines[0] if lines else message.strip()
  return text if len(text) <= limit else text[:limit - 3] + '...'
