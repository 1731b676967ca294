"""TPU rule 1 (TPUEstimator), with rules 2 and 8: Estimator -> TPUEstimator with use_tpu and the global batch
sizes of its input_fns; RunConfig -> tf.estimator.tpu.RunConfig with where the TPU is (rule 2) and
TPUConfig(iterations_per_loop, num_shards) (rule 8); the settings a TPU run needs, as flags where the file
defines absl/tf flags, else as constants at the top of the file.
"""
import ast
import collections

import libcst as cst

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import estimators
from estimator_tpu.porting.program import neighbours
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.report import REQUIRED
from estimator_tpu.porting.report import input_fn_checks
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import plans as plans_lib
from estimator_tpu.porting.rewrite import changes

ESTIMATOR_CODES = ('plain-estimator', 'cpu-estimator-shares-model-fn')
# What a RunConfig's port answers; a distribution strategy is a human's TODO.
RUN_CONFIG_CODES = ('run-config-not-tpu', 'run-config-one-step-per-run', 'run-config-without-tpu-address',
                    'run-config-master-and-cluster')
# setting -> (flag names a program may already have, flag type, default, help, constant name)
SETTINGS = collections.OrderedDict([
    ('use_tpu', (('use_tpu',), 'bool', 'False', 'Run on a Cloud TPU; false: TPUEstimator on this machine\'s CPU.',
                 'USE_TPU')),
    ('tpu_name', (('tpu_name', 'tpu'), 'string', 'None', 'The Cloud TPU to use (TPUClusterResolver); local on a '
                  'TPU VM.', 'TPU_NAME')),
    ('tpu_zone', (('tpu_zone',), 'string', 'None', 'GCE zone of the Cloud TPU.', 'TPU_ZONE')),
    ('gcp_project', (('gcp_project',), 'string', 'None', 'GCP project of the Cloud TPU.', 'GCP_PROJECT')),
    ('iterations_per_loop', (('iterations_per_loop', 'iterations'), 'integer', '100', 'Training steps per TPU '
                             'loop (TPUConfig.iterations_per_loop).', 'ITERATIONS_PER_LOOP')),
    ('num_shards', (('num_shards', 'num_tpu_cores'), 'integer', 'None', 'TPU cores (TPUConfig.num_shards); '
                    'None: those of the TPU.', 'NUM_SHARDS')),
])
RUN_CONFIG_WHY = 'a tpu RunConfig: where the TPU is (rule 2), and TPUConfig (rule 8: steps per TPU loop).'
CLUSTER_HELPER = '''
def tpu_cluster_resolver(tpu_name, zone=None, project=None):
    # The Cloud TPU named tpu_name ('local': the TPU of this TPU VM), for RunConfig(cluster=...);
    # None: no TPU.
    if not tpu_name:
        return None
    return {tf}.distribute.cluster_resolver.TPUClusterResolver(tpu_name, zone=zone, project=project)
'''


def fix(port):
  for site in port.estimators:
    # An Estimator the report does not require to change (one that runs only off the TPU) stays one.
    if site.kind == 'estimator' and port.findings(site.module, site.call, ESTIMATOR_CODES):
      _port_estimator(port, site)
  for module, _, call, canonical in port.uses.index.run_configs:
    if '.tpu.' not in canonical and '.contrib.' not in canonical and \
        port.findings(module, call, RUN_CONFIG_CODES + ('distribution-strategy',)):
      _port_run_config(port, port.file_of(module), call)


# --- settings ---------------------------------------------------------------------------------------------------

