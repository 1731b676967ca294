"""The progress lines (runtime/progress.py) and the log filter (runtime/logs.py), without running a model."""
import io
import logging as std_logging
import os
import re
import sys
import types

import pytest
import tensorflow.compat.v1 as tf
from absl import logging as absl_logging

from estimator_tpu.runtime import logs
from estimator_tpu.runtime import progress


class FakeClock(object):
  def __init__(self):
    self.now = 1000.0

  def __call__(self):
    return self.now


def training_meter(total, batch, every):
  lines, clock = [], FakeClock()
  meter = progress.TrainingMeter(total, batch, every, clock=clock, log=lambda fmt, *a: lines.append(fmt % a))
  return meter, clock, lines


def test_training_logs_every_interval_with_loss_rate_elapsed_and_eta():
  meter, clock, lines = training_meter(total=400, batch=128, every=100)
  meter.start(0)
  for step in range(1, 401):
    clock.now += 0.04  # 25 steps/s
    meter.update(step, 1.0 / step)
  assert [line.split()[1] for line in lines] == ['100/400', '200/400', '300/400', '400/400']
  assert lines[0] == 'step 100/400  loss 0.0100  3200 examples/s  elapsed 0:00:04  ETA 0:00:12'
  assert lines[-1] == 'step 400/400  loss 0.0025  3200 examples/s  elapsed 0:00:16  ETA 0:00:00'


def test_on_a_tpu_a_line_per_loop_the_only_points_the_host_sees():
  meter, clock, lines = training_meter(total=200, batch=1024, every=progress.every_steps(None, True, 50))
  meter.start(0)
  for step in range(50, 201, 50):  # one session.run per loop of 50 steps
    clock.now += 1.0
    meter.update(step, 0.5)
  assert [line.split()[1] for line in lines] == ['50/200', '100/200', '150/200', '200/200']
  assert '51200 examples/s' in lines[0]


def test_a_coarser_interval_logs_at_the_first_loop_boundary_past_each_multiple():
  meter, _, lines = training_meter(total=300, batch=8, every=100)
  meter.start(0)
  for step in range(30, 301, 30):
    meter.update(step, 0.5)
  assert [line.split()[1] for line in lines] == ['120/300', '210/300', '300/300']


def test_a_resumed_run_counts_from_its_step_and_the_end_is_logged_once():
  meter, clock, lines = training_meter(total=250, batch=1, every=100)
  meter.start(180)
  for step in (190, 200, 250, 251, 252):  # an asynchronous cluster's global step can pass the total
    clock.now += 1.0
    meter.update(step, 0.5)
  assert [line.split()[1] for line in lines] == ['200/250', '250/250']


def test_tiny_and_missing_losses_are_readable():
  assert 'loss 2.3e-05' in progress.training_line(1, 2, 2.3e-05, 1.0, 0.0, 0.0)
  assert 'loss n/a' in progress.training_line(1, 2, None, 1.0, 0.0, 0.0)
  assert progress.clock_text(3723.4) == '1:02:03'


def test_every_steps_defaults():
  assert progress.every_steps(None) == progress.CPU_EVERY_STEPS
  assert progress.every_steps(None, use_tpu=True, iterations=50) == 50
  assert progress.every_steps(7, use_tpu=True, iterations=50) == 7


@pytest.mark.parametrize('total, expected', [(10, [3, 6, 9, 10]), (3, [1, 2, 3]), (1, [1]), (100, [25, 50, 75, 100])])
def test_evaluation_logs_about_every_quarter(total, expected):
  lines = []
  meter = progress.EvaluationMeter(total, 'test', log=lambda fmt, *a: lines.append(fmt % a))
  for done in range(1, total + 1):
    meter.update(done)
  assert lines == ['test: evaluated %d/%d batches' % (done, total) for done in expected]


# --- logs.QuietTensorFlow ------------------------------------------------------------------------------------------

