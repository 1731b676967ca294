"""What a port makes, as plain records: the changes, the TODOs, each file before and after, and the whole result."""
import collections

# A change made, or a TODO left: in the file `path` (as given), at `line` of the original, for rule `rule`.
Change = collections.namedtuple('Change', ['path', 'line', 'rule', 'what'])
Todo = collections.namedtuple('Todo', ['path', 'line', 'rule', 'what'])


class PortFailed(Exception):
  """The port could not make one of its own edits (LibCST refused the code it built): a fault of the port, not of
  the program. Nothing is written; the message names the file and what LibCST said."""


class PortedFile(collections.namedtuple('PortedFile', ['path', 'relative', 'original', 'ported', 'encoding'])):
  """One file of the program: its path as given, where it goes under OUT_DIR, and its text before and after."""

  @property
  def changed(self):
    return self.original != self.ported


class Result(object):
  """What a port made: the files (changed or not), the changes, and the TODOs."""

  def __init__(self, files, changes, todos, report, others=()):
    self.files = files
    self.changes = changes
    self.todos = todos
    self.report = report
    self.others = list(others)  # (path, relative path): the other files of the folders given, copied as they are

  @property
  def changed(self):
    return any(f.changed for f in self.files)
