"""TPU rule 19 (contrib names): tf.contrib's TPU-era names to their TF 1.15 homes (which TF 2's tf.compat.v1 and
tf.compat.v2 keep). A contrib name with no home here keeps the port report's advice; a summary with a family is
left with a TODO.
"""
import ast

import libcst as cst

from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.rewrite import edits as edits_lib

RULE = 19
CODES = ('contrib-name',)
V1, V2 = 'v1', 'v2'
# canonical prefix -> (API, new dotted name after the API's alias); the longest prefix wins. Same signatures.
RENAMES = [
    ('tensorflow.contrib.tpu.TPUEstimatorSpec', (V1, 'estimator.tpu.TPUEstimatorSpec')),
    ('tensorflow.contrib.tpu.TPUEstimator', (V1, 'estimator.tpu.TPUEstimator')),
    ('tensorflow.contrib.tpu.RunConfig', (V1, 'estimator.tpu.RunConfig')),
    ('tensorflow.contrib.tpu.TPUConfig', (V1, 'estimator.tpu.TPUConfig')),
    ('tensorflow.contrib.tpu.InputPipelineConfig', (V1, 'estimator.tpu.InputPipelineConfig')),
    ('tensorflow.contrib.tpu.CrossShardOptimizer', (V1, 'tpu.CrossShardOptimizer')),
    ('tensorflow.contrib.tpu.bfloat16_scope', (V1, 'tpu.bfloat16_scope')),
    ('tensorflow.contrib.tpu.rewrite', (V1, 'tpu.rewrite')),
    ('tensorflow.contrib.tpu.shard', (V1, 'tpu.shard')),
    ('tensorflow.contrib.tpu.cross_replica_sum', (V1, 'tpu.cross_replica_sum')),
    ('tensorflow.contrib.cluster_resolver.TPUClusterResolver', (V1, 'distribute.cluster_resolver.TPUClusterResolver')),
    ('tensorflow.contrib.summary.create_file_writer', (V2, 'summary.create_file_writer')),
    ('tensorflow.contrib.summary.scalar', (V2, 'summary.scalar')),
    ('tensorflow.contrib.summary.histogram', (V2, 'summary.histogram')),
    ('tensorflow.contrib.summary.image', (V2, 'summary.image')),
    ('tensorflow.contrib.summary.flush', (V2, 'summary.flush')),
    ('tensorflow.contrib.summary.all_summary_ops', (V1, 'summary.all_v2_summary_ops')),
    ('tensorflow.contrib.data.map_and_batch', (V1, 'data.experimental.map_and_batch')),
    ('tensorflow.contrib.data.parallel_interleave', (V1, 'data.experimental.parallel_interleave')),
    ('tensorflow.contrib.data.shuffle_and_repeat', (V1, 'data.experimental.shuffle_and_repeat')),
]
# contrib.summary.scalar/histogram/image take (name, tensor, family, step): a third positional or a family= is
# not the same call in tf.compat.v2.summary (name, data, step).
SUMMARY_WITH_FAMILY = ('tensorflow.contrib.summary.scalar', 'tensorflow.contrib.summary.histogram',
                       'tensorflow.contrib.summary.image')
BATCH_AND_DROP = ('.batch_and_drop_remainder', '.padded_batch_and_drop_remainder')
# Keywords a renamed call takes under another name in its new home (contrib.summary.image(max_images=) is
# tf.compat.v2.summary.image(max_outputs=)), and keywords it does not take there at all.
KEYWORD_RENAMES = {'tensorflow.contrib.summary.image': {'max_images': 'max_outputs'}}
KEYWORDS_WITHOUT_HOME = {'tensorflow.contrib.summary.image': ('bad_color',)}
# contrib.summary.record_summaries_every_n_global_steps(n, global_step=None) is record_if(global_step % n == 0), the
# step the global step when none is given (summary_ops_v2.py in TF 1.15); TF 2 has record_if only.
EVERY_N_STEPS = 'tensorflow.contrib.summary.record_summaries_every_n_global_steps'


def fix(port):
  for f in port.files:
    _fix_file(port, f)


