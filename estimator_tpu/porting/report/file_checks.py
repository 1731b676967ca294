"""Checks of whole files, wherever the code is: tf.contrib and where it went, local-path flag defaults, local file
calls on data and model paths."""
import ast

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import modules
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values
from estimator_tpu.porting.report import input_fn_checks

PATH_FLAG_WORDS = ('dir', 'path', 'file', 'pattern', 'output')


def check_module(collector, module):
  for node in ast.walk(module.tree):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
      _check_import(collector, module, node)
    elif isinstance(node, (ast.Attribute, ast.Name)) and not isinstance(module.parents.get(id(node)), ast.Attribute):
      _check_contrib_use(collector, module, node)
    if isinstance(node, ast.Call):
      _check_path_flag(collector, module, node)
      _check_local_file_call(collector, module, node)


# Words in a name that holds the data's or the model's location (data_dir, FLAGS.model_dir, PATH_DATASET,
# estimator.eval_dir()): on a TPU Node those are gs:// paths.
DATA_PATH_WORDS = ('data_dir', 'model_dir', 'job_dir', 'export_dir', 'output_dir', 'train_dir', 'eval_dir', 'log_dir',
                   'logdir', 'data_path', 'dataset', 'checkpoint_dir', 'ckpt_dir')


def _names_a_path(node):
  for child in ast.walk(node):
    text = child.id if isinstance(child, ast.Name) else child.attr if isinstance(child, ast.Attribute) else None
    if text and any(word in text.lower() for word in DATA_PATH_WORDS):
      return text
  return None


def _check_local_file_call(collector, module, call):
  """os.path.exists(data_dir), open(path), os.makedirs, glob.glob, shutil, pathlib: local-only file calls."""
  # Checks rule 17 (Cloud Storage).
  canonical = module.canonical(call.func)
  if canonical is None and isinstance(call.func, ast.Name) and call.func.id == 'open' and \
      'open' not in module.aliases and 'open' not in module.top_level:
    canonical = 'open'
  if canonical is None and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call) and \
      module.canonical(call.func.value.func) == 'pathlib.Path' and call.func.attr in ('open', 'mkdir', 'exists'):
    canonical, call_args = 'pathlib.Path.%s' % call.func.attr, call.func.value.args
  else:
    call_args = call.args
  if canonical not in apis.LOCAL_FS_CALLS and not (canonical or '').startswith('pathlib.Path.'):
    return
  if canonical == 'pathlib.Path' or not call_args:
    return
  name = _names_a_path(call_args[0])
  program = collector.program
  scope = program.enclosing_function(module, call)
  if name and any(isinstance(o.node, ast.Call) and (program.canonical(o.module, o.fn, o.node.func) or '').startswith(
      'tempfile.') for o in values.origins(program, module, scope, call_args[0])):
    return  # a temporary file: local by design
  if name:
    collector.advice(module, call, 'local-file-call',
                     '`%s(%s)` is a local file call: on a TPU Node, data and model_dir must be '
                     'gs:// paths (its TPU workers cannot read this machine\'s disk), which os, open, glob and shutil '
                     'cannot reach (they see a local folder named gs:) -> tf.io.gfile (exists, makedirs, GFile, '
                     'glob, copy, rmtree) works on both.' % (canonical, syntax.render(call_args[0])))


def _contrib_advice(collector, module, node, name, how):
  # Checks rule 19 (contrib names).
  replacement = apis.contrib_replacement(name)
  if replacement:
    collector.advice(module, node, 'contrib-name', '%s `%s`, which TF 2 does not have -> %s.'
                     % (how, name.replace('tensorflow.', 'tf.', 1), replacement))


def _check_import(collector, module, node):
  if isinstance(node, ast.Import):
    names = [modules.normalize(alias.name) for alias in node.names]
  else:
    base = modules.normalize(module.absolute(node.module, node.level))
    names = [modules.normalize('%s.%s' % (base, alias.name)) for alias in node.names if alias.name != '*']
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
  name, default = syntax.argument(call, 0, 'name'), syntax.argument(call, 1, 'default')
  name = syntax.literal(name) if name is not None else None
  default = syntax.literal(default) if default is not None else None
  if isinstance(name, str) and isinstance(default, str) and any(w in name.lower() for w in PATH_FLAG_WORDS):
    if input_fn_checks.is_local_path(default):
      collector.advice(module, call, 'local-path-flag',
                       'the flag --%s defaults to the local path %r: TPU workers cannot '
                       'read or write this machine\'s disk (a TPU Node) -> give a gs:// path for a TPU run, and check '
                       'it when the flags are parsed.' % (name, default))
