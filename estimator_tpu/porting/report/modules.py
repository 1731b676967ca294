"""Checks of whole files, wherever the code is: tf.contrib and where it went, local-path flag defaults."""
import ast

from estimator_tpu.porting.report import apis
from estimator_tpu.porting.report import input_fns
from estimator_tpu.porting.report import program as program_lib
from estimator_tpu.porting.report import pyast

PATH_FLAG_WORDS = ('dir', 'path', 'file', 'pattern', 'output')


def check_module(collector, module):
  for node in ast.walk(module.tree):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
      _check_import(collector, module, node)
    elif isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(module.parents.get(id(node)), ast.Attribute):
      _check_contrib_use(collector, module, node)
    if isinstance(node, ast.Call):
      _check_path_flag(collector, module, node)


def _contrib_advice(collector, module, node, name, how):
  # Checks rule 19 (contrib names).
  replacement = apis.contrib_replacement(name)
  if replacement:
    collector.advice(module, node, 19, '%s `%s`, which TF 2 does not have -> %s.'
                     % (how, name.replace('tensorflow.', 'tf.', 1), replacement))


def _check_import(collector, module, node):
  if isinstance(node, ast.Import):
    names = [program_lib.normalize(alias.name) for alias in node.names]
  else:
    base = program_lib.normalize(module._absolute(node.module, node.level))
    names = [program_lib.normalize('%s.%s' % (base, alias.name)) for alias in node.names if alias.name != '*']
    if any(alias.name == '*' for alias in node.names):
      names.append(base)
  for name in names:
    if name.startswith('tensorflow.contrib'):
      _contrib_advice(collector, module, node, name, 'imports')


def _check_contrib_use(collector, module, node):
  name = module.canonical(node)
  if name and name.startswith('tensorflow.contrib.'):
    _contrib_advice(collector, module, node, name, 'uses')


def _check_path_flag(collector, module, call):
  # Checks rule 17 (Cloud Storage).
  canonical = module.canonical(call.func) or ''
  if not (canonical.endswith('.DEFINE_string') and ('flags' in canonical)):
    return
  name, default = pyast.argument(call, 0, 'name'), pyast.argument(call, 1, 'default')
  name = pyast.literal(name) if name is not None else None
  default = pyast.literal(default) if default is not None else None
  if isinstance(name, str) and isinstance(default, str) and any(w in name.lower() for w in PATH_FLAG_WORDS):
    if input_fns.is_local_path(default):
      collector.advice(module, call, 17, 'the flag --%s defaults to the local path %r: TPU workers cannot '
                       'read or write this machine\'s disk (a TPU Node) -> give a gs:// path for a TPU run, and check '
                       'it when the flags are parsed.' % (name, default))