def _fix_file(port, f):
  # Ports rule 19 (contrib names).
  module = f.module
  edits = port.edits[f]
  replaced_roots = []
  for node in syntax.in_source_order(module.tree):
    if isinstance(node, ast.Call):
      canonical = module.canonical(node.func) or ''
      if canonical.startswith('tensorflow.contrib.data.') and canonical.endswith(BATCH_AND_DROP):
        _batch_and_drop(port, f, node, canonical, replaced_roots)
      elif canonical == 'tensorflow.contrib.summary.always_record_summaries' and not (node.args or node.keywords):
        code = '%s.summary.record_if(True)' % port.tf_v2(f)
        edits.replace(f.node(node), lambda updated, code=code: edits_lib.expression(code))
        _done(port, f, node, 'tf.contrib.summary.always_record_summaries() -> %s' % code)
        replaced_roots.append(syntax.root_name(node.func))
      elif canonical == EVERY_N_STEPS:
        _every_n_steps(port, f, node, replaced_roots)
      continue
    if not isinstance(node, (ast.Attribute, ast.Name)) or isinstance(module.parents.get(id(node)), ast.Attribute):
      continue
    canonical = module.canonical(node) or ''
    if not canonical.startswith('tensorflow.contrib.'):
      continue
    call = module.parents.get(id(node))
    call = call if isinstance(call, ast.Call) and call.func is node else None
    if canonical in SUMMARY_WITH_FAMILY and call is not None and _has_family(call):
      port.todo(module, node, CODES, RULE, '`%s` passes a family: write the tag with its prefix in '
                'tf.compat.v2.summary.%s' % (syntax.dotted(node), canonical.rsplit('.', 1)[1]))
      continue
    if call is not None and any(k.arg in KEYWORDS_WITHOUT_HOME.get(canonical, ()) for k in call.keywords):
      port.todo(module, node, CODES, RULE, '`%s` passes %s, which tf.compat.v2.summary.%s does not take' % (
          syntax.dotted(node), ' and '.join(k.arg + '=' for k in call.keywords
                                          if k.arg in KEYWORDS_WITHOUT_HOME[canonical]), canonical.rsplit('.', 1)[1]))
      continue
    if canonical in ('tensorflow.contrib.summary.always_record_summaries', EVERY_N_STEPS):
      continue  # the call was replaced above (or left with a TODO)
    rename = _rename_for(canonical)
    if rename is None:
      continue  # the port report's advice stays; nothing required is left unmarked (the engine makes TODOs)
    api, new = rename
    alias = port.tf_v1(f) if api == V1 else port.tf_v2(f)
    code = '%s.%s' % (alias, new)
    if call is not None:
      original = f.node(call)
      keywords = KEYWORD_RENAMES.get(canonical, {})
      edits.replace(original, lambda updated, code=code, original=original, keywords=keywords: _renamed_keywords(
          edits_lib.renamed(updated, original, code, f), keywords))
    else:
      edits.replace(f.node(node), lambda updated, code=code: edits_lib.expression(code))
    _done(port, f, node, '%s -> %s' % (syntax.dotted(node), code))
    replaced_roots.append(syntax.root_name(node))
  _remove_unused_imports(port, f, replaced_roots)


def _every_n_steps(port, f, call, replaced_roots):
  # Ports rule 19 (contrib names): record every n steps, as a condition record_if takes.
  n, step = syntax.argument(call, 0, 'n'), syntax.argument(call, 1, 'global_step')
  if n is None or syntax.has_star_args(call) or len(call.args) > 2 or \
      any(k.arg not in ('n', 'global_step') for k in call.keywords):
    port.todo(f.module, call.func, CODES, RULE, '`%s` with these arguments: write '
              'tf.compat.v2.summary.record_if(lambda: step %% n == 0)' % syntax.dotted(call.func))
    return
  n = _operand(f, n)
  step = _operand(f, step) if step is not None else '%s.train.get_or_create_global_step()' % port.tf_v1(f)
  code = '%s.summary.record_if(lambda: %s.math.equal(%s %% %s, 0))' % (port.tf_v2(f), port.tf_v1(f), step, n)
  port.edits[f].replace(f.node(call), lambda updated, code=code: edits_lib.expression(code))
  _done(port, f, call, '%s -> %s' % (syntax.dotted(call.func), code))
  replaced_roots.append(syntax.root_name(call.func))


