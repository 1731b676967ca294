"""The port report: what legacy Estimator code must change to run under TPUEstimator, read from its source.

  python -m estimator_tpu.port PATH [PATH ...] [--format=json]

The code is parsed, never imported or run. Each finding names a file and line, the TPU rule it is about (rule N
of estimator_tpu/rules.py, row N of docs/MIGRATION.md), what to change, and whether a TPU requires it, it is
advice, or static analysis cannot tell. Exit status: 0 when nothing is required, 1 when something is, 2 when some
input could not be read (that wins: a report with unread files is incomplete).

Modules: program (imports, names and callables across the files), estimators (where estimators are built and
driven), model_fns, input_fns, modules (tf.contrib, path flags), scan (puts them together), findings (report).
"""
from estimator_tpu.porting.report.findings import ADVICE
from estimator_tpu.porting.report.findings import REQUIRED
from estimator_tpu.porting.report.findings import UNKNOWN
from estimator_tpu.porting.report.scan import scan as scan_paths

__all__ = ['ADVICE', 'REQUIRED', 'UNKNOWN', 'scan_paths']
