"""TPU rule 19 (contrib names): tf.contrib's TPU-era names to their TF 1.15 homes (which TF 2's tf.compat.v1 and
tf.compat.v2 keep). A contrib name with no home here is left with a TODO naming the port report's replacement.
"""
import libcst as cst

from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import source as source_lib

RULE = 19
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


def fix(port):
  for f in port.files:
    _fix_file(port, f)


def _fix_file(port, f):
  # Ports rule 19 (contrib names).
  edits = port.edits[f]
  replaced_roots = []
  for node in list(f.positions):
    if isinstance(node, cst.Call):
      canonical = f.canonical(node.func) or ''
      if canonical.endswith(('.batch_and_drop_remainder', '.padded_batch_and_drop_remainder')) and \
          canonical.startswith('tensorflow.contrib.data.'):
        _batch_and_drop(port, f, node, canonical, replaced_roots)
      elif canonical == 'tensorflow.contrib.summary.always_record_summaries' and not node.args:
        code = '%s.summary.record_if(True)' % port.tf_v2(f)
        edits.replace(node, lambda updated, code=code: edits_lib.expression(code))
        _done(port, f, node, 'tf.contrib.summary.always_record_summaries() -> %s' % code)
        replaced_roots.append(source_lib.root_name(node.func))
      continue
    if not isinstance(node, (cst.Attribute, cst.Name)) or _inside_chain(f, node) or _in_import(f, node):
      continue
    canonical = f.canonical(node) or ''
    if not canonical.startswith('tensorflow.contrib.'):
      continue
    if canonical in SUMMARY_WITH_FAMILY and _has_family(f, node):
      port.todo(f, node, RULE, '`%s` passes a family: write the tag with its prefix in tf.compat.v2.summary.%s'
                % (source_lib.dotted(node), canonical.rsplit('.', 1)[1]))
      continue
    if canonical == 'tensorflow.contrib.summary.always_record_summaries':
      continue  # the call was replaced above
    rename = _rename_for(canonical)
    if rename is None:
      continue  # the port report's advice stays; nothing required is left unmarked (run() makes TODOs of those)
    api, new = rename
    alias = port.tf_v1(f) if api == V1 else port.tf_v2(f)
    code = '%s.%s' % (alias, new)
    parent = f.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
      edits.replace(parent, lambda updated, code=code, call=parent: edits_lib.renamed(updated, call, code, f))
    else:
      edits.replace(node, lambda updated, code=code: edits_lib.expression(code))
    _done(port, f, node, '%s -> %s' % (source_lib.dotted(node), code))
    replaced_roots.append(source_lib.root_name(node))
  _remove_unused_imports(port, f, replaced_roots)


def _rename_for(canonical):
  best = None
  for prefix, rename in RENAMES:
    if canonical == prefix or canonical.startswith(prefix + '.'):
      if best is None or len(prefix) > len(best[0]):
        best = (prefix, (rename[0], rename[1] + canonical[len(prefix):]))
  return best[1] if best else None


def _done(port, f, node, what):
  port.change(f, node, 19, what)
  port.take(f, node, 19)


def _batch_and_drop(port, f, call, canonical, replaced_roots):
  """`ds.apply(tf.contrib.data.batch_and_drop_remainder(n))` -> `ds.batch(n, drop_remainder=True)`."""
  parent_arg = f.parent(call)
  apply_call = f.parent(parent_arg) if isinstance(parent_arg, cst.Arg) else None
  if not (isinstance(apply_call, cst.Call) and isinstance(apply_call.func, cst.Attribute)
          and apply_call.func.attr.value == 'apply' and len(apply_call.args) == 1):
    port.todo(f, call, RULE, 'write `dataset.batch(batch_size, drop_remainder=True)` instead')
    return
  method = 'padded_batch' if 'padded' in canonical else 'batch'

  def rebuild(updated):
    inner = updated.args[0].value
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in inner.args]
    args = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' '))) for a in args]
    args.append(cst.Arg(keyword=cst.Name('drop_remainder'), value=cst.Name('True'), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(''), whitespace_after=cst.SimpleWhitespace(''))))
    return updated.with_changes(func=updated.func.with_changes(attr=cst.Name(method)), args=args)

  port.edits[f].replace(apply_call, rebuild)
  _done(port, f, call, '%s -> Dataset.%s(..., drop_remainder=True)' % (source_lib.dotted(call.func), method))
  replaced_roots.append(source_lib.root_name(call.func))
  port.take(f, call, 4)


def _has_family(f, node):
  call = f.parent(node)
  if not isinstance(call, cst.Call) or call.func is not node:
    return False
  positional = [a for a in call.args if a.keyword is None]
  return len(positional) > 2 or any(a.keyword is not None and a.keyword.value == 'family' for a in call.args)


def _inside_chain(f, node):
  parent = f.parent(node)
  return isinstance(parent, cst.Attribute) and parent.value is node


def _in_import(f, node):
  return f.enclosing(node, (cst.Import, cst.ImportFrom)) is not None


def _remove_unused_imports(port, f, replaced_roots):
  """Imports of tf.contrib names that no code uses any more."""
  if not replaced_roots:
    return
  remaining = {}
  for node in f.positions:
    if isinstance(node, cst.Name) and not _in_import(f, node):
      remaining[node.value] = remaining.get(node.value, 0) + 1
  for local in set(replaced_roots):
    if local is None or not (f.raw_aliases.get(local, '')).startswith('tensorflow.contrib'):
      continue
    uses = sum(1 for r in replaced_roots if r == local)
    if remaining.get(local, 0) > uses:
      continue
    for node in f.positions:
      if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(getattr(node, 'names', None),
                                                                           cst.ImportStar):
        names = [a for a in node.names if (a.asname.name.value if a.asname else
                                           source_lib.dotted(a.name).split('.')[0]) == local]
        if not names:
          continue
        statement = f.statement_of(node)
        if len(node.names) == 1 and len(statement.body) == 1:
          port.edits[f].remove(statement)
        else:
          kept = [a for a in node.names if a not in names]
          kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
          port.edits[f].replace(node, lambda updated, kept=kept: updated.with_changes(names=kept))
        port.change(f, node, 19, 'removed the import of %s (no longer used)' % local)
        port.take(f, node, 19)
