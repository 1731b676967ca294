"""One port: the program read once (estimator_tpu/porting/program), the port report's findings on that reading,
the fixers' edits of its LibCST trees, and a TODO at every required finding no fixer resolved.

Each fixer (rewrite/fixers/) takes facts of the reading (the estimators, their model_fns and input_fns, the batch
sites) and the findings that require a change there, by code at the node they are anchored at, and edits the
LibCST node found at that place (located.py). A required finding no fixer takes becomes
`# TODO(tpu port, rule N): what to do` above its statement.
"""
import ast
import collections
import os

import libcst as cst

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import callables
from estimator_tpu.porting.program import estimators
from estimator_tpu.porting.program import files as files_lib
from estimator_tpu.porting.program import params as params_lib
from estimator_tpu.porting.program import reading
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import uses as uses_lib
from estimator_tpu.porting.program import values
from estimator_tpu.porting.report import REQUIRED
from estimator_tpu.porting.report import codes as codes_lib
from estimator_tpu.porting.report import scan
from estimator_tpu.porting.rewrite import changes
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import fixers
from estimator_tpu.porting.rewrite import located
from estimator_tpu.porting.rewrite import plans as plans_lib
from estimator_tpu.runtime.errors import UserError

# Rounds of holding estimators back: each round can hold back those sharing a model_fn with the last.
MAX_HOLD_ROUNDS = 4