OURS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(logs.__file__))), 'model.py')
TENSORFLOW_FILE = os.path.join(os.path.dirname(tf.__file__), 'python', 'ops', 'array_ops.py')
DEPRECATION = 'From %s: %s (from %s) is deprecated and will be removed %s.\nInstructions for updating:\n%s'
RENAMED = 'From %s: The name %s is deprecated. Please use %s instead.\n'


def record(level, msg, *args):
  return std_logging.LogRecord('tensorflow', level, 'x.py', 1, msg, args, None)


@pytest.mark.parametrize('level, msg, args, kept', [
    (std_logging.INFO, 'Calling model_fn.', (), False),
    (std_logging.INFO, 'global_step/sec: %g', (8.4,), False),
    (std_logging.INFO, 'Saving checkpoints for %d into %s.', (10, '/m/model.ckpt'), True),
    (std_logging.INFO, 'Restoring parameters from %s', ('/m/model.ckpt-10',), True),
    (std_logging.WARNING, DEPRECATION, (OURS + ':40', 'conv2d', 'tf.layers', 'later', 'Use Conv2D'), False),
    (std_logging.WARNING, DEPRECATION, (TENSORFLOW_FILE + ':1475', 'where', 'array_ops', 'later', 'tf.where'), False),
    (std_logging.WARNING, RENAMED, ('mnist_tpu.py:71', 'tf.estimator.tpu.TPUEstimator', 'tf.compat.v1...'), False),
    # A deprecated call in someone else's code is theirs to fix: it stays.
    (std_logging.WARNING, DEPRECATION, ('/home/user/my_model.py:3', 'conv2d', 'tf.layers', 'later', 'Conv2D'), True),
    (std_logging.WARNING, "Estimator's model_fn (%s) includes params argument, but params are not passed to "
     'Estimator.', ('<fn>',), False),
    (std_logging.WARNING, 'eval_on_tpu ignored because use_tpu is False.', (), False),
    (std_logging.WARNING, 'Some other warning', (), True),
    (std_logging.ERROR, 'Error recorded from training_loop: %s', ('boom',), True),
])
def test_quiet_filter_keeps_what_a_user_acts_on(level, msg, args, kept):
  quiet = logs.QuietTensorFlow(roots=(os.path.join(os.path.dirname(OURS), ''), os.path.join(os.getcwd(), '')))
  assert quiet.filter(record(level, msg, *args)) == kept


def test_a_program_may_keep_more_info_lines():
  quiet = logs.QuietTensorFlow(keep_info=(logs.EVALUATION_RESULT,))
  assert quiet.filter(record(std_logging.INFO, 'Saving dict for global step %d: %s', 20, 'accuracy = 1.0'))


@pytest.fixture
def tensorflow_logger():
  """The 'tensorflow' logger with TensorFlow's own stderr handler, restored afterwards."""
  logger = tf.get_logger()
  saved_handlers, saved_filters = list(logger.handlers), list(logger.filters)
  absl_handler = absl_logging.get_absl_handler().python_handler
  saved_formatter = absl_handler.formatter  # configure gives absl's handler the short lines
  handler = std_logging.StreamHandler()
  handler.setFormatter(std_logging.Formatter(std_logging.BASIC_FORMAT, None))
  logger.addHandler(handler)
  yield logger, handler
  logger.handlers[:], logger.filters[:] = saved_handlers, saved_filters
  absl_handler.setFormatter(saved_formatter)


def test_configure_removes_tensorflows_own_handler(tensorflow_logger, monkeypatch):
  monkeypatch.setenv('TF_CPP_MIN_LOG_LEVEL', '0')  # set by the user: left alone
  logger, handler = tensorflow_logger
  other = std_logging.StreamHandler()
  logger.addHandler(other)
  logs.configure(tf_log=False)
  assert handler not in logger.handlers and other in logger.handlers
  assert sum(isinstance(f, logs.QuietTensorFlow) for f in logger.filters) == 1
  assert os.environ['TF_CPP_MIN_LOG_LEVEL'] == '0'
  logs.configure(tf_log=True)  # --tf_log: the same single handler, no filter
  assert not any(isinstance(f, logs.QuietTensorFlow) for f in logger.filters)
  assert isinstance(absl_logging.get_absl_handler().python_handler.formatter, logs.ShortFormatter)


