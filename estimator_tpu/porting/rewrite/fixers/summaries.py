"""TPU rule 7 (summaries on the host): the tf.summary calls of a model_fn written by a host_call function of its
TRAIN TPUEstimatorSpec, every step, on the host; the statements that compute their values on the host move with
them."""
import ast

import libcst as cst

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import templates
from estimator_tpu.porting.rewrite.fixers import model_fn_code

CODES = ('summary-in-model-fn', 'summaries-of-optimize-loss')
SUMMARY_KINDS = ('scalar', 'histogram', 'image', 'text', 'audio')


def port(code):
  # Ports rule 7 (summaries on the host).
  f = code.f
  summaries = []
  for statement in code.statements:
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
      continue
    if len(code.statement(statement).body) != 1:
      continue
    call = statement.value
    canonical = code.canonical(call.func) or ''
    if canonical.startswith('tensorflow.summary.') and code.port.findings(code.module, call, CODES):
      summaries.append((statement, call, canonical.rsplit('.', 1)[1]))
  if not summaries:
    return
  train_specs = [c for c in code.calls() if apis.last(code.canonical(c.func) or '').endswith('EstimatorSpec') and
                 syntax.keyword(c, 'train_op') is not None]
  if len(train_specs) != 1:
    for statement, call, _ in summaries:
      code.port.todo(code.module, call, CODES, 7, 'write this summary from a host_call function of '
                     'TPUEstimatorSpec (the TRAIN spec could not be told here)')
    return
  spec = train_specs[0]
  target = code.statement(spec)
  host_params, tensors, lines, copies = ['global_step'], [], [], []
  for statement, call, kind in summaries:
    try:
      line, inputs = _summary_line(code, statement, call, kind, spec, host_params, tensors)
    except model_fn_code.Failed as e:
      code.port.todo(code.module, call, CODES, e.rule, e.what)
      continue
    lines.append(line)
    for copy in inputs:
      if not any(copy is c for c in copies):
        copies.append(copy)
    code.moved.append(statement)
    code.port.take(code.module, call, CODES)
  if not lines:
    return
  copies.sort(key=lambda s: s.lineno)
  code.moved += copies
  code.needs.update(['params', 'config'])
  tf2 = code.port.tf_v2(f)
  name = code.port.new_name(f, 'tpu_host_call')
  function = edits_lib.statements(templates.HOST_CALL.format(
      name=name, params=', '.join(host_params), tf=code.tf, tf2=tf2, logdir='config.model_dir'))[0]
  writer, with_statement = function.body.body
  with_statement = with_statement.with_changes(body=with_statement.body.with_changes(
      body=lines + list(with_statement.body.body)))
  function = function.with_changes(body=function.body.with_changes(
      body=[code.statement(c) for c in copies] + [writer, with_statement]))
  step = '%s.reshape(%s.train.get_global_step(), [1])' % (code.tf, code.tf)
  host_call = code.port.new_name(f, 'host_call')
  text = '%s = (%s, [%s])' % (host_call, name, ', '.join([step] + tensors))
  if f.indent_of(target) + len(text) > edits_lib.MAX_COLUMNS:
    text = '%s = (%s,\n%s[%s])' % (host_call, name, ' ' * (len(host_call) + 4), ', '.join([step] + tensors))
  assignment = cst.parse_statement(text + '\n')
  function = edits_lib.commented(function, edits_lib.rule_comment(
      7, 'summary ops cannot run on the TPU: host_call writes them on the host, every step.'), f.indent_of(target))
  code.edits.insert_before(target, [function, assignment])
  original = f.node(spec)
  column = f.column(original)
  code.edits.replace(original, lambda updated: edits_lib.add_keywords(updated, [('host_call', cst.Name(host_call))],
                                                                      column))
  code.port.change(f, original, 7, '%d summar%s written by host_call' % (len(lines), 'y' if len(lines) == 1 else
                                                                         'ies'))


def _summary_line(code, statement, call, kind, spec, host_params, tensors):
  """The tf.compat.v2.summary statement for one v1 summary, and the statements of its slice; the inputs it
  adds go to host_params and tensors."""
  f = code.f
  if kind not in SUMMARY_KINDS or syntax.has_star_args(call):
    raise model_fn_code.Failed(7, 'write this summary from a host_call function of TPUEstimatorSpec (on the host)')
  if any(k.arg in ('family', 'collections') for k in call.keywords) or \
      len(call.args) > (3 if kind == 'image' else 2):
    raise model_fn_code.Failed(7, 'write this summary (with its family/collections) from a host_call function')
  written = code.statement(statement)
  target = code.statement(spec)
  if f.line(written) > f.line(target) or not _inside(f, target, f.parent(written)):
    raise model_fn_code.Failed(7, 'write this summary from a host_call function (it is not on the way to the TRAIN '
                               'spec)')
  tag = syntax.argument(call, 0, 'name')
  value = syntax.argument(call, 1, {'scalar': 'tensor', 'histogram': 'values'}.get(kind, 'tensor'))
  if tag is None or value is None:
    raise model_fn_code.Failed(7, 'write this summary from a host_call function')
  slice_statements, inputs = code.slice([value], [], statement)
  tf = code.tf
  extra = ''
  outputs = syntax.argument(call, 2, 'max_outputs') if kind == 'image' else None
  if outputs is not None:
    extra = ', max_outputs=%s' % edits_lib.code_of(f.node(outputs))
  value_code = edits_lib.code_of(f.node(value))
  if not slice_statements:
    # Computed on the TPU: the value itself goes to the host, a scalar with a leading dimension of 1.
    param = value.id if isinstance(value, ast.Name) else _identifier(tag, host_params)
    param = param if param not in host_params else _identifier(tag, host_params)
    host_params.append(param)
    tensors.append('%s.reshape(%s, [1])' % (tf, value_code) if kind == 'scalar' else value_code)
    data = '%s.reduce_mean(%s)' % (tf, param) if kind == 'scalar' else param
  else:
    for name in inputs:
      if code.not_a_tensor(name, statement):
        raise model_fn_code.Failed(7, 'write this summary from a host_call function (it reads `%s`, not a '
                                   'tensor)' % name)
      if name not in host_params:
        host_params.append(name)
        tensors.append(name)
    data = value_code
  text = '%s.summary.%s(%s, %s, step=global_step[0]%s)\n' % (code.port.tf_v2(f), kind,
                                                            edits_lib.code_of(f.node(tag)), data, extra)
  line = cst.parse_statement(text).with_changes(leading_lines=list(written.leading_lines))
  return line, slice_statements


def _inside(f, node, block):
  """Whether `block` (an IndentedBlock or the function body) contains the LibCST node `node`."""
  current = f.parent(node)
  while current is not None:
    if current is block:
      return True
    current = f.parent(current)
  return False


def _identifier(tag, taken):
  text = syntax.literal(tag)
  base = ''.join(c if c.isalnum() else '_' for c in text) if isinstance(text, str) else 'value'
  base = base.strip('_') or 'value'
  if base[0].isdigit():
    base = 'summary_' + base
  name, count = base, 1
  while name in taken:
    count += 1
    name = '%s_%d' % (base, count)
  return name
