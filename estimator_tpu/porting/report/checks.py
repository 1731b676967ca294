"""What every check shares: where findings go, and which code runs only on (or only off) the TPU."""
import ast

from estimator_tpu.porting.program import anchors
from estimator_tpu.porting.program import reachable
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.report import codes
from estimator_tpu.porting.report import findings


# Why categorical columns over integer ids cannot run on the TPU (rule 4): (whose columns, which).
ID_COLUMNS_WHY = ('%s include categorical columns over integer ids (%s): inside the model the feature column turns '
                  'the ids into a SparseTensor with a one-argument tf.where, whose shape depends on the data, which '
                  'XLA cannot compile for the TPU -> feed the ids as a dense [batch, n] tensor and look them up in a '
                  'model_fn with tf.nn.embedding_lookup (or tf.one_hot), or use tf.tpu.experimental.embedding_column.')


# Findings made once per statement: premade estimators written in one statement (`{'wide': LinearClassifier(...),
# 'deep': DNNClassifier(...)}[model_type]`) are one model_fn to write, whichever the run picks.
ONE_PER_STATEMENT = frozenset(['premade-estimator', 'premade-id-columns', 'premade-string-columns'])


class Collector(object):
  """Gathers findings; one finding per (file, line, rule, message)."""

  def __init__(self, program):
    self.program = program
    self.findings = []
    self.index = None  # program/estimators.Index, once estimator_checks.check_call_sites made it
    self.strings_on_device = False  # a model on the TPU looks strings up (model_fns, estimators)
    self.unsure = None  # while set, `required` findings become `cannot tell`, prefixed with this condition
    self.returns_tensors = {}  # (module, return statement) -> modes of the input_fns returning tensors there
    self.metric_groups = set()  # (module, function, name) of the dicts whose MetricSpecs already gave a finding

  def add(self, module, node, code, severity, message):
    """A finding of kind `code` (codes.py, which gives its rule) at `node` of `module`; none in code the program
    cannot run (program/reachable.py)."""
    if reachable.in_dead_code(self.program, module, node):
      return
    if severity == findings.REQUIRED and self.unsure:
      severity, message = findings.UNKNOWN, '%s: %s' % (self.unsure, message)
    where = anchors.anchor(self.program, module, node)
    line = statement_line(module, node)
    if code in ONE_PER_STATEMENT and any((f.path, f.line, f.code) == (module.path, line, code) for f in self.findings):
      return  # the premade estimators one statement writes (a dict the program picks one from) are one change
    self.findings.append(findings.Finding(module.path, line, codes.rule_of(code), severity,
                                          message, code, where))

  def required(self, module, node, code, message):
    self.add(module, node, code, findings.REQUIRED, message)

  def advice(self, module, node, code, message):
    self.add(module, node, code, findings.ADVICE, message)

  def unknown(self, module, node, code, message):
    self.add(module, node, code, findings.UNKNOWN, message)


def statement_line(module, node):
  """The first line of the statement `node` is in, where a finding is placed (docs/PORT_REPORT.md): a call nested
  in a statement that spans lines (`Estimator(model_fn,\n    config=RunConfig(...))`) is at the statement's first
  line, where the user reads the statement; a def or a compound statement's header is at its own line."""
  current = module.statement_of(node)
  if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and current.decorator_list:
    return _header_line(module, current)
  return getattr(current if current is not None else node, 'lineno', getattr(node, 'lineno', 1))


def _header_line(module, definition):
  """The line of a decorated def's or class's own `def`/`class`: Python 3.8+'s ast gives it, 3.7's gives the first
  decorator's line, so the same finding would move a line between the two TensorFlows' Pythons."""
  lines = (module.text or '').splitlines()
  keyword = 'class' if isinstance(definition, ast.ClassDef) else 'def'
  for number in range(max(d.lineno for d in definition.decorator_list), len(lines) + 1):
    words = lines[number - 1].split()
    if words[:1] == [keyword] or words[:2] == ['async', keyword]:
      return number
  return definition.lineno


def describe_fn(fn):
  """'model_fn()' or 'a lambda' for messages."""
  return 'a lambda' if isinstance(fn, ast.Lambda) else '%s()' % fn.name


def accepts_params(target):
  """Whether TPUEstimator could pass `params` to this callable (a callables.Fn): it needs a parameter named params
  that functools.partial did not already bind. **kwargs does not count: TPUEstimator asks for the name."""
  node = target.node
  names = syntax.positional_names(node)[target.bound_positional:] + [a.arg for a in node.args.kwonlyargs]
  return 'params' in names and 'params' not in target.bound_keywords


# Names only Python 2 programs use: there `/` of two ints is an int, unless `from __future__ import division`.
PYTHON2_NAMES = frozenset(['xrange', 'raw_input', 'unicode', 'iteritems', 'itervalues', 'basestring'])


def true_division(module):
  """Whether `/` divides to a float in this module: Python 3 source, or Python 2 with the future import."""
  if getattr(module, 'true_division', None) is None:
    module.true_division = _true_division(module)
  return module.true_division


def _true_division(module):
  tree = module.tree
  if any(isinstance(node, ast.ImportFrom) and node.module == '__future__' and
         any(alias.name == 'division' for alias in node.names) for node in tree.body):
    return True
  if module.python2:
    return False
  return not any((isinstance(node, ast.Name) and node.id in PYTHON2_NAMES) or
                 (isinstance(node, ast.Attribute) and node.attr in PYTHON2_NAMES) for node in ast.walk(tree))
