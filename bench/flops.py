"""Training FLOPs per example of the mnist_tpu CNN: counted by the TF profiler and analytically, cross-checked.

The analytic count is what P3 uses: the multiply-adds of the convolutions and dense layers that a training step
executes (forward, weight gradients, input gradients), 2 FLOPs each. The profiler's float_ops over the training
graph agree with it after two known differences:
  * tf.gradients also builds the input gradient of the first convolution (the image needs none); it sits in the
    graph as a control input of the gradient tuple, so the profiler counts it, but grappler prunes it and it never
    runs (a FULL_TRACE of a step shows no such kernel);
  * the profiler also counts element-wise work (bias, ReLU, pooling, Adam), well under 1% here.
"""
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.model import IMAGE_KEY

# The analytic count and the profiler must agree this closely after the differences above, else the model has
# changed in a way the analytic formula does not know.
AGREEMENT_TOLERANCE = 0.01


def layer_macs():
  """[(name, multiply-adds per example of the forward pass)] from the model's architecture constants."""
  layers = []
  side, channels = model.IMAGE_SIZE, 1
  for i, filters in enumerate(model.CONV_FILTERS):
    # 'same' padding: one output per input position, each a k x k x channels dot product per filter.
    layers.append(('conv%d' % (i + 1), side * side * filters * model.CONV_KERNEL ** 2 * channels))
    side, channels = side // 2, filters  # 2x2 max-pool, stride 2
  flat = side * side * channels
  layers.append(('dense1', flat * model.DENSE_UNITS))
  layers.append(('logits', model.DENSE_UNITS * model.NUM_CLASSES))
  return layers


def analytic_train_flops():
  """Returns (flops per example, breakdown dict) of one training step's linear algebra."""
  breakdown = {}
  for position, (name, macs) in enumerate(layer_macs()):
    forward = 2 * macs
    weight_grad = 2 * macs
    input_grad = 0 if position == 0 else 2 * macs  # nothing upstream of the first layer needs a gradient
    breakdown[name] = {'forward': forward, 'weight_grad': weight_grad, 'input_grad': input_grad}
  total = sum(sum(parts.values()) for parts in breakdown.values())
  return total, breakdown


def profiler_train_flops(model_fn, batch_size):
  """Returns (float_ops per example, {op type: float_ops per example}) of model_fn's TRAIN graph.

  Static-shaped placeholders stand in for the input pipeline (the profiler needs static shapes, which the TPU
  rules guarantee anyway); the graph is cut to what the train op depends on before profiling.
  """
  graph = tf.Graph()
  with graph.as_default():
    tf.train.get_or_create_global_step()
    images = tf.placeholder(tf.float32, [batch_size, model.NUM_PIXELS])
    labels = tf.placeholder(tf.int32, [batch_size])
    params = {'batch_size': batch_size, 'use_tpu': False}
    spec = model_fn({IMAGE_KEY: images}, labels, tf.estimator.ModeKeys.TRAIN, params)
    train_graph_def = tf.graph_util.extract_sub_graph(graph.as_graph_def(), [spec.train_op.name])
  pruned = tf.Graph()
  with pruned.as_default():
    tf.import_graph_def(train_graph_def, name='')
  options = tf.profiler.ProfileOptionBuilder.float_operation()
  options['output'] = 'none'
  report = tf.profiler.profile(pruned, cmd='op', options=options)
  by_type = {}

  def collect(node):
    if node.float_ops:
      by_type[node.name] = by_type.get(node.name, 0) + node.float_ops / float(batch_size)
    for child in node.children:
      collect(child)

  for child in report.children:
    collect(child)
  return report.total_float_ops / float(batch_size), by_type


def train_flops(model_fn, batch_size):
  """Both counts and their reconciliation; raises if they disagree beyond AGREEMENT_TOLERANCE."""
  analytic, breakdown = analytic_train_flops()
  profiled, by_type = profiler_train_flops(model_fn, batch_size)
  first_layer = layer_macs()[0][1]
  pruned_input_grad = 2 * first_layer
  elementwise = profiled - pruned_input_grad - analytic
  if abs(elementwise) > AGREEMENT_TOLERANCE * analytic:
    raise RuntimeError('profiler float_ops per example %.0f vs analytic %.0f (+ %.0f pruned first-layer input '
                       'gradient) differ by more than %.0f%%; update bench/flops.py for the changed model'
                       % (profiled, analytic, pruned_input_grad, AGREEMENT_TOLERANCE * 100))
  return {
      'per_example': analytic,
      'analytic_per_example': analytic,
      'analytic_breakdown': breakdown,
      'profiler_per_example': profiled,
      'profiler_by_op_type': by_type,
      'profiler_pruned_first_layer_input_grad': pruned_input_grad,
      'profiler_elementwise_and_other': elementwise,
  }
