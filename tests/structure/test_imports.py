"""The library's structure: no module of estimator_tpu imports itself back, directly or through others.

The import graph is computed from the source (ast), imports inside functions included: a cycle hidden by an import
inside a function is still a cycle of responsibilities. An edge goes to the module an import names: `from a.b
import c` to a.b.c when c is a module of its own, else to the package a.b (its __init__).
"""
import ast
import os

from support.paths import REPO_ROOT

PACKAGE = 'estimator_tpu'


def modules():
  """{dotted module name: path} of every module of the package (a package is its __init__)."""
  found = {}
  root = os.path.join(REPO_ROOT, PACKAGE)
  for folder, _, names in os.walk(root):
    for name in names:
      if name.endswith('.py'):
        path = os.path.join(folder, name)
        parts = os.path.relpath(path, REPO_ROOT)[:-len('.py')].split(os.sep)
        if parts[-1] == '__init__':
          parts = parts[:-1]
        found['.'.join(parts)] = path
  return found


def imported(module, path, known):
  """The modules of the package that `module` imports, anywhere in its code."""
  with open(path) as f:
    tree = ast.parse(f.read(), filename=path)
  package = module if path.endswith('__init__.py') else module.rpartition('.')[0]
  targets = set()
  for node in ast.walk(tree):
    names = []
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
      base = node.module or ''
      if node.level:
        parts = package.split('.')
        parts = parts[:len(parts) - (node.level - 1)]
        base = '.'.join(parts + ([node.module] if node.module else []))
      names = ['%s.%s' % (base, alias.name) if '%s.%s' % (base, alias.name) in known else base
               for alias in node.names]
    targets.update(name for name in names if name in known and name != module)
  return targets


def import_graph():
  known = modules()
  return dict((module, imported(module, path, known)) for module, path in known.items())


def cycles(graph):
  """The strongly connected components of more than one module (Tarjan)."""
  index, low, stack, on_stack, found = {}, {}, [], set(), []

  def visit(node):
    index[node] = low[node] = len(index)
    stack.append(node)
    on_stack.add(node)
    for target in sorted(graph.get(node, ())):
      if target not in index:
        visit(target)
        low[node] = min(low[node], low[target])
      elif target in on_stack:
        low[node] = min(low[node], index[target])
    if low[node] == index[node]:
      component = []
      while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == node:
          break
      if len(component) > 1:
        found.append(sorted(component))

  for node in sorted(graph):
    if node not in index:
      visit(node)
  return found


def test_the_package_has_no_import_cycle():
  graph = import_graph()
  assert len(graph) > 50 and graph['estimator_tpu.runner']  # the graph was read
  assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
  graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': {'a'}}
  assert cycles(graph) == [['a', 'b', 'c']]
  source = 'def f():\n  from estimator_tpu import runner\n'
  tree_imports = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)]
  assert tree_imports and tree_imports[0].module == 'estimator_tpu'
