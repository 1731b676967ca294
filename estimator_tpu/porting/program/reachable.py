"""Which functions of the program can run: those its module-level code (its `if __name__ == '__main__':` block,
say) reaches through the names it uses, and those nothing in the scanned files names (an entry point from
elsewhere: a test, a job runner), except in a script, whose functions nobody imports, or in any module of a program
whose script is scanned (it runs from there), unless the program finds functions by a computed name (getattr).

A function only dead code names is dead: an Experiment builder a commented-out learn_runner call used to run, the
estimator and input_fns only it builds. A change there would change nothing the program runs, so the report asks
for none. Names are matched by their last part (`model.build_estimator` is build_estimator), which can only make
more code live, never less. Methods and nested functions live and die with their class or function.
"""
import ast

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Ways a program runs a function it does not name.
DYNAMIC_LOOKUPS = frozenset(['getattr', 'import_module', '__import__', 'globals', 'locals', 'eval', 'exec'])


def dead_defs(program):
  """The ids of the module-level defs and classes of the program that cannot run (read once per program)."""
  if 'dead_defs' not in program.memo:
    program.memo['dead_defs'] = _dead(program)
  return program.memo['dead_defs']


def in_dead_code(program, module, node):
  """Whether `node` is inside a def or class that cannot run."""
  dead = dead_defs(program)
  if not dead:
    return False
  top = None
  current = node
  while current is not None:
    if isinstance(current, DEFS):
      top = current
    current = module.parents.get(id(current))
  return top is not None and id(top) in dead


def _names(node):
  """Every name an expression or statement reads: plain names and the last part of attributes."""
  found = set()
  for child in ast.walk(node):
    if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
      found.add(child.id)
    elif isinstance(child, ast.Attribute):
      found.add(child.attr)
  return found


def _is_script(module):
  return any(isinstance(statement, ast.If) and '__main__' in ast.dump(statement.test)
             for statement in module.tree.body)


def _dead(program):
  defs = {}  # name -> [(module, module-level def or class)]
  live_names = set(['main'])  # tf.app.run() and absl's app.run(main) run __main__.main without naming it
  named_anywhere = set()
  for module in program.modules:
    for statement in module.tree.body:
      if isinstance(statement, DEFS):
        defs.setdefault(statement.name, []).append((module, statement))
        named_anywhere |= _names(statement) - {statement.name}
        for decorator in statement.decorator_list:
          live_names |= _names(decorator)
      else:
        live_names |= _names(statement)
  named_anywhere |= live_names
  scripts = set(id(module) for module in program.modules if _is_script(module))
  # A program whose script is scanned runs from it: a def of its other modules that nothing names is not run either,
  # unless the program finds functions by a computed name (getattr, importlib, globals()).
  closed = bool(scripts) and not any(_names(module.tree) & DYNAMIC_LOOKUPS for module in program.modules)
  live = set()
  frontier = list(live_names)
  for name, found in defs.items():
    for module, definition in found:
      if definition.decorator_list or (name not in named_anywhere and id(module) not in scripts and not closed):
        # Run from elsewhere, for all the scanned files can tell: nothing here names it (or a decorator
        # registers it).
        live.add(id(definition))
        frontier.extend(_names(definition))
  seen = set()
  while frontier:
    name = frontier.pop()
    if name in seen:
      continue
    seen.add(name)
    for _, definition in defs.get(name, []):
      if id(definition) not in live:
        live.add(id(definition))
        frontier.extend(_names(definition) - seen)
  return set(id(definition) for found in defs.values() for _, definition in found if id(definition) not in live)
