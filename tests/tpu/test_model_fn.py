"""model_fn per mode, built directly with the params TPUEstimator would pass, and metric_fn alone."""
import numpy as np
import pytest
import tensorflow.compat.v1 as tf

from estimator_tpu import model
from estimator_tpu.tpu import model_fn as model_fn_lib

BATCH = 8
MODE = tf.estimator.ModeKeys


def build_spec(mode, use_tpu, with_weights=False, summary_dir=None, images=None, labels=None, weights=None):
  graph = tf.Graph()
  with graph.as_default():
    tf.set_random_seed(0)  # the same weights each run: a test comparing losses must not depend on the draw
    tf.train.create_global_step()
    features = {model.IMAGE_KEY: tf.zeros([BATCH, 784]) if images is None else tf.constant(images)}
    if with_weights:
      features[model.WEIGHT_KEY] = tf.ones([BATCH]) if weights is None else tf.constant(weights)
    if mode == MODE.PREDICT:
      labels = None
    else:
      labels = tf.zeros([BATCH], tf.int32) if labels is None else tf.constant(labels)
    fn = model_fn_lib.model_fn_builder(learning_rate=1e-3, decay_steps=100, decay_rate=0.5, summary_dir=summary_dir)
    spec = fn(features, labels, mode, params={'use_tpu': use_tpu, 'batch_size': BATCH})
  return graph, spec


def op_types(graph):
  return {op.type for op in graph.get_operations()}


@pytest.mark.parametrize('use_tpu', [False, True])
def test_train_graph_has_cross_replica_sum_iff_on_tpu(use_tpu):
  graph, spec = build_spec(MODE.TRAIN, use_tpu)
  assert spec.train_op is not None
  assert ('CrossReplicaSum' in op_types(graph)) == use_tpu


def test_eval_returns_metric_fn_on_named_tensors():
  _, spec = build_spec(MODE.EVAL, use_tpu=False)
  fn, tensors = spec.eval_metrics
  assert fn is model.metric_fn
  assert sorted(tensors) == ['labels', 'logits']
  assert spec.train_op is None


def test_eval_passes_weights_when_the_input_has_them():
  _, spec = build_spec(MODE.EVAL, use_tpu=True, with_weights=True)
  assert sorted(spec.eval_metrics[1]) == ['labels', 'logits', 'weights']


def test_predict_returns_class_ids_and_probabilities():
  _, spec = build_spec(MODE.PREDICT, use_tpu=False)
  assert spec.predictions['class_ids'].shape.as_list() == [BATCH]
  assert spec.predictions['class_ids'].dtype == tf.int32
  assert spec.predictions['probabilities'].shape.as_list() == [BATCH, 10]


def evaluate_metric_fn(labels, logits, weights=None):
  with tf.Graph().as_default(), tf.Session() as sess:
    metrics = model.metric_fn(tf.constant(labels), tf.constant(logits, tf.float32),
                                     None if weights is None else tf.constant(weights, tf.float32))
    sess.run(tf.local_variables_initializer())
    sess.run([update for _, update in metrics.values()])
    return sess.run({name: value for name, (value, _) in metrics.items()})


def test_metric_fn_accuracy_and_loss_match_numpy():
  labels = np.array([0, 1, 2, 3], np.int32)
  logits = np.eye(4, 10) * 5.0
  logits[3] = 0.0
  logits[3, 1] = 5.0  # the last example is wrong
  result = evaluate_metric_fn(labels, logits)
  assert result['accuracy'] == pytest.approx(0.75)
  assert result['mean_loss'] == pytest.approx(cross_entropy(logits, labels).mean(), rel=1e-5)


def test_metric_fn_weights_exclude_padding_rows():
  labels = np.array([0, 1, 2, 3], np.int32)
  logits = np.eye(4, 10) * 5.0
  logits[3] = 0.0
  logits[3, 1] = 5.0
  result = evaluate_metric_fn(labels, logits, weights=[1.0, 1.0, 1.0, 0.0])
  assert result['accuracy'] == pytest.approx(1.0)


def cross_entropy(logits, labels):
  shifted = logits - logits.max(axis=1, keepdims=True)
  log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
  return -log_probs[np.arange(len(labels)), labels]


def test_eval_loss_leaves_out_padding_rows():
  rng = np.random.RandomState(0)
  images = rng.uniform(0, 255, size=(BATCH, 784)).astype(np.float32)
  labels = np.arange(BATCH, dtype=np.int32) % 10
  weights = np.array([1.0] * 5 + [0.0] * (BATCH - 5), np.float32)
  graph, spec = build_spec(MODE.EVAL, use_tpu=False, with_weights=True, images=images, labels=labels,
                           weights=weights)
  labels_tensor = spec.eval_metrics[1]['labels']
  with graph.as_default(), tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    loss, logits = sess.run([spec.loss, spec.eval_metrics[1]['logits']])
    # Give every padding row the class its logits like least, then the one they like best: the padding rows' own
    # loss moves by the whole spread of their logits, the weighted loss must not move at all.
    worst, best = labels.copy(), labels.copy()
    worst[5:] = logits[5:].argmin(axis=1)
    best[5:] = logits[5:].argmax(axis=1)
    loss_worst = sess.run(spec.loss, {labels_tensor: worst})
    loss_best = sess.run(spec.loss, {labels_tensor: best})
  per_example = cross_entropy(logits.astype(np.float64), labels)
  assert loss == pytest.approx(per_example[:5].mean(), rel=1e-5)
  assert loss_worst == pytest.approx(loss, rel=1e-6) and loss_best == pytest.approx(loss, rel=1e-6)
  padded_worst = cross_entropy(logits.astype(np.float64), worst)[5:]
  padded_best = cross_entropy(logits.astype(np.float64), best)[5:]
  assert (padded_worst - padded_best).min() > 1e-3  # the padding rows' labels did change their own loss


@pytest.mark.parametrize('use_tpu', [False, True])
def test_train_host_call_carries_step_loss_and_learning_rate(use_tpu, tmp_path):
  _, spec = build_spec(MODE.TRAIN, use_tpu, summary_dir=str(tmp_path))
  _, tensors = spec.host_call
  assert sorted(tensors) == ['learning_rate', 'loss', 'step']
  # On TPU the host gets these concatenated over cores: each needs a leading dimension.
  assert all(tensor.shape.as_list() == [1] for tensor in tensors.values())
  assert tensors['step'].dtype == tf.int64


def test_no_host_call_without_summary_dir():
  _, spec = build_spec(MODE.TRAIN, use_tpu=False)
  assert spec.host_call is None