def settings(port, f):
  """{setting: expression code} in file f, adding the flags or constants the first time."""
  cached = port.settings.setdefault('names', {})
  if f in cached:
    return cached[f]
  module = f.module
  defines = _flag_definitions(module)
  names = {}
  if defines:
    flags_object = _flags_object(module)
    defined = set(name for name, _ in defines)
    new = []
    for setting, (candidates, kind, default, help_text, _) in SETTINGS.items():
      existing = [c for c in candidates if c in defined]
      if existing:
        names[setting] = '%s.%s' % (flags_object, existing[0])
      else:
        names[setting] = '%s.%s' % (flags_object, setting)
        new.append('%s.DEFINE_%s(%r, %s, %r)' % (syntax.dotted(defines[-1][1].func).rsplit('.', 1)[0], kind, setting,
                                                 default, help_text))
    if new:
      last = f.statement_of(f.node(defines[-1][1]))
      statements = [cst.parse_statement(code + '\n') for code in new]
      lines = edits_lib.comment_lines(edits_lib.rule_comment(1, 'the flags of a TPU run: --use_tpu, where the TPU '
                                                             'is (rule 2), steps per TPU loop (rule 8).'), 0)
      statements[0] = statements[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(line))
                                                                for line in lines])
      port.edits[f].insert_after(last, statements)
      port.changes.append(changes.Change(f.path, f.line(last), 1, 'flags %s' % ', '.join(
          '--' + s for s in SETTINGS if names[s].endswith('.' + s))))
  else:
    code = []
    for setting, (_, _, default, help_text, constant) in SETTINGS.items():
      # A name of its own: the program's NUM_SHARDS (its data files) or an imported USE_TPU means something else.
      names[setting] = port.new_name(f, constant)
      code.append('%s = %s  # %s' % (names[setting], default, help_text))
    port.add_helper(f, 'settings', '\n'.join(code) + '\n', 1, 'how this program runs on a TPU: set %s, and %s '
                    '(rule 2: where the TPU is), for one.' % (names['use_tpu'], names['tpu_name']))
    port.changes.append(changes.Change(f.path, 1, 1, 'settings %s' % ', '.join(n for n in names.values())))
  port.add_helper(f, 'cluster', CLUSTER_HELPER.format(tf=port.tf_v1(f)), 2,
                  'the Cloud TPU RunConfig names; none: this machine.')
  cached[f] = names
  return names


def _flag_definitions(module):
  """[(flag name, DEFINE call)] at the file's top level (absl.flags, tf.flags, tf.app.flags)."""
  found = []
  for statement in module.tree.body:
    defined = neighbours.absl_flag(module, statement.value) if isinstance(statement, ast.Expr) else None
    if defined is not None:
      found.append((defined[0], statement.value))
  return found


def _flags_object(module):
  for name, canonical in sorted(module.aliases.items()):
    if canonical.endswith('flags.FLAGS') and name in module.assignments:
      return name
  for name, canonical in sorted(module.aliases.items()):
    if canonical.endswith('flags.FLAGS'):
      return name
  for name, raw in sorted(module.written_imports.items()):
    if raw.endswith('flags'):
      return name + '.FLAGS'
  return 'flags.FLAGS'


# --- the estimator ----------------------------------------------------------------------------------------------

