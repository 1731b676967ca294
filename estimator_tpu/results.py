"""Writing run results (JSON summary, predictions CSV) atomically: temp name, then rename (atomic_files)."""
import csv
import io
import json

from estimator_tpu import atomic_files

PREDICTION_COLUMNS = ('index', 'label', 'class_id', 'probability')


def write_json(path, payload):
  atomic_files.write_text(path, json.dumps(payload, indent=2, sort_keys=True))


def write_run_summary(path, global_step, accuracy, loss, examples, predictions, split='test'):
  """The JSON every program leaves in its model_dir: the evaluation and the logged predictions; returns it."""
  summary = {
      'global_step': int(global_step),
      'eval': {'split': split, 'accuracy': float(accuracy), 'loss': float(loss), 'examples': int(examples)},
      'predictions': predictions,
  }
  write_json(path, summary)
  return summary


def write_predictions_csv(path, predictions):
  """One row per prediction dict (keys PREDICTION_COLUMNS), with a header; opens in any spreadsheet or pandas."""
  buffer = io.StringIO()
  writer = csv.DictWriter(buffer, fieldnames=PREDICTION_COLUMNS, lineterminator='\n')
  writer.writeheader()
  for prediction in predictions:
    writer.writerow(dict(prediction, probability='%.6f' % prediction['probability']))
  atomic_files.write_text(path, buffer.getvalue())
