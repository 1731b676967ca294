"""Writing run results (JSON summary, predictions CSV) atomically: temp name, then rename (atomic_files)."""
import csv
import io
import json

from absl import logging

from estimator_tpu.runtime import atomic_files

PREDICTION_COLUMNS = ('index', 'label', 'class_id', 'probability')
LOGGED_PREDICTIONS = 10


def write_json(path, payload):
  atomic_files.write_text(path, json.dumps(payload, indent=2, sort_keys=True))


def write_run_summary(path, global_step, accuracy, loss, examples, predictions, split='test', seed=None):
  """The JSON every program leaves in its model_dir: the evaluation, the logged predictions and the seed of the
  training run (--seed repeats it); returns it."""
  summary = {
      'global_step': int(global_step),
      'eval': {'split': split, 'accuracy': float(accuracy), 'loss': float(loss), 'examples': int(examples)},
      'predictions': predictions,
  }
  if seed is not None:
    summary['seed'] = int(seed)
  write_json(path, summary)
  return summary


def prediction_rows(outputs, labels):
  """Rows (dicts keyed PREDICTION_COLUMNS) for predictions ({'class_ids', 'probabilities'} per example) and their
  labels, in order; the first LOGGED_PREDICTIONS are logged as they arrive."""
  rows = []
  for index, (output, label) in enumerate(zip(outputs, labels)):
    class_id = int(output['class_ids'])
    rows.append({'index': index, 'label': int(label), 'class_id': class_id,
                 'probability': float(output['probabilities'][class_id])})
    if index < LOGGED_PREDICTIONS:
      logging.info('Prediction %d: class %d (p=%.3f), label %d', index, class_id, rows[-1]['probability'], label)
  return rows


def write_predictions_csv(path, predictions):
  """One row per prediction dict (keys PREDICTION_COLUMNS), with a header; opens in any spreadsheet or pandas."""
  buffer = io.StringIO()
  writer = csv.DictWriter(buffer, fieldnames=PREDICTION_COLUMNS, lineterminator='\n')
  writer.writeheader()
  for prediction in predictions:
    writer.writerow(dict(prediction, probability='%.6f' % prediction['probability']))
  atomic_files.write_text(path, buffer.getvalue())