def _port_estimator(port, site):
  # Ports rule 1 (TPUEstimator).
  module, call = site.module, site.call
  f = port.file_of(module)
  if syntax.has_star_args(call):
    port.todo(module, call, ESTIMATOR_CODES, 1, 'build tf.estimator.tpu.TPUEstimator with use_tpu and the '
              'train/eval/predict batch sizes (the arguments come from *args/**kwargs here)')
    return
  names, tpu_api, original = settings(port, f), '%s.estimator.tpu' % port.tf_v1(f), f.node(call)
  statement = f.statement_of(original)
  keywords = []
  missing = []
  # Advice only: it runs off the TPU, with a model_fn the port changed (a plain Estimator refuses its spec).
  on_cpu = not port.findings(module, call, ESTIMATOR_CODES, severity=REQUIRED)
  for mode, keyword in () if on_cpu else estimators.BATCH_SIZE_KEYWORDS:
    # TPUEstimator with use_tpu refuses to be built without train_batch_size, trained or not.
    if any(plan.mode == mode for plan in port.plans.uses_of(site)) or mode == plans_lib.TRAIN:
      expression = port.plans.batch_expression(site, mode)
      if expression is None:
        missing.append(keyword)
      else:
        keywords.append((keyword, expression))
  keywords.insert(0, ('use_tpu', 'False' if on_cpu else names['use_tpu']))
  if syntax.argument(call, 2, 'config') is None:
    config = port.new_name(f, 'run_config')
    port.edits[f].insert_before(statement, _run_config_statements(port, f, statement, config, tpu_api, names))
    keywords.insert(0, ('config', config))
  warm_start = edits_lib.arg_node(original, 4, 'warm_start_from')
  new_func = '%s.TPUEstimator' % tpu_api

  def rebuild(updated):
    args = list(updated.args)
    if warm_start is not None and warm_start.keyword is None and len(args) > 4:  # TPUEstimator: keyword only
      args[4] = args[4].with_changes(keyword=cst.Name('warm_start_from'), equal=cst.AssignEqual(
          whitespace_before=cst.SimpleWhitespace(''), whitespace_after=cst.SimpleWhitespace('')))
    updated = edits_lib.renamed(updated.with_changes(args=args), original, new_func, f)
    return edits_lib.add_keywords(updated, [(k, edits_lib.expression(v)) for k, v in keywords])

  port.edits[f].replace(original, rebuild)
  port.take(module, call, ESTIMATOR_CODES)
  port.change(f, original, 1, '%s -> %s(%s)' % (syntax.dotted(call.func), new_func,
                                                ', '.join('%s=%s' % kv for kv in keywords)))
  port.edits[f].comment(statement, edits_lib.rule_comment(1, 'TPUEstimator off the TPU (use_tpu=False): here it only '
                                                         'runs on the CPU, with the ported model_fn.' if on_cpu else
                                                         'TPUEstimator, with use_tpu and the global batch sizes the '
                                                         'input_fns were given.'))
  uneven = ['%s=%s' % (k, v) for k, v in keywords if k.endswith('_batch_size') and (_number(v) or 0) %
            input_fn_checks.CORES]
  if uneven:  # the input's own batch size, now the estimator's: TPUEstimator refuses it on 8 cores (tpu_context.py)
    cores = input_fn_checks.CORES
    port.todo(module, call, (), 16, '%s: not a multiple of the %d cores of a v2-8 or v3-8, which TPUEstimator '
              'refuses -> a multiple of %d (the global batch; each core gets batch / cores)'
              % (' and '.join(uneven), cores, cores))
  if missing:
    port.todo(module, call, ESTIMATOR_CODES, 1, 'pass %s: the global batch of the %s input_fn (it could not be '
              'traced here)' % (' and '.join('%s=...' % m for m in missing), '/'.join(m.split('_')[0]
                                                                                      for m in missing)))
  for mode, keyword in estimators.BATCH_SIZE_KEYWORDS:
    # engine.blocked(): a mode the estimator runs with a batch size left a TODO stays a plain Estimator's. Training
    # counts when the scanned files do not show it too (a use the port's plans do not follow).
    if keyword in missing and (any(plan.mode == mode for plan in port.plans.uses_of(site)) or
                               (mode == plans_lib.TRAIN and estimators.TRAIN in site.modes)):
      port.untraced_batches.setdefault(site, []).append(keyword)


def _number(text):
  try:
    return int(text)
  except (TypeError, ValueError):
    return None