def _operand(f, node):
  """The source of an argument as an operand of `%`: parenthesised unless a name, an attribute, a number, a
  subscript or a call."""
  code = edits_lib.code_of(f.node(node))
  simple = isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) or syntax.is_literal(node)
  return code if simple else '(%s)' % code


def _rename_for(canonical):
  best = None
  for prefix, rename in RENAMES:
    if canonical == prefix or canonical.startswith(prefix + '.'):
      if best is None or len(prefix) > len(best[0]):
        best = (prefix, (rename[0], rename[1] + canonical[len(prefix):]))
  return best[1] if best else None


def _done(port, f, node, what):
  port.change(f, node, RULE, what)
  port.take(f.module, node, CODES)


def _batch_and_drop(port, f, call, canonical, replaced_roots):
  """`ds.apply(tf.contrib.data.batch_and_drop_remainder(n))` -> `ds.batch(n, drop_remainder=True)`."""
  apply_call = f.module.parents.get(id(call))
  if not (isinstance(apply_call, ast.Call) and isinstance(apply_call.func, ast.Attribute) and
          apply_call.func.attr == 'apply' and len(apply_call.args) + len(apply_call.keywords) == 1):
    port.todo(f.module, call, CODES, RULE, 'write `dataset.batch(batch_size, drop_remainder=True)` instead')
    return
  method = 'padded_batch' if 'padded' in canonical else 'batch'

  def rebuild(updated):
    inner = updated.args[0].value
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in inner.args]
    args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' '))) for a in args]
    args.append(cst.Arg(keyword=cst.Name('drop_remainder'), value=cst.Name('True'), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(''), whitespace_after=cst.SimpleWhitespace(''))))
    return updated.with_changes(func=updated.func.with_changes(attr=cst.Name(method)), args=args)

  port.edits[f].replace(f.node(apply_call), rebuild)
  _done(port, f, call.func, '%s -> Dataset.%s(..., drop_remainder=True)' % (syntax.dotted(call.func), method))
  replaced_roots.append(syntax.root_name(call.func))
  port.take(f.module, call, ('batch-without-drop-remainder',))


def _renamed_keywords(call, renames):
  """A LibCST call with its keywords renamed (`max_images=` -> `max_outputs=`)."""
  if not renames:
    return call
  return call.with_changes(args=[arg.with_changes(keyword=cst.Name(renames[arg.keyword.value]))
                                 if arg.keyword is not None and arg.keyword.value in renames else arg
                                 for arg in call.args])


def _has_family(call):
  return len(call.args) > 2 or any(k.arg == 'family' for k in call.keywords)


def _remove_unused_imports(port, f, replaced_roots):
  """Imports of tf.contrib names that no code uses any more."""
  if not replaced_roots:
    return
  module = f.module
  remaining = {}  # identifiers of the file outside its imports, as LibCST's tree being edited has them
  for node in f.positions:
    if isinstance(node, cst.Name) and f.enclosing(node, (cst.Import, cst.ImportFrom)) is None:
      remaining[node.value] = remaining.get(node.value, 0) + 1
  for local in set(replaced_roots):
    if local is None or not module.written_imports.get(local, '').startswith('tensorflow.contrib'):
      continue
    uses = sum(1 for r in replaced_roots if r == local)
    if remaining.get(local, 0) > uses:
      continue
    for node in syntax.in_source_order(module.tree):
      if not isinstance(node, (ast.Import, ast.ImportFrom)) or any(a.name == '*' for a in node.names):
        continue
      names = [a for a in node.names if (a.asname or a.name.split('.')[0]) == local]
      if not names:
        continue
      original = f.node(node)
      statement = f.statement_of(original)
      if len(node.names) == 1 and len(statement.body) == 1:
        port.edits[f].remove(statement)
      else:
        kept = [a for a, ast_alias in zip(original.names, node.names) if ast_alias not in names]
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        port.edits[f].replace(original, lambda updated, kept=kept: updated.with_changes(names=kept))
      port.change(f, original, RULE, 'removed the import of %s (no longer used)' % local)
      port.take(module, node, ('contrib-name',))
