"""What a run prints: every message once, and TensorFlow's own chatter only when asked for (--tf_log).

Why every line would appear twice otherwise: when TensorFlow is imported it creates its 'tensorflow' logger and, because
the root logger has no handler yet, gives it a stderr handler of its own (tf_logging.get_logger, the same code in
TF 1.15 and 2.15). absl adds its handler to the root logger only later, in app.run. The 'tensorflow' logger also
propagates to the root, so each TensorFlow record would be written by both: `INFO:tensorflow:...` by TensorFlow's
handler and `I1123 ... file.py:123] ...` by absl's. `configure` removes TensorFlow's handler; absl's stays, so
every record is written once, by absl's handler, like the program's own lines.

Without --tf_log it also drops, from the 'tensorflow' logger only:
  * TensorFlow's INFO lines (Estimator's "Calling model_fn", per-step rates, "Evaluation [3/10]", ...), except
    checkpoint saves and restores: estimator_tpu/runtime/progress.py prints what a user reads instead;
  * deprecation notices whose call site is this project or TensorFlow itself: this project is built on the
    `tf.compat.v1` Estimator and layers APIs on purpose, and a user of it cannot act on them (a deprecated call
    in someone else's code is still reported);
  * a few warnings that TPUEstimator gives on every run and that need no action (KNOWN_HARMLESS_WARNINGS).
Errors, and every other warning, always pass. Messages that TensorFlow's C++ runtime writes itself (CPU features,
XLA service, oneDNN) bypass Python's logging; the C++ runtime reads TF_CPP_MIN_LOG_LEVEL once, at its first
message, so setting it to 1 (INFO off) here still hides the lines of the first session on TF 1.15; the ones TF 2.15
writes while it is imported come before any flag is parsed. A TF_CPP_MIN_LOG_LEVEL set by the user is left alone.

What a line looks like: absl's prefix ("I1123 01:35:15.334882 139727342119808 runner.py:131] ", some 50 characters)
says nothing a person at a terminal needs, and pushes the message off the screen. On stderr a line carries
the time only, and a warning or an error its level word after it (`ShortFormatter`): "08:04:17 step 100/2000 ...",
"08:04:17 WARNING ...". A log file (absl's --log_dir, when a program logs to one) keeps absl's full format, which
tools that read such files parse.
"""
import logging as std_logging
import os
import sys
import warnings

import tensorflow.compat.v1 as tf
from absl import logging as absl_logging

# INFO lines of TensorFlow's that stay: where the model is saved, and where a run continues from.
KEPT_INFO_PREFIXES = ('Saving checkpoints for', 'Restoring parameters from')
# Estimator's line with the metrics of an evaluation; a program whose evaluations are not its own (the evaluator
# task of a TF_CONFIG cluster) keeps it.
EVALUATION_RESULT = 'Saving dict for global step'
# Warnings TensorFlow gives on every run of this project, none of which asks anything of the user.
KNOWN_HARMLESS_WARNINGS = (
    # TPUEstimator passes params to model_fn itself; the plain Estimator underneath it has none to pass.
    "Estimator's model_fn",
    # --use_tpu=false: TPUEstimator says that its eval_on_tpu default does not apply.
    'eval_on_tpu ignored because use_tpu is False',
)
# Where TensorFlow's packages live: a deprecated call made by TensorFlow on our behalf is not the user's to fix.
TENSORFLOW_PACKAGES = ('tensorflow', 'tensorflow_core', 'tensorflow_estimator', 'keras', 'tf_keras')


def project_roots():
  """Directories whose code is this project's: the estimator_tpu package, the checkout holding it (with mnist*.py,
  flags/, tools/) unless the package was installed into site-packages, and the running program's directory."""
  package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  roots = [package]
  checkout = os.path.dirname(package)
  if os.path.basename(checkout) not in ('site-packages', 'dist-packages'):
    roots.append(checkout)
  if sys.argv and sys.argv[0]:
    roots.append(os.path.dirname(os.path.abspath(sys.argv[0])))
  return tuple(os.path.join(root, '') for root in roots)


