"""What a port writes: OUT_DIR with every file of the program (all of them or none), a unified diff, and the
summary of the changes made and the TODOs left."""
import collections
import difflib
import os
import shutil
import tempfile

from estimator_tpu import rules
from estimator_tpu.runtime.errors import UserError

# A TODO comment starts with this; its text follows on the same line, or on the next when it is too long to fit.
TODO_MARK = 'TODO(tpu port, rule %d):'


def check_out_dir(out_dir):
  """OUT_DIR must not exist yet, or be an empty folder: a port never mixes with other files."""
  if os.path.exists(out_dir):
    if not os.path.isdir(out_dir):
      raise UserError('%s exists and is not a folder.' % out_dir, 'give --write a new or empty folder.')
    if os.listdir(out_dir):
      raise UserError('%s exists and is not empty.' % out_dir,
                      'give --write a new or empty folder (the port writes every file of the program there).')
  parent = os.path.dirname(os.path.abspath(out_dir))
  if not os.path.isdir(parent):
    raise UserError('%s: its folder %s does not exist.' % (out_dir, parent), 'create %s first.' % parent)


def write(result, out_dir):
  """Writes every file of the port under out_dir, at its place relative to the program's base folder. The files
  are written into a temporary folder beside out_dir first, which then becomes out_dir: an error leaves nothing
  half-written."""
  check_out_dir(out_dir)
  parent = os.path.dirname(os.path.abspath(out_dir))
  staging = tempfile.mkdtemp(prefix='.port-', dir=parent)
  try:
    for f in result.files:
      target = os.path.join(staging, f.relative)
      os.makedirs(os.path.dirname(target), exist_ok=True)
      with open(target, 'w', encoding=f.encoding, newline='') as handle:
        handle.write(f.ported)
    for path, relative in result.others:
      target = os.path.join(staging, relative)
      os.makedirs(os.path.dirname(target), exist_ok=True)
      shutil.copy2(path, target)
    if os.path.isdir(out_dir):
      os.rmdir(out_dir)  # empty, checked above
    os.rename(staging, out_dir)
  except BaseException:
    shutil.rmtree(staging, ignore_errors=True)
    raise


def diff(result):
  """The unified diff of every changed file (a/ the original, b/ the port)."""
  chunks = []
  for f in result.files:
    if f.changed:
      chunks.extend(difflib.unified_diff(f.original.splitlines(True), f.ported.splitlines(True),
                                         'a/' + f.relative, 'b/' + f.relative))
  text = ''.join(chunks)
  return text if not text or text.endswith('\n') else text + '\n'


def todo_lines(result):
  """[(relative path, line in the ported file, rule, what)] of every TODO the port wrote, in file order."""
  found = []
  for f in result.files:
    lines = f.ported.splitlines()
    for number, line in enumerate(lines, 1):
      stripped = line.strip()
      for rule in rules.BY_NUMBER:
        mark = '# ' + TODO_MARK % rule
        if stripped.startswith(mark):
          text = [stripped[len(mark):].strip()] if stripped[len(mark):].strip() else []
          for following in lines[number:]:  # the comment's continuation lines
            following = following.strip()
            if not following.startswith('#') or following.startswith(('# TODO(', '# TPU rule')):
              break
            text.append(following[1:].strip())
          found.append((f.relative, number, rule, ' '.join(text)))
  return found


def todo_coverage(text):
  """{rule: set of lines} the `# TODO(tpu port, rule N)` comments of a ported file stand above: every line of a
  simple statement, the header lines of a compound one (def ...: up to its body)."""
  import libcst as cst  # pylint: disable=g-import-not-at-top
  from libcst import metadata  # pylint: disable=g-import-not-at-top
  wrapper = metadata.MetadataWrapper(cst.parse_module(text))
  positions = wrapper.resolve(metadata.PositionProvider)
  covered = collections.defaultdict(set)
  for node, position in positions.items():
    if not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
      continue
    for line in getattr(node, 'leading_lines', ()):
      comment = line.comment.value if line.comment is not None else ''
      for rule in rules.BY_NUMBER:
        if comment.startswith('# ' + TODO_MARK % rule):
          if isinstance(node, cst.SimpleStatementLine):
            last = position.end.line
          else:
            first_inner = node.body.body[0] if getattr(node.body, 'body', None) else None
            last = positions[first_inner].start.line - 1 if first_inner is not None else position.start.line
          covered[rule].update(range(position.start.line, last + 1))
  return covered


def summary(result, out_dir=None):
  """What was changed, rule by rule, and every TODO left, with its place in the ported files."""
  lines = []
  by_rule = collections.Counter(change.rule for change in result.changes)
  changed = [f for f in result.files if f.changed]
  where = ' in %s' % out_dir if out_dir else ''
  others = ' (and %d other file(s) copied)' % len(result.others) if result.others and out_dir else ''
  lines.append('Ported %d of %d Python file(s)%s%s: %d change(s) made (%s).' % (
      len(changed), len(result.files), where, others, len(result.changes),
      ', '.join('%s: %d' % (rules.cite(rule), count) for rule, count in sorted(by_rule.items())) or 'none'))
  for change in result.changes:
    lines.append('  %s:%d: %s: %s' % (change.path, change.line, rules.cite(change.rule), change.what))
  todos = todo_lines(result)
  if todos:
    lines.append('%d TODO(s) left for a human decision (the port report still lists them as required):'
                 % len(todos))
    for path, number, rule, what in todos:
      lines.append('  %s:%d: TODO(tpu port, rule %d): %s' % (os.path.join(out_dir, path) if out_dir else path,
                                                           number, rule, what))
  else:
    lines.append('No TODO left: the port report requires nothing more.')
  return '\n'.join(lines) + '\n'
