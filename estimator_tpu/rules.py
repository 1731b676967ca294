"""The TPU rules, numbered once: what a port from Estimator to TPUEstimator (and on to TPUStrategy) changes.

Rule N is row N of docs/MIGRATION.md's table, which says what changes, why a TPU needs it, where this project does
it and which test fails if it is undone. Code cites a rule as `TPU rule N (name): why`, the port report's findings
and the readiness check's lines as `rule N`, so `grep -rn "rule N"` finds every place that rule lives.
"""
import collections

Rule = collections.namedtuple('Rule', ['number', 'name', 'title'])

RULES = (
    Rule(1, 'TPUEstimator', 'The object that trains'),
    Rule(2, 'where the TPU is', 'Where the TPU is'),
    Rule(3, 'params', 'model_fn and input_fn signatures; where the batch size comes from'),
    Rule(4, 'static shapes', 'Static shapes'),
    Rule(5, 'TPUEstimatorSpec', 'What model_fn returns; evaluation metrics'),
    Rule(6, 'gradient all-reduce', 'Combining gradients from all cores'),
    Rule(7, 'summaries on the host', 'TensorBoard summaries'),
    Rule(8, 'iterations per loop', 'Several steps per host round trip'),
    Rule(9, 'steps', 'How long to train and evaluate'),
    Rule(10, 'Keras layers', "The network's code"),
    Rule(11, 'strategy scope', 'Where variables are created'),
    Rule(12, 'checkpoints', 'Checkpoints and resuming'),
    Rule(13, 'readiness', 'Checking TPU readiness without a TPU'),
    Rule(14, 'pod slices', 'Scaling beyond one machine'),
    Rule(15, 'TPU dtypes', 'Only dtypes the TPU has'),
    Rule(16, 'even batches', 'Every batch splits evenly over the cores'),
    Rule(17, 'Cloud Storage', "Data and model_dir where the TPU's workers can read them"),
    Rule(18, 'XLA ops', 'Only what XLA compiles runs on the TPU'),
    Rule(19, 'contrib names', 'tf.contrib names moved'),
    Rule(20, 'bfloat16', 'Computing in bfloat16'),
)
BY_NUMBER = collections.OrderedDict((rule.number, rule) for rule in RULES)


def rule(number):
  """The Rule numbered `number`; KeyError for a number the registry does not have."""
  return BY_NUMBER[number]


def cite(number):
  """'rule 4 (static shapes)': how a finding or a check line names its rule."""
  return 'rule %d (%s)' % (number, rule(number).name)


def tag(number):
  """'TPU rule 4 (static shapes)': how a comment in the code names its rule."""
  return 'TPU ' + cite(number)
