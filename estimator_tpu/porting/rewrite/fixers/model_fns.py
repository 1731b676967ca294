"""The model_fns of the estimators the port changes, each ported rule by rule: the example weights of padded
evaluation (rule 9, example_weights), the spec and its metrics (rule 5, estimator_spec), the optimizer (rule 6,
cross_shard), the summaries (rule 7, summaries), and the signature (rule 3): model_fn(..., params) with config
when host_call writes to config.model_dir."""
import ast

import libcst as cst

from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite.fixers import cross_shard
from estimator_tpu.porting.rewrite.fixers import estimator_spec
from estimator_tpu.porting.rewrite.fixers import example_weights
from estimator_tpu.porting.rewrite.fixers import model_fn_code
from estimator_tpu.porting.rewrite.fixers import summaries

SIGNATURE_CODES = ('model-fn-without-params',)


def fix(port):
  done = set()
  for site in port.estimators:
    for target in port.uses.model_fns_of(site):
      if isinstance(target.node, ast.Lambda) or id(target.node) in done:
        continue
      done.add(id(target.node))
      code = model_fn_code.ModelFnCode(port, target.module, target.node, site in port.exact_eval)
      if site.kind == 'tpu':
        cross_shard.port_tpu_code(code)  # TPUEstimator code already: only an optimizer wrapped off the TPU too
        if 'params' in code.needs:
          signature(code)
      else:
        _port(code)


def _port(code):
  if code.exact:
    example_weights.take_weights(code)
  for call in code.calls():
    if estimator_spec.is_spec(code, call):
      estimator_spec.port_spec(code, call)
  cross_shard.port(code)
  summaries.port(code)
  code.remove_moved()
  signature(code)


def signature(code):
  """model_fn(..., params[, config]): TPUEstimator passes params (and config) by name."""
  # Ports rule 3 (params).
  needs = ['params'] + (['config'] if 'config' in code.needs else [])
  missing = [n for n in needs if n not in code.param_names]
  for statement in code.statements:  # `del params` at the top: the port reads params now
    if isinstance(statement, ast.Delete) and 'params' in code.needs:
      _undelete(code, statement)
  if not missing:
    code.port.take(code.module, code.fn, SIGNATURE_CODES)
    return

  def add(updated):
    names = [p.name.value for p in updated.params.params]
    position = max([names.index(n) + 1 for n in ('features', 'labels', 'mode', 'params') if n in names] or
                   [len(names)])
    return updated.with_changes(params=insert_params(updated.params, position, missing))

  code.edits.replace(code.node, add)
  code.port.take(code.module, code.fn, SIGNATURE_CODES)
  code.port.change(code.f, code.node, 3, 'model_fn takes %s' % ', '.join(missing))
  why = 'TPUEstimator passes params (use_tpu, the per-core batch size)'
  if 'config' in missing:
    why += '; config.model_dir: where host_call writes'
  code.edits.comment(code.node, edits_lib.rule_comment(3, why + '.'))


def _undelete(code, statement):
  """`del params` (or `del labels, params`) without params: the port reads it now."""
  small = code.f.node(statement)
  line = code.f.statement_of(small)
  if line.body[0] is not small:
    return
  targets = [e.value for e in small.target.elements] if isinstance(small.target, cst.Tuple) else [small.target]
  kept = [t for t in targets if not (isinstance(t, cst.Name) and t.value == 'params')]
  if len(kept) == len(targets):
    return
  if not kept:
    code.edits.remove(line)
    return
  text = 'del %s' % ', '.join(edits_lib.code_of(t) for t in kept)
  code.edits.replace(small, lambda updated: cst.parse_statement(text + '\n').body[0])


def insert_params(parameters, position, names):
  """Parameters with plain parameters `names` inserted at `position`, commas as the others have them. After a
  parameter with a default (`def model_fn(features, labels, mode=ModeKeys.TRAIN)`) each gets the default None, as
  Python requires: TensorFlow passes params and config by keyword (estimator.py, _call_model_fn)."""
  params = list(parameters.params)
  trailing = params[-1].comma if params else cst.MaybeSentinel.DEFAULT
  defaulted = any(param.default is not None for param in params[:position])
  new = [cst.Param(cst.Name(name), default=cst.Name('None') if defaulted else None,
                   equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(''),
                                         whitespace_after=cst.SimpleWhitespace('')) if defaulted else
                   cst.MaybeSentinel.DEFAULT) for name in names]
  params[position:position] = new
  separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(' '))
  for index, param in enumerate(params):
    if index < len(params) - 1:
      if param.comma is cst.MaybeSentinel.DEFAULT or param in new:
        params[index] = param.with_changes(comma=separator)
    else:
      params[index] = param.with_changes(comma=trailing)
  return parameters.with_changes(params=params)


