"""Findings, their severities, and the text and JSON reports."""
import collections
import json

from estimator_tpu import rules

# REQUIRED: the code fails, or silently does something else, on a TPU. ADVICE: it runs, but the port should
# change it. UNKNOWN: static analysis cannot tell; the message says what to look at.
REQUIRED = 'required'
ADVICE = 'advice'
UNKNOWN = 'cannot tell statically'



class Finding(collections.namedtuple('Finding', ['path', 'line', 'rule', 'severity', 'message', 'code', 'anchor'])):
  """One finding. rule: the number of the TPU rule it is about (estimator_tpu/rules.py, docs/MIGRATION.md); code:
  what kind of finding it is (codes.py), for programs; message: for people; anchor: the node it is at
  (program/anchors.py). Every message reads `problem -> what to do: why`."""

  @property
  def key(self):
    """What makes two findings one: the same place, rule, verdict and words (the same code reached twice)."""
    return (self.path, self.line, self.rule, self.severity, self.message)

  @property
  def identity(self):
    """What makes two findings one finding: its key at the same node (two input_fns in one statement, each without
    params, are two findings with the same words at one line)."""
    where = (self.anchor.line, self.anchor.column) if self.anchor is not None else ()
    return self.key + where

  @property
  def fix(self):
    """What to do, from the message: the part after ' -> ', up to its reason."""
    fix = self.message.split(' -> ', 1)[1] if ' -> ' in self.message else self.message
    reason = _reason_at(fix)
    fix = fix[:reason] if reason is not None and reason > 30 else fix
    return fix.rstrip('.') + '.'


def _reason_at(text):
  """Where the first ': ' outside brackets and `code` is (the reason after a fix), else None: the colon of a
  lambda or a dict the fix shows is part of its code."""
  depth, quoted = 0, False
  for index, char in enumerate(text):
    if char == '`':
      quoted = not quoted
    elif not quoted and char in '([{':
      depth += 1
    elif not quoted and char in ')]}':
      depth = max(0, depth - 1)
    elif not quoted and depth == 0 and text.startswith(': ', index):
      return index
  return None


EXIT_NOTHING_REQUIRED = 0
EXIT_REQUIRED = 1
EXIT_BAD_INPUT = 2  # wins over EXIT_REQUIRED: a partial report must not look complete


class Report(object):
  """What one scan found: sorted findings, the files read, and the input it could not read."""

  def __init__(self, findings, files, bad_inputs):
    first = collections.OrderedDict()
    for finding in findings:
      first.setdefault(finding.identity, finding)
    # One place, one rule, one verdict: a `cannot tell` beside a definite finding of the same rule on the same line
    # (the same code reached two ways) would contradict it.
    definite = set((f.path, f.line, f.rule) for f in first.values() if f.severity != UNKNOWN)
    unique = [f for f in first.values() if f.severity != UNKNOWN or (f.path, f.line, f.rule) not in definite]
    self.findings = sorted(unique, key=lambda f: f.key)
    self.files = list(files)
    self.bad_inputs = list(bad_inputs)

  def count(self, severity):
    return sum(1 for finding in self.findings if finding.severity == severity)

  def exit_status(self):
    if self.bad_inputs:
      return EXIT_BAD_INPUT
    return EXIT_REQUIRED if self.count(REQUIRED) else EXIT_NOTHING_REQUIRED

  def summary(self):
    return collections.OrderedDict([
        ('files', len(self.files)),
        ('required', self.count(REQUIRED)),
        ('advice', self.count(ADVICE)),
        ('cannot_tell', self.count(UNKNOWN)),
        ('unreadable', len(self.bad_inputs)),
        ('exit_status', self.exit_status()),
    ])


def format_text(report):
  """One line per finding, `path:line: [severity] rule N (name): message`, then one summary line; nothing when no
  file could be read (the error lines say why)."""
  if not report.files and report.bad_inputs:
    return ''
  lines = []
  for finding in report.findings:
    lines.append('%s:%d: [%s] %s: %s' % (finding.path, finding.line, finding.severity, rules.cite(finding.rule),
                                         finding.message))
  summary = report.summary()
  lines.append('%d file(s) checked: %d required, %d advice, %d cannot tell statically%s.' % (
      summary['files'], summary['required'], summary['advice'], summary['cannot_tell'],
      ', %d unreadable' % summary['unreadable'] if summary['unreadable'] else ''))
  return '\n'.join(lines) + '\n'


def format_bad_input(bad):
  return 'error: %s: %s Fix: %s' % (bad.path, bad.problem, bad.fix)


def format_json(report):
  findings = [collections.OrderedDict([
      ('path', f.path), ('line', f.line), ('rule', f.rule), ('name', rules.rule(f.rule).name),
      ('title', rules.rule(f.rule).title), ('severity', f.severity), ('code', f.code), ('message', f.message),
      ('fix', f.fix), ('anchor', collections.OrderedDict([('line', f.anchor.line), ('column', f.anchor.column),
                                                          ('kind', f.anchor.kind), ('name', f.anchor.name)]))])
      for f in report.findings]
  errors = [collections.OrderedDict([('path', b.path), ('problem', b.problem), ('fix', b.fix)])
            for b in report.bad_inputs]
  document = collections.OrderedDict([('findings', findings), ('errors', errors), ('summary', report.summary())])
  return json.dumps(document, indent=2) + '\n'
