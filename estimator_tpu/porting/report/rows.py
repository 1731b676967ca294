"""The rows of docs/MIGRATION.md that a finding can belong to.

Numbered rows are the table "What changes, step by step"; the other keys are the table "TPU rules that all
three programs already follow" (rule-*) and the section "Version facts that trip migrations" (version-*);
'tool' is for code the report itself could not analyse.
"""
import collections

Row = collections.namedtuple('Row', ['key', 'title'])

_ROWS = [
    Row('1', 'The object that trains'),
    Row('2', 'Where the TPU is'),
    Row('3', 'model_fn and input_fn signatures; where the batch size comes from'),
    Row('4', 'Static shapes'),
    Row('5', 'What model_fn returns; evaluation metrics'),
    Row('6', 'Combining gradients from all cores'),
    Row('7', 'TensorBoard summaries'),
    Row('8', 'Several steps per host round trip'),
    Row('9', 'How long to train and evaluate'),
    Row('13', 'Checking TPU readiness without a TPU'),
    Row('14', 'Scaling beyond one machine'),
    Row('rule-dtypes', 'TPU rule: dtypes the TPU takes'),
    Row('rule-gcs', 'TPU rule: data and model_dir on gs://'),
    Row('version-contrib', 'Version facts: tf.contrib is gone in TF 2.0'),
    Row('tool', 'Not a MIGRATION.md row: code the port report could not analyse'),
]
ROWS = collections.OrderedDict((row.key, row) for row in _ROWS)


def label(key):
  """'row 4 (Static shapes)' or 'rule (TPU rule: ...)', as the text report prints it."""
  row = ROWS[key]
  if key.isdigit():
    return 'row %s (%s)' % (key, row.title)
  return '%s (%s)' % (key, row.title)