class Port(object):
  """The context every fixer works in: the reading, the findings, the files being edited, what was done."""

  def __init__(self, paths, base=None, held_back=()):
    """held_back: the keys (site_key) of estimators to leave as they are: a change they need first stays a
    TODO (port() finds them)."""
    self.paths = list(paths)
    program, bad = reading.read(paths)
    if bad:
      raise UserError('%s: %s' % (bad[0].path, bad[0].problem.rstrip('.') + '.'), bad[0].fix)
    python2 = [m.path for m in program.modules if m.python2]
    if python2:
      raise UserError('%s is Python 2 source: the port report reads it, but a port is written in Python 3.'
                      % python2[0], 'convert it first (python -m lib2to3 -w %s, on a copy), then port the '
                      'converted files.' % python2[0])
    self.program = program
    self.report = scan.check(program)
    self.uses = uses_lib.read_uses(program)  # the facts the report read
    self.base = base or common_base(self.report.files)
    self.files = []
    for module in program.modules:
      try:
        self.files.append(located.LocatedFile(module))
      except cst.ParserSyntaxError as e:
        raise UserError('%s: LibCST cannot parse it (%s).' % (module.path, str(e).splitlines()[0]),
                        'give Python 3 source that parses (python -m py_compile %s).' % module.path)
    self._file_of = dict((id(f.module), f) for f in self.files)
    self.edits = collections.OrderedDict((f, edits_lib.Edits(f)) for f in self.files)
    self._at_anchor = collections.defaultdict(list)  # (path, line, column) -> findings anchored there
    for finding in self.report.findings:
      self._at_anchor[(os.path.abspath(finding.path), finding.anchor.line, finding.anchor.column)].append(finding)
    self.handled = set()  # the findings a change or a TODO answers
    self.left = set()  # those a TODO answers: left for a human
    self.changes = []
    self.todos = []
    self.header_keys = collections.defaultdict(set)
    self.new_names = collections.defaultdict(set)
    self.estimators = []  # the estimator Sites the port changes (TPUEstimators: their model_fns only)
    self.held_back = collections.OrderedDict()  # estimator Site -> why it stays a plain Estimator
    for site in self.uses.index.sites.values():
      if site.kind == 'tpu' or (site.kind == 'estimator' and apis.is_core_estimator(site.canonical)):
        asked = site.kind == 'tpu' or self.findings(site.module, site.call, fixers.tpu_estimator.ESTIMATOR_CODES)
        why = held_back.get(site_key(site)) if held_back else None
        why = why or (self._params_refused(site) if site.kind == 'estimator' and asked else None)
        if why:
          self.held_back[site] = why
        elif asked:
          self.estimators.append(site)
        # else: a plain Estimator the report asks nothing of (it runs off the TPU and shares no model_fn the port
        # changes): neither it, its model_fn nor its input_fns change
    self.settings = {}  # what fixers/tpu_estimator.py added to each file
    self.padded_evaluations = []  # the InputPlans of the evaluations fixers/exact_evaluation.py pads
    self.exact_eval = set()  # the estimator Sites whose evaluate() it pads (their model_fns weight, rule 9)
    self.plans = plans_lib.Plans(self)
    self.memo = {}  # what fixers record across the model_fns and files they visit
    self._wrapped_sites = None  # {site: wrapper}, read once (_wrapped)
    # Site made a TPUEstimator -> the batch size keywords (train/eval/predict_batch_size) that stayed a TODO for a mode
    # it runs
    self.untraced_batches = {}

  def _params_refused(self, site):
    """Why TPUEstimator would refuse the params this Estimator is given (a key it reserves, not a dict), or None."""
    params = self.uses.params.get(id(site.call))
    if params is None:
      return None
    reserved = [key for key in params_lib.RESERVED_KEYS if params.entries.get(key)]
    if reserved:
      return 'its params hold %s, which TPUEstimator reserves: take that key out of params first (see its TODO)' % (
          ' and '.join(repr(k) for k in reserved))
    if params_lib.not_a_mapping(params):
      return 'its params are not a dict, which TPUEstimator needs: make them one first (see its TODO)'
    return None

  def _check_model_fns_given(self):
    """A model_fn in a file of the project that was not given is one line, before anything is changed: the port
    would make its estimator a TPUEstimator and leave the model_fn unported."""
    for argument in self.uses.model_fn_arguments:
      if argument.site not in self.estimators or argument.site.kind != 'estimator':
        continue
      for target in argument.targets:
        if isinstance(target, callables.Unresolved) and target.left_out:
          name, path = target.left_out
          raise UserError('%s:%d: the model_fn comes from %s (%s), which was not given: the port would build a '
                          'TPUEstimator around a model_fn it cannot change.' % (
                              argument.module.path, argument.call.lineno, name, path),
                          'give that file too (add %s to the paths).' % path)

  def blocked(self):
    """After run(): {site_key: why} of the estimators made TPUEstimators whose RunConfig stayed one TPUEstimator
    refuses (a contrib RunConfig, a subclass, one the port could not rebuild): they must stay as they were."""
    blocked = {}
    refused_config = any(f.code == 'run-config-not-tpu' and (f in self.left or f not in self.handled)
                         for f in self.report.findings)
    for site in self.estimators:
      if site.kind != 'estimator':
        continue
      if refused_config and syntax.argument(site.call, 2, 'config') is not None:
        blocked[site_key(site)] = ('its RunConfig stays one TPUEstimator refuses: port the RunConfig first (see its '
                                   'TODO)')
      if syntax.has_star_args(site.call):
        # Estimator(**keys): the port cannot add TPUEstimator's arguments there (a TODO), so it stays plain.
        blocked[site_key(site)] = ('its arguments come from *args/**kwargs, where the port cannot add '
                                   'TPUEstimator\'s: build the TPUEstimator by hand first (see its TODO)')
      if site in self.untraced_batches:
        # TPUEstimator trains with train_batch_size=None neither on a TPU nor on the CPU (its step logging
        # multiplies by it: TypeError); it hands an evaluation or prediction input_fn params['batch_size'] only from
        # eval/predict_batch_size (KeyError on the CPU) and refuses those modes on a TPU without it (tpu_context.py).
        blocked[site_key(site)] = ('its %s could not be traced (the global batch of the input_fn of that mode), '
                                   'and TPUEstimator runs no mode without its batch size (it hands that input_fn '
                                   'params[\'batch_size\'] from it)' % ' and '.join(self.untraced_batches[site]))
      if self._strategy_in_config(site):
        # TF 1.15's Estimator._train_model_distributed calls _call_input_fn(input_fn, mode, input_context), which
        # TPUEstimator's override does not take (TypeError): with the strategy the CPU runs, it cannot train.
        blocked[site_key(site)] = ('its RunConfig carries a distribution strategy, with which a TPUEstimator cannot '
                                   'train on TF 1.15 (and which takes training off the TPU loop): take the strategy '
                                   'out first')
      if site in self._wrapped():
        # add_metrics(estimator, ...) builds a plain Estimator around it, which runs the ported model_fn and
        # input_fn without TPUEstimator's params (no batch_size) and refuses its TPUEstimatorSpec in evaluation.
        blocked[site_key(site)] = ('`%s` wraps it in a plain Estimator: move those metrics into model_fn and drop '
                                   'the wrapper first (see its TODO)' % self._wrapped()[site])
      without = self.plans.inputs_without_params(site) or self._input_fn_left_without_params(site)
      if without:
        blocked[site_key(site)] = ('its input_fn %s takes no params, which TPUEstimator refuses: write an '
                                   'input_fn(params) first (see its TODO)' % without)
    # A model_fn shared with an Estimator that stays plain stays as it is (a plain Estimator refuses a
    # TPUEstimatorSpec), and so does every estimator that runs it.
    kept = set(id(t.node) for site in list(self.held_back) + [s for s in self.estimators if site_key(s) in blocked]
               for t in self.uses.model_fns_of(site))
    for site in self.estimators:
      if site.kind == 'estimator' and site_key(site) not in blocked and \
          any(id(t.node) in kept for t in self.uses.model_fns_of(site)):
        blocked[site_key(site)] = ('its model_fn is also run by an Estimator left plain, which would refuse the '
                                   'ported model_fn\'s TPUEstimatorSpec: port that estimator first (see its TODO)')
    return blocked

  def _strategy_in_config(self, site):
    """Whether the RunConfig an estimator is given holds a distribution strategy (train_distribute=... in the
    RunConfig or in a .replace of it) that is not None."""
    config = syntax.argument(site.call, 2, 'config')
    if config is None:
      return False
    for origin in values.origins(self.program, site.module, site.fn, config):
      for node in ast.walk(origin.node):
        if isinstance(node, ast.Call) and any(
            k.arg in apis.STRATEGY_KEYWORDS and not (syntax.is_literal(k.value) and syntax.literal(k.value) is None)
            for k in node.keywords):
          return True
    return False

  def _wrapped(self):
    """{site: the wrapper's name} of the estimators an add_metrics/forward_features call wraps."""
    if self._wrapped_sites is None:
      index = self.uses.index
      self._wrapped_sites = {}
      for module, fn, call in index.wrappers:
        inner = estimators.wrapped(self.program, module, fn, call)
        for site in index.sites_of(module, fn, inner) if inner is not None else []:
          self._wrapped_sites[site] = syntax.render(call.func)
    return self._wrapped_sites

  def _input_fn_left_without_params(self, site):
    """An input_fn of the program that feeds this estimator and still takes no params after the run (its change
    stayed a TODO: a use the port does not change hands it over, an Experiment's), as its source name; else None."""
    def left(module, node, code):
      return [f for f in self.findings(module, node, (code,)) if f not in self.handled or f in self.left]
    for target in self.uses.input_fn_targets_of(site):
      if isinstance(target, callables.Fn) and (
          left(target.module, target.node, 'input-fn-without-params') or
          # functools.partial(input_fn, params=...): the partial leaves no params either
          (target.partial and left(target.partial[0], target.partial[1], 'input-fn-partial-binds-params'))):
        return '`%s`' % (target.node.name if not isinstance(target.node, ast.Lambda) else 'lambda')
    return None

  def file_of(self, module):
    """The LocatedFile of a module of the program."""
    return self._file_of[id(module)]

  # --- findings -----------------------------------------------------------------------------------------------

  def findings(self, module, node, codes=None, severity=None):
    """The report's findings anchored at an ast node of `module`, of the given codes and severity."""
    key = (os.path.abspath(module.path), getattr(node, 'lineno', 1), module.column_of(node))
    return [f for f in self._at_anchor.get(key, ()) if (codes is None or f.code in codes) and
            (severity is None or f.severity == severity)]

  def codes_of_rule(self, rule):
    """Every finding code of a TPU rule: what a TODO of that rule at a node answers."""
    return tuple(c.code for c in codes_lib.CODES if c.rule == rule)

  def take(self, module, node, codes):
    """Marks the findings of `codes` at a node as resolved; returns them."""
    found = self.findings(module, node, codes)
    self.handled.update(found)
    return found

  def change(self, f, node, rule, what):
    """Records a change at a LibCST node of the LocatedFile f (or at an ast node of its module)."""
    if not isinstance(node, cst.CSTNode):
      node = f.node(node)
    self.changes.append(changes.Change(f.path, f.line(node), rule, what))

  def todo(self, module, node, codes, rule, what):
    """A TODO comment above the statement of an ast node, and the findings of `codes` there taken."""
    f = self.file_of(module)
    try:
      statement = f.statement_of(f.node(node))
    except located.NotLocated:
      statement = f.statement_at(getattr(node, 'lineno', 1))
    self.left.update(self.take(module, node, codes))
    self.todo_at(f, statement, rule, what)

  def todo_at(self, f, statement, rule, what):
    """A TODO comment above a LibCST statement of f, once per statement, rule and text."""
    if statement is None:
      return
    todo = changes.Todo(f.path, f.line(statement), rule, what)
    if todo in self.todos:
      return
    self.todos.append(todo)
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
    local = _imported_as(f, 'tensorflow.compat.v1')
    if local:
      return local
    local = _imported_as(f, 'tensorflow')
    if local:
      # A program that writes compat.v1 anywhere is TF 2 code (or meant to run there), where tf.estimator has no
      # tpu module: tf.compat.v1.estimator.tpu serves TF 1.15 and 2.x alike.
      compat = '%s.compat.v1.' % local in f.text or any('.compat.v1.' in other.text for other in self.files)
      return local + '.compat.v1' if compat else local
    return self.add_import(f, 'tensorflow.compat.v1', 'tf')

  def tf_v2(self, f):
    """The file's name for the TF 2 API (tf.compat.v2: summaries written from host_call)."""
    local = _imported_as(f, 'tensorflow.compat.v2')
    if local:
      return local
    local = _imported_as(f, 'tensorflow')
    if local:
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
    if defined and all(name in f.module.top_level for name in defined):
      return  # a port of a port: the helpers are there already
    lines = edits_lib.comment_lines(edits_lib.rule_comment(rule, why), 0)
    blank = [cst.EmptyLine()] * (2 if isinstance(statements[0], (cst.FunctionDef, cst.ClassDef)) else 1)
    statements[0] = statements[0].with_changes(leading_lines=blank + [
        cst.EmptyLine(comment=cst.Comment(line)) for line in lines])
    self.edits[f].add_header(statements)

  # --- the port -------------------------------------------------------------------------------------------------

  def run(self, only=None):
    """The port: every fixer in order, then a TODO at each required finding left. `only`: run just these fixers
    (each a function of fixers.FIXERS), and leave no TODO for the rest (a fixer's own test)."""
    if not self.estimators and not any(x.severity == REQUIRED for x in self.report.findings):
      raise UserError('no Estimator is built in %s: nothing to port.' % ', '.join(self.report.files) if len(
          self.report.files) < 4 else 'no Estimator is built in the %d files given: nothing to port.'
          % len(self.report.files),
          'give the files that build the tf.estimator.Estimator (and those of its model_fn and input_fns).')
    if only is None:
      self._check_model_fns_given()
    for fixer in only or fixers.FIXERS:
      fixer(self)
    for site, why in self.held_back.items():
      self.todo(site.module, site.call, fixers.tpu_estimator.ESTIMATOR_CODES, 1, 'left a plain Estimator: %s; then make it a TPUEstimator' % why)
    for f in self.files if only is None else ():
      for finding in self.report.findings:
        if finding.path == f.path and _to_do(finding) and finding not in self.handled:
          # One TODO per statement and rule, saying each different fix its required findings ask for.
          same = [x for x in self.report.findings if (x.path, x.line, x.rule) == (finding.path, finding.line,
                                                                                    finding.rule)]
          self.handled.update(same)
          self.left.update(same)
          fixes = [x.fix.rstrip('.') for x in same if _to_do(x)]
          self.todo_at(f, f.statement_at(finding.line), finding.rule,
                       '; '.join(fix for i, fix in enumerate(fixes) if fix not in fixes[:i]) + '.')
    return self.result()

  def result(self):
    ported = []
    for f in self.files:
      edits = self.edits[f]
      try:
        text = f.text if edits.empty() else edits.apply()
      except Exception as e:  # pylint: disable=broad-except
        # An edit LibCST refuses is the port's own fault: one line for it, and no file of the port is written
        # (the others may depend on this one's changes).
        raise changes.PortFailed('%s: the port could not apply its edits (%s: %s).' % (
            f.path, type(e).__name__, (str(e).strip().splitlines() or [''])[0]))
      ported.append(changes.PortedFile(f.path, os.path.relpath(os.path.abspath(f.path), self.base), f.text, text,
                                       f.encoding))
    return changes.Result(ported, sorted(self.changes), sorted(self.todos), self.report, self.other_files())

  def other_files(self):
    """The files in the folders given that are not Python (data, configuration), and the __init__.py of the
    packages the files given are in: a copy of the program has them."""
    others = []
    ported = set(os.path.abspath(f.path) for f in self.files)
    for path in sorted(ported):
      folder = os.path.dirname(path)
      while folder.startswith(self.base + os.sep):
        init = os.path.join(folder, '__init__.py')
        if os.path.isfile(init) and init not in ported and (init, os.path.relpath(init, self.base)) not in others:
          others.append((init, os.path.relpath(init, self.base)))
        folder = os.path.dirname(folder)
    for path in self.paths:
      if not os.path.isdir(path):
        continue
      for root, folders, names in os.walk(path):
        folders[:] = sorted(f for f in folders if not f.startswith('.') and f not in files_lib.SKIPPED_FOLDERS)
        for name in sorted(names):
          if not name.endswith(('.py', '.pyc')) and not name.startswith('.'):
            full = os.path.join(root, name)
            others.append((full, os.path.relpath(os.path.abspath(full), self.base)))
    return others