def is_deprecation_notice(record):
  """TensorFlow's deprecation warnings all start 'From <file>:<line>: ' and say 'deprecated' (deprecation.py,
  module_wrapper.py in both versions); the call site is their first argument."""
  message = str(record.msg)
  return message.startswith('From %s: ') and 'deprecated' in message


def call_site_is_ours_or_tensorflows(location, roots):
  path = os.path.abspath(str(location).rsplit(':', 1)[0])
  return path.startswith(roots) or any(part in TENSORFLOW_PACKAGES for part in path.split(os.sep))


class QuietTensorFlow(std_logging.Filter):
  """A filter for the 'tensorflow' logger: keeps what a user acts on or reads, drops the rest (module docstring)."""

  def __init__(self, roots=None, keep_info=()):
    super(QuietTensorFlow, self).__init__()
    self._roots = roots or project_roots()
    self._kept_info = KEPT_INFO_PREFIXES + tuple(keep_info)

  def filter(self, record):
    if record.levelno >= std_logging.ERROR:
      return True
    message = str(record.msg)
    if record.levelno < std_logging.WARNING:
      return message.startswith(self._kept_info)
    if is_deprecation_notice(record):
      return not (record.args and call_site_is_ours_or_tensorflows(record.args[0], self._roots))
    return not message.startswith(KNOWN_HARMLESS_WARNINGS)


def is_tensorflows_own_handler(handler):
  """The stderr handler tf_logging.get_logger adds: a plain StreamHandler with logging's BASIC_FORMAT."""
  return (type(handler) is std_logging.StreamHandler
          and getattr(handler.formatter, '_fmt', None) == std_logging.BASIC_FORMAT)


class ShortFormatter(std_logging.Formatter):
  """The time, the level word unless INFO, the message (module docstring); absl's full format when `handler`
  writes to a file rather than to stderr or stdout (absl's handler switches its stream to stderr for each record
  it also copies there, so a record copied to both gets each form in its place)."""

  def __init__(self, handler, full=None):
    super(ShortFormatter, self).__init__(fmt='%(message)s')
    self._handler = handler
    self._full = full or absl_logging.PythonFormatter()

  def format(self, record):
    if getattr(self._handler, 'stream', None) not in (sys.stderr, sys.stdout, sys.__stderr__, sys.__stdout__):
      return self._full.format(record)
    level = '' if record.levelno < std_logging.WARNING else record.levelname + ' '
    return '%s %s%s' % (self.formatTime(record, '%H:%M:%S'), level,
                        super(ShortFormatter, self).format(record))


def use_short_lines():
  """Gives absl's handler (the one every record is written by, see the module docstring) the ShortFormatter."""
  handler = absl_logging.get_absl_handler().python_handler
  handler.setFormatter(ShortFormatter(handler))


def configure(tf_log=False, keep_info=()):
  """Call once, after the flags are parsed: every message once; without `tf_log`, TensorFlow's chatter dropped
  (but for its INFO messages that start with one of `keep_info`)."""
  use_short_lines()
  logger = tf.get_logger()  # creates the logger, and TensorFlow's handler, if nothing has yet
  for handler in [h for h in logger.handlers if is_tensorflows_own_handler(h)]:
    logger.removeHandler(handler)
  for old in [f for f in logger.filters if isinstance(f, QuietTensorFlow)]:
    logger.removeFilter(old)
  if not tf_log:
    logger.addFilter(QuietTensorFlow(keep_info=keep_info))
    os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '1')
    # TF 2.15 reports `tf.compat.v1.layers` (model.mnist_cnn) through Python's warnings, once per layer call.
    warnings.filterwarnings('ignore', message=r'`tf\.layers\.\w+` is deprecated', category=UserWarning,
                            module=r'estimator_tpu\.')
    # A named TPU is looked up through Google's API client (tpu/cluster.py); oauth2client logs each token fetch.
    std_logging.getLogger('oauth2client').setLevel(std_logging.WARNING)
