"""One port: the port report's findings on the program, the changes with one right answer made in a copy of its
source, a TODO left at every required finding that needs a human decision.

Detection is the port report's (estimator_tpu.porting.report.scan_paths): each fixer takes the findings it
resolves, by file, line and rule, and reads the code around them with LibCST. A required finding no fixer takes
becomes `# TODO(tpu port, rule N): what to do` above its statement.
"""
import collections
import os

import libcst as cst

from estimator_tpu.porting.program import files
from estimator_tpu.porting.report import REQUIRED
from estimator_tpu.porting.report import scan_paths
from estimator_tpu.porting.rewrite import analysis as analysis_lib
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import program as program_lib
from estimator_tpu.porting.rewrite import source as source_lib
from estimator_tpu.runtime.errors import UserError

# A change made, or a TODO left: in the file `path` (as given), at `line` of the original, for rule `rule`.
Change = collections.namedtuple('Change', ['path', 'line', 'rule', 'what'])
Todo = collections.namedtuple('Todo', ['path', 'line', 'rule', 'what'])


class PortedFile(collections.namedtuple('PortedFile', ['path', 'relative', 'original', 'ported', 'encoding'])):
  """One file of the program: its path as given, where it goes under OUT_DIR, and its text before and after."""

  @property
  def changed(self):
    return self.original != self.ported


class Result(object):
  """What a port made: the files (changed or not), the changes, and the TODOs, each TODO also with the line it
  is at in the ported file."""

  def __init__(self, files, changes, todos, report, others=()):
    self.files = files
    self.changes = changes
    self.todos = todos
    self.report = report
    self.others = list(others)  # (path, relative path): the other files of the folders given, copied as they are

  @property
  def changed(self):
    return any(f.changed for f in self.files)