def _run_config_statements(port, f, statement, name, tpu_api, names):
  """`tpu_config = TPUConfig(...)` and `name = tpu.RunConfig(cluster=..., tpu_config=tpu_config)`."""
  indent = f.indent_of(statement)
  tpu_config = port.new_name(f, 'tpu_config')
  lines = [_tpu_config_code(tpu_config, tpu_api, names, indent),
           edits_lib.format_call('%s = %s.RunConfig' % (name, tpu_api), [
               ('cluster', _cluster_code(names)), ('tpu_config', tpu_config)], indent)]
  result = [cst.parse_statement(line + '\n') for line in lines]
  result[0] = edits_lib.commented(result[0], edits_lib.rule_comment(1, RUN_CONFIG_WHY), indent)
  return result


def _cluster_code(names):
  return 'tpu_cluster_resolver(%s, %s, %s)' % (names['tpu_name'], names['tpu_zone'], names['gcp_project'])


def _tpu_config_code(name, tpu_api, names, indent):
  return edits_lib.format_call('%s = %s.TPUConfig' % (name, tpu_api), [
      ('iterations_per_loop', names['iterations_per_loop']), ('num_shards', names['num_shards'])], indent)


# --- RunConfig ------------------------------------------------------------------------------------------------

def _port_run_config(port, f, call):
  # Ports rule 1 (TPUEstimator), rule 2 (where the TPU is), rule 8 (iterations per loop).
  module = f.module
  if syntax.has_star_args(call):
    port.todo(module, call, RUN_CONFIG_CODES, 1, 'build tf.estimator.tpu.RunConfig(tpu_config=tf.estimator.tpu.'
              'TPUConfig(iterations_per_loop, num_shards)) (the arguments come from *args/**kwargs here)')
    return
  names, tpu_api, original = settings(port, f), '%s.estimator.tpu' % port.tf_v1(f), f.node(call)
  statement = f.statement_of(original)
  present = [k.arg for k in call.keywords if k.arg]
  tpu_config = port.new_name(f, 'tpu_config')
  keywords = []
  if 'master' not in present and 'cluster' not in present:
    keywords.append(('cluster', _cluster_code(names)))
  keywords.append(('tpu_config', tpu_config))
  inserted = cst.parse_statement(_tpu_config_code(tpu_config, tpu_api, names, f.indent_of(statement)) + '\n')
  port.edits[f].insert_before(statement, [edits_lib.commented(inserted, edits_lib.rule_comment(1, RUN_CONFIG_WHY),
                                                              f.indent_of(statement))])

  def rebuild(updated):
    # tpu.RunConfig(tpu_config, evaluation_master, master, cluster, **kwargs): RunConfig(model_dir, ...)'s
    # positional arguments are named, or the first would be taken for tpu_config.
    args = [arg.with_changes(keyword=cst.Name(apis.RUN_CONFIG_POSITIONAL[i]), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(''), whitespace_after=cst.SimpleWhitespace('')))
            if arg.keyword is None and i < len(apis.RUN_CONFIG_POSITIONAL) else arg
            for i, arg in enumerate(updated.args)]
    # A distribution strategy stays the CPU's: on the TPU it would take Estimator.train off the TPU loop.
    args = [arg.with_changes(value=edits_lib.expression('None if %s else %s' % (
        names['use_tpu'], edits_lib.code_of(arg.value)))) if arg.keyword is not None and arg.keyword.value in
            apis.STRATEGY_KEYWORDS and edits_lib.code_of(arg.value) != 'None' else arg for arg in args]
    updated = edits_lib.renamed(updated.with_changes(args=args), original, '%s.RunConfig' % tpu_api, f)
    return edits_lib.add_keywords(updated, [(k, edits_lib.expression(v)) for k, v in keywords])

  port.edits[f].replace(original, rebuild)
  port.take(module, call, RUN_CONFIG_CODES)
  strategies = [k.arg for k in call.keywords if k.arg in apis.STRATEGY_KEYWORDS]
  port.change(f, original, 1, '%s -> %s.RunConfig(%s)%s' % (
      syntax.dotted(call.func), tpu_api, ', '.join('%s=%s' % kv for kv in keywords),
      ', its %s only off the TPU' % ', '.join(strategies) if strategies else ''))
