"""The files of one program together: which def a name or an expression stands for, across the files.

This is what the rewrite needs beyond the port report's findings: where the estimator's input_fns come from and
with which batch sizes, which functions call which, and the signatures of project functions (read from files
beside the program when the user did not list them, without changing those).
"""
import collections

import libcst as cst

from estimator_tpu.porting.program import reading as report_program
from estimator_tpu.porting.rewrite import source as source_lib

MAX_DEPTH = 4

# A function found: its file and def (or lambda); `via`: the builder calls it came out of, as (file, scope, call,
# builder def), so that a closure's values can be looked up.
Target = collections.namedtuple('Target', ['file', 'node', 'via'])
Target.__new__.__defaults__ = ((),)


class Program(object):

  def __init__(self, files):
    self.files = list(files)
    self.by_path = dict((f.path, f) for f in self.files)
    self._context = {}
    self._report = report_program.Program([f.read for f in self.files])

  def find_def(self, canonical):
    """(file, FunctionDef/ClassDef) for a canonical 'module.name': in the program's files (as the port report finds
    it), else in a project module beside them, read for its signatures; else None."""
    if not canonical or '.' not in canonical or canonical.split('.')[0] in ('tensorflow', 'absl', 'numpy'):
      return None
    module_name, _, name = canonical.rpartition('.')
    found = self._report.find_def(canonical)
    source = self.by_path[found[0].path] if found is not None else self._context_file(module_name)
    if source is None or name not in source.top_level:
      return None
    return source, source.top_level[name]

  def is_ported(self, source_file):
    return source_file in self.files

  def _context_file(self, module_name):
    """A project module beside the program's files (as the port report finds it), parsed for its signatures only
    (never written)."""
    if module_name not in self._context:
      found = self._report.neighbours.source_file_for(module_name)
      parsed = None
      if found is not None and found[0] == module_name:
        try:
          text, encoding = source_lib.read_source(found[1])
          parsed = source_lib.SourceFile(found[1], text, encoding)
        except Exception:  # noqa: BLE001 -- context only: a file that cannot be read is just not used
          parsed = None
      self._context[module_name] = parsed
    return self._context[module_name]

  # --- what an expression stands for ----------------------------------------------------------------------------

  def resolve(self, source, scope, node, depth=0):
    """The functions (Targets) an expression can stand for; [] when it cannot be told."""
    if depth > MAX_DEPTH or node is None:
      return []
    if isinstance(node, cst.Lambda):
      return [Target(source, node)]
    if isinstance(node, cst.Name):
      kind, bound, owner = source.lookup(scope, node.value)
      if kind == 'def':
        return [Target(source, bound)] if isinstance(bound, cst.FunctionDef) else []
      if kind == 'value':
        return self.resolve(source, owner, bound, depth + 1)
      if kind == 'import':
        found = self.find_def(bound)
        return [Target(found[0], found[1])] if found and isinstance(found[1], cst.FunctionDef) else []
      return []
    if isinstance(node, cst.Attribute):
      found = self.find_def(source.canonical(node))
      return [Target(found[0], found[1])] if found and isinstance(found[1], cst.FunctionDef) else []
    if isinstance(node, cst.Call) and source.canonical(node.func) == 'functools.partial' and node.args:
      return self.resolve(source, scope, node.args[0].value, depth + 1)  # partial(fn, ...) runs fn
    if isinstance(node, cst.Call):
      results = []
      for builder in self.resolve(source, scope, node.func, depth + 1):
        if isinstance(builder.node, cst.Lambda):
          continue
        for value in returned_values(builder.node):
          for target in self.resolve(builder.file, builder.node, value, depth + 1):
            results.append(target._replace(via=target.via + ((source, scope, node, builder.node),)))
      return results
    return []

  def resolve_def(self, source, scope, func):
    """The one def a call's function stands for, as (file, def), else None."""
    targets = [t for t in self.resolve(source, scope, func) if isinstance(t.node, cst.FunctionDef)]
    if len(targets) == 1 and not targets[0].via:
      return targets[0].file, targets[0].node
    return None

  def call_sites(self, target_file, fn):
    """(file, scope, call) of every call in the program's files that runs `fn`."""
    sites = []
    for f in self.files:
      for node in f.positions:
        if isinstance(node, cst.Call) and _callee_name(node) == fn.name.value:
          scope = f.function_of(node)
          found = self.resolve_def(f, scope, node.func)
          if found is not None and found[1] is fn:
            sites.append((f, scope, node))
    return sites


def _callee_name(call):
  if isinstance(call.func, cst.Name):
    return call.func.value
  if isinstance(call.func, cst.Attribute):
    return call.func.attr.value
  return None


def returned_values(fn):
  """The expressions a def returns (not those of nested functions)."""
  if isinstance(fn, cst.Lambda):
    return [fn.body]
  return [node.value for node in source_lib.walk_local(fn.body) if isinstance(node, cst.Return) and node.value]