# --- logs.ShortFormatter -------------------------------------------------------------------------------------------

def absl_record(level, msg, *args):
  return std_logging.LogRecord('absl', level, '/repo/estimator_tpu/runner.py', 131, msg, args, None)


def test_short_lines_on_stderr_carry_the_time_and_a_warnings_level():
  formatter = logs.ShortFormatter(types.SimpleNamespace(stream=sys.stderr))
  info = formatter.format(absl_record(std_logging.INFO, 'step %d/40  loss %.1f', 2, 0.5))
  assert re.match(r'^\d\d:\d\d:\d\d step 2/40  loss 0\.5$', info), info
  warning = formatter.format(absl_record(std_logging.WARNING, 'Some warning'))
  assert re.match(r'^\d\d:\d\d:\d\d WARNING Some warning$', warning), warning
  assert re.match(r'^\d\d:\d\d:\d\d ERROR boom$', formatter.format(absl_record(std_logging.ERROR, 'boom')))


def test_a_log_file_keeps_absls_full_format():
  handler = absl_logging.PythonHandler(stream=io.StringIO())  # what absl's handler writes to after --log_dir
  handler.setFormatter(logs.ShortFormatter(handler))
  line = handler.format(absl_record(std_logging.INFO, 'step %d/40', 2))
  assert re.match(r'^I\d{4} [\d:.]+ +\d+ runner\.py:131\] step 2/40$', line), line


class Terminal(io.StringIO):
  def isatty(self):
    return True


def test_the_first_line_comes_within_seconds_even_when_the_first_interval_is_slow():
  meter, clock, lines = training_meter(total=400, batch=128, every=100)
  meter.start(0)
  for step in range(1, 201):
    clock.now += 1.0  # 1 step/s: the first interval would take 100 s
    meter.update(step, 0.5)
  assert [line.split()[1] for line in lines] == ['%d/400' % progress.FIRST_LINE_SECONDS, '100/400', '200/400']


def test_on_a_terminal_a_live_line_is_redrawn_in_place_and_a_log_file_gets_lines_only():
  assert progress.terminal(io.StringIO()) is None  # a pipe or a file: no live line
  screen = Terminal()
  assert isinstance(progress.terminal(screen, handlers=[]), progress.LiveLine)
  live = progress.LiveLine(screen, handlers=[])
  lines, clock = [], FakeClock()
  meter = progress.TrainingMeter(100, 10, 50, clock=clock, log=lambda fmt, *a: lines.append(fmt % a), live=live)
  meter.start(0)
  for step in range(1, 101):
    clock.now += 0.1  # 10 steps/s: a redraw every LIVE_EVERY_SECONDS, a logged line every 50 steps
    meter.update(step, 0.25)
  drawn = screen.getvalue().split(progress.CLEAR_LINE)
  updates = [text for text in drawn if text]
  assert len(updates) >= 15 and all(text.startswith('step ') and 'ETA' in text for text in updates)
  assert '\n' not in screen.getvalue()  # in place: no new line on the terminal but the logged ones
  assert drawn[-1] == ''  # erased before the last logged line
  assert [line.split()[1] for line in lines] == ['50/100', '100/100']


def test_a_log_record_erases_the_live_line_first():
  screen = Terminal()
  handler = std_logging.StreamHandler(screen)
  live = progress.LiveLine(screen, handlers=[handler])
  logger = std_logging.getLogger('live-line-test')
  logger.addHandler(handler)
  logger.propagate = False
  try:
    live.show('step 3/10')
    logger.warning('Saving checkpoints for 3')
  finally:
    logger.removeHandler(handler)
  assert screen.getvalue() == progress.CLEAR_LINE + 'step 3/10' + progress.CLEAR_LINE + 'Saving checkpoints for 3\n'
