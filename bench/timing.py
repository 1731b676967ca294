"""Wall and CPU clocks read together, and what one timed window measured.

On a shared machine other processes take cores away at random, which stretches wall time but not (much) the
CPU time this process spends: every window records both, so each rate exists per wall second (what the issue
asks for, comparable only within one run) and per CPU second (robust to load, blind to idle cores).
"""
import collections
import time

Stamp = collections.namedtuple('Stamp', ['wall', 'cpu'])
# amount: examples or FLOPs done in the window; wall/cpu: seconds of wall time and of this process's CPU time.
Window = collections.namedtuple('Window', ['amount', 'wall', 'cpu'])


def now():
  """Wall clock and the CPU time of all this process's threads (TensorFlow's thread pools included)."""
  return Stamp(time.perf_counter(), time.process_time())


def window(amount, start, end):
  return Window(amount, end.wall - start.wall, end.cpu - start.cpu)


def total(windows):
  """One window spanning all of them: rates over the total are weighted by time, not averaged per window."""
  windows = list(windows)
  return Window(sum(w.amount for w in windows), sum(w.wall for w in windows), sum(w.cpu for w in windows))