class Port(object):
  """The context every fixer works in."""

  def __init__(self, paths, base=None):
    self.paths = list(paths)
    self.report = scan_paths(paths)
    if self.report.bad_inputs:
      bad = self.report.bad_inputs[0]
      raise UserError('%s: %s' % (bad.path, bad.problem.rstrip('.') + '.'), bad.fix)
    self.base = base or common_base(self.report.files)
    files = []
    for path in self.report.files:
      text, encoding = source_lib.read_source(path)
      try:
        files.append(source_lib.SourceFile(path, text, encoding))
      except cst.ParserSyntaxError as e:
        raise UserError('%s: LibCST cannot parse it (%s).' % (path, str(e).splitlines()[0]),
                        'give Python 3 source that parses (python -m py_compile %s).' % path)
    self.files = files
    self.program = program_lib.Program(files)
    self.analysis = analysis_lib.Analysis(self.program)
    self.edits = collections.OrderedDict((f, edits_lib.Edits(f)) for f in files)
    self.findings = collections.defaultdict(list)
    for finding in self.report.findings:
      self.findings[os.path.abspath(finding.path)].append(finding)
    self.handled = set()
    self.changes = []
    self.todos = []
    self.header_keys = collections.defaultdict(set)
    self.exact_eval = set()  # EstimatorSites whose evaluate() the port pads (rule 9)
    self.new_names = collections.defaultdict(set)

  # --- findings -----------------------------------------------------------------------------------------------

  def findings_at(self, f, line, rule=None, severity=None):
    return [x for x in self.findings.get(os.path.abspath(f.path), ())
            if x.line == line and (rule is None or x.rule == rule) and (severity is None or x.severity == severity)]

  def take(self, f, node_or_line, rule):
    """Marks the findings of `rule` at a node's line as resolved; returns them."""
    line = node_or_line if isinstance(node_or_line, int) else f.line(node_or_line)
    found = self.findings_at(f, line, rule)
    for finding in found:
      self.handled.add(finding)
    return found

  def change(self, f, node, rule, what):
    self.changes.append(Change(f.path, f.line(node), rule, what))

  def todo(self, f, node_or_line, rule, what):
    """A TODO comment above the statement at a node (or line), and the findings of `rule` there taken."""
    line = node_or_line if isinstance(node_or_line, int) else f.line(node_or_line)
    statement = statement_at(f, line) if isinstance(node_or_line, int) else f.statement_of(node_or_line)
    if statement is None:
      return
    self.take(f, line, rule)
    key = (f.path, f.line(statement), rule, what)
    if any((t.path, t.line, t.rule, t.what) == key for t in self.todos):
      return
    self.todos.append(Todo(f.path, f.line(statement), rule, what))
    self.edits[f].comment(statement, edits_lib.todo_comment(rule, what))

  # --- names the port writes ------------------------------------------------------------------------------------

  def new_name(self, f, wanted):
    """`wanted`, or wanted_2, ..., a name the file does not use yet."""
    used = f.names_used() | self.new_names[f]
    name, count = wanted, 1
    while name in used:
      count += 1
      name = '%s_%d' % (wanted, count)
    self.new_names[f].add(name)
    return name

  def tf_v1(self, f):
    """The file's name for the TF 1 API: its `tensorflow.compat.v1` alias, or its `tensorflow` alias (with
    .compat.v1 when the file writes that itself); else an import is added."""
    for local, raw in sorted(f.raw_aliases.items()):
      if raw == 'tensorflow.compat.v1':
        return local
    for local, raw in sorted(f.raw_aliases.items()):
      if raw == 'tensorflow':
        return local + '.compat.v1' if '%s.compat.v1.' % local in f.text else local
    return self.add_import(f, 'tensorflow.compat.v1', 'tf')

  def tf_v2(self, f):
    """The file's name for the TF 2 API (tf.compat.v2: summaries written from host_call)."""
    for local, raw in sorted(f.raw_aliases.items()):
      if raw == 'tensorflow.compat.v2':
        return local
    for local, raw in sorted(f.raw_aliases.items()):
      if raw == 'tensorflow':
        return local + '.compat.v2'
    return self.add_import(f, 'tensorflow.compat.v2', 'tf2')

  def add_import(self, f, module, wanted):
    key = ('import', module)
    for existing in self.header_keys[f]:
      if isinstance(existing, tuple) and existing[:2] == key:
        return existing[2]
    name = wanted if wanted not in f.names_used() else self.new_name(f, wanted)
    self.header_keys[f].add(key + (name,))
    statement = cst.parse_statement('import %s as %s\n' % (module, name))
    self.edits[f].header.insert(sum(1 for k in self.header_keys[f] if isinstance(k, tuple)) - 1, statement)
    return name

  def add_helper(self, f, key, code, rule, why):
    """Adds module-level helper code once per file, with its rule comment."""
    if key in self.header_keys[f]:
      return
    self.header_keys[f].add(key)
    statements = edits_lib.statements(code)
    defined = [s.name.value for s in statements if isinstance(s, cst.FunctionDef)]
    if defined and all(name in f.top_level for name in defined):
      return  # a port of a port: the helpers are there already
    lines = edits_lib.comment_lines(edits_lib.rule_comment(rule, why), 0)
    blank = [cst.EmptyLine()] * (2 if isinstance(statements[0], (cst.FunctionDef, cst.ClassDef)) else 1)
    statements[0] = statements[0].with_changes(leading_lines=blank + [
        cst.EmptyLine(comment=cst.Comment(line)) for line in lines])
    self.edits[f].add_header(statements)

  # --- the port -------------------------------------------------------------------------------------------------

  def run(self):
    from estimator_tpu.porting.rewrite import contrib  # pylint: disable=g-import-not-at-top
    from estimator_tpu.porting.rewrite import estimators
    from estimator_tpu.porting.rewrite import inputs
    from estimator_tpu.porting.rewrite import model_fns
    if not self.analysis.estimators and not any(x.severity == REQUIRED for x in self.report.findings):
      raise UserError('no Estimator is built in %s: nothing to port.' % ', '.join(self.report.files) if len(
          self.report.files) < 4 else 'no Estimator is built in the %d files given: nothing to port.'
          % len(self.report.files),
          'give the files that build the tf.estimator.Estimator (and those of its model_fn and input_fns).')
    contrib.fix(self)
    inputs.plan_exact_evaluation(self)
    estimators.fix(self)
    inputs.fix(self)
    model_fns.fix(self)
    for f in self.files:
      for finding in self.findings.get(os.path.abspath(f.path), ()):
        if finding.severity == REQUIRED and finding not in self.handled:
          self.todo(f, finding.line, finding.rule, what_to_do(finding.message))
    return self.result()

  def result(self):
    files = []
    for f in self.files:
      edits = self.edits[f]
      ported = f.text if edits.empty() else edits.apply()
      files.append(PortedFile(f.path, os.path.relpath(os.path.abspath(f.path), self.base), f.text, ported,
                              f.encoding))
    return Result(files, sorted(self.changes), sorted(self.todos), self.report, self.other_files())

  def other_files(self):
    """The files in the folders given that are not Python (data, configuration): a copy of the program has them."""
    others = []
    for path in self.paths:
      if not os.path.isdir(path):
        continue
      for root, folders, names in os.walk(path):
        folders[:] = sorted(f for f in folders if not f.startswith('.') and f not in files.SKIPPED_FOLDERS)
        for name in sorted(names):
          if not name.endswith(('.py', '.pyc')) and not name.startswith('.'):
            full = os.path.join(root, name)
            others.append((full, os.path.relpath(os.path.abspath(full), self.base)))
    return others


def what_to_do(message):
  """The fix part of a finding's message: what follows ' -> ', up to its reason."""
  fix = message.split(' -> ', 1)[1] if ' -> ' in message else message
  fix = fix.split(': ', 1)[0] if len(fix.split(': ', 1)[0]) > 30 else fix
  return fix.rstrip('.') + '.'


def statement_at(f, line):
  """The innermost statement that starts on `line`, or that spans it."""
  best = None
  for node, position in f.positions.items():
    if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) and \
        position.start.line <= line <= position.end.line:
      if isinstance(node, cst.BaseCompoundStatement) and line > f.line(node.body) - 1 and \
          f.line(node.body) <= line:
        continue  # in the body of a compound statement: an inner one is meant
      if best is None or f.line(node) >= f.line(best):
        best = node
  return best


def common_base(paths):
  """The folder the ported files keep their places under: the current folder when every file is under it, else
  the files' deepest common folder."""
  absolute = [os.path.abspath(p) for p in paths]
  here = os.getcwd()
  if all(p.startswith(here + os.sep) for p in absolute):
    return here
  return os.path.commonpath([os.path.dirname(p) for p in absolute]) if absolute else here