def site_key(site):
  """An estimator Site's place, the same in every reading of the program."""
  return (os.path.abspath(site.module.path), site.call.lineno, site.call.col_offset)


def port(paths, base=None):
  """The port of a program: every change it can make whose prerequisites it makes too. An estimator whose
  RunConfig stayed one TPUEstimator refuses is left a plain Estimator, and the program ported again without it."""
  current = Port(paths, base)
  result = current.run()
  held_back = {}
  for _ in range(MAX_HOLD_ROUNDS):
    blocked = current.blocked()
    if not blocked:
      return result
    held_back.update(blocked)  # holding one back can hold back another (a model_fn they share)
    current = Port(paths, base, held_back=held_back)
    result = current.run()
  return result


def _imported_as(f, module):
  """The first (alphabetically) of the names f's imports give `module`, or None."""
  return next((local for local, raw in sorted(f.module.written_imports.items()) if raw == module), None)


def common_base(paths):
  """The folder the ported files keep their places under: the current folder when every file is under it, else
  the files' deepest common folder, above the package it is part of (official/resnet/x.py and official/utils/y.py
  keep `official/`, which their imports name)."""
  absolute = [os.path.abspath(p) for p in paths]
  here = os.getcwd()
  if all(p.startswith(here + os.sep) for p in absolute):
    return here
  if not absolute:
    return here
  base = os.path.commonpath([os.path.dirname(p) for p in absolute])
  while os.path.isfile(os.path.join(base, '__init__.py')) and os.path.dirname(base) != base:
    base = os.path.dirname(base)
  return base


def _to_do(finding):
  """Whether a finding the port did not handle leaves a TODO: a required one, and a RunConfig written inside the
  estimator's call (the report counts it as part of the estimator's change, so advice, but TPUEstimator refuses it
  all the same)."""
  return finding.severity == REQUIRED or finding.code == 'run-config-not-tpu'
