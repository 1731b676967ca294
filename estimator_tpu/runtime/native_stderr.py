"""Lines that TensorFlow's C++ runtime writes itself, straight to file descriptor 2, past Python's logging.

Python's logging filters (runtime/logs.py) cannot reach them. Where such a line is known to say nothing about the
user's program, `dropping` runs a block with descriptor 2 sent to a temporary file and then writes back every
line but the ones it names, in their order: every other message, error or not, still reaches the user.
"""
import contextlib
import os
import sys
import tempfile


@contextlib.contextmanager
def dropping(pattern):
  """Runs the block; of what was written to descriptor 2 meanwhile (C++ and Python alike), writes back the lines
  `pattern` (a compiled bytes regex) does not match. If descriptor 2 cannot be duplicated, nothing is dropped."""
  sys.stderr.flush()
  try:
    saved = os.dup(2)
  except OSError:
    yield
    return
  with tempfile.TemporaryFile() as capture:
    os.dup2(capture.fileno(), 2)
    try:
      yield
    finally:
      sys.stderr.flush()
      os.dup2(saved, 2)
      os.close(saved)
      capture.seek(0)
      kept = [line for line in capture.read().splitlines(True) if not pattern.search(line)]
      text = b''.join(kept)
      while text:
        text = text[os.write(2, text):]
