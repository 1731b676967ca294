"""Files beside the program: the project modules its files import (read for their flag definitions and
signatures, never checked or changed), and where a name the scan left out is defined."""
import ast
import os

from estimator_tpu.porting.program import files
from estimator_tpu.porting.program import syntax


class Neighbours(object):
  """The files one reading.Program's modules import, looked for beside them."""

  def __init__(self, program):
    self.program = program
    self._flag_definitions = None
    self._imported = None
    self._named = {}

  def flag_definition(self, name):
    """(module, DEFINE_* call, default expression) of the flag --name, else None. Looked for in the scanned files,
    then in the project modules they import (read, not checked: flags are often defined in a module of their own
    that a port report need not cover)."""
    if self._flag_definitions is None:
      self._flag_definitions = {}
      for module in self.program.modules + self.imported_modules():
        for node in ast.walk(module.tree):
          defined = absl_flag(module, node)
          if defined is not None:
            flag, default = defined
            if default is not None:
              self._flag_definitions.setdefault(flag, (module, node, default))
          elif isinstance(node, ast.Call):
            flag, default = argparse_option(node)
            if flag:
              self._flag_definitions.setdefault(flag, (module, node, default))
    return self._flag_definitions.get(name)

  def imported_modules(self):
    """Project modules the scanned files import (and those import), parsed from disk but not scanned."""
    if self._imported is None:
      self._imported = self._read_imported_modules()
    return self._imported

  def _read_imported_modules(self, hops=2, limit=50):
    known = set(m.name for m in self.program.modules)
    found, frontier = [], list(self.program.modules)
    for _ in range(hops):
      imported = []
      for module in frontier:
        for canonical in sorted(set(module.aliases.values())):
          source = None if canonical.split('.')[0] in ('tensorflow', 'absl') else self.source_file_for(canonical)
          if source and source[0] not in known and len(found) < limit:
            known.add(source[0])
            parsed = files.read_context_module(source[1], source[0])
            if parsed is not None:
              found.append(parsed)
              imported.append(parsed)
      frontier = imported
    return found

  def source_file_for(self, dotted_name):
    """(module name, path) of the file on disk that defines module `dotted_name`, or the module holding the name
    `dotted_name`, looked for beside the scanned files' top packages; else None. Something to name when a scan
    left a file out."""
    parts = dotted_name.split('.')
    for root in self._roots():
      for end in (len(parts), len(parts) - 1):
        base = os.path.join(root, *parts[:end]) if end else None
        for candidate in ((base + '.py', os.path.join(base, '__init__.py')) if base else ()):
          if os.path.isfile(candidate):
            relative = os.path.relpath(candidate)
            return '.'.join(parts[:end]), (candidate if relative.startswith(os.pardir) else relative)
    return None

  def module_named(self, name):
    """The project module `name` beside the program's files, read for its definitions (never changed), else
    None."""
    if name not in self._named:
      found = self.source_file_for(name)
      self._named[name] = files.read_context_module(found[1], name) if found and found[0] == name else None
    return self._named[name]

  def left_out(self, canonical):
    """'module (path), which is not among the scanned files' for a project name whose file a scan left out."""
    if not canonical or canonical.split('.')[0] in ('tensorflow', 'absl') or self.program.find_def(canonical):
      return None
    found = self.source_file_for(canonical)
    return '%s (%s), which is not among the scanned files' % found if found else None

  def _roots(self):
    """The folders the scanned modules' dotted names start from."""
    roots = []
    for module in self.program.modules:
      if module.root not in roots:
        roots.append(module.root)
    return roots


def absl_flag(module, node):
  """(flag name, default expression or None) when a node of `module` is a call that defines an absl (or tf.flags)
  flag (flags.DEFINE_string('data_dir', '/tmp', ...)), else None."""
  if not (isinstance(node, ast.Call) and _defines_a_flag(_flags_call(module, node.func))):
    return None
  flag = syntax.argument(node, 0, 'name')
  flag = syntax.literal(flag) if flag is not None else None
  return (flag, syntax.argument(node, 1, 'default')) if isinstance(flag, str) else None


def _flags_call(module, func):
  """The canonical name of a call's function, also where its root is a local of the def it is in
  (`flags = tf.app.flags` in a configure() that then calls flags.DEFINE_integer)."""
  canonical = module.canonical(func)
  root, dotted = syntax.root_name(func), syntax.dotted(func)
  if canonical or not root or dotted is None or root == dotted:  # dotted None: a call in the chain, a[0].b
    return canonical
  scope = module.parents.get(id(func))
  while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
    scope = module.parents.get(id(scope))
  for node in ast.walk(scope) if scope is not None else ():
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == root for t in node.targets):
      base = module.canonical(node.value)
      if base:
        return '%s%s' % (base, dotted[len(root):])
  return None


def _defines_a_flag(canonical):
  """absl.flags.DEFINE_integer, tf.flags.DEFINE_string, ... (not DEFINE_validator and the like)."""
  if not canonical or 'flags' not in canonical:
    return False
  kind = canonical.rsplit('.', 1)[-1]
  return kind.startswith('DEFINE_') and kind[len('DEFINE_'):] in (
      'integer', 'float', 'string', 'bool', 'boolean', 'enum', 'list', 'multi_string', 'multi_integer')


def argparse_option(call):
  """(dest, default expression) of `parser.add_argument('--eval-steps', default=None)`, else (None, None). An
  option without default= defaults to None (False/True for store_true/store_false), as argparse does."""
  if not (isinstance(call.func, ast.Attribute) and call.func.attr == 'add_argument' and call.args):
    return None, None
  options = [syntax.literal(a) for a in call.args]
  longs = [o for o in options if isinstance(o, str) and o.startswith('--')]
  dest = syntax.literal(syntax.keyword(call, 'dest')) if syntax.keyword(call, 'dest') is not None else None
  if not isinstance(dest, str):
    if not longs:
      return None, None
    dest = longs[0][2:].replace('-', '_')
  default = syntax.keyword(call, 'default')
  if default is None:
    action = syntax.literal(syntax.keyword(call, 'action')) if syntax.keyword(call, 'action') is not None else None
    value = {'store_true': False, 'store_false': True}.get(action)
    default = ast.copy_location(ast.Constant(value=value), call)
    default.kind = None
  return dest, default
