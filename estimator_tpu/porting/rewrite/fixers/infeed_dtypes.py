"""TPU rule 15 (TPU dtypes): float64 in-memory data cast to float32 on the host, as it enters the input pipeline:
the TPU infeed takes no float64 (NumPy and pandas default to it)."""
import libcst as cst

from estimator_tpu.porting.program import dtypes
from estimator_tpu.porting.program import inputs
from estimator_tpu.porting.rewrite import edits as edits_lib
from estimator_tpu.porting.rewrite import templates

# The report's findings about the dtypes of the data at a Dataset.from_tensor_slices call.
CODES = ('in-memory-dtype', 'in-memory-dtype-unseen', 'strings-to-the-device', 'uncast-input-dtype')


def fix(port):
  """In-memory data the report finds float64, or cannot tell (NumPy and pandas default to float64), is cast from
  float64 to float32 on the host as it enters the input pipeline."""
  # Ports rule 15 (TPU dtypes).
  sources = []  # (module, Dataset.from_tensor_slices call) in the functions that batch the input the port changes
  for plan in port.plans.inputs:
    batching = set(id(batch.fn) for batch in plan.batches)
    if plan.proper is None or not batching:
      continue
    for module, fn, node, problems in inputs.read_input_fn(port.program, plan.proper).in_memory:
      if id(fn) in batching and not any(node is seen for _, seen, _ in sources):
        sources.append((module, node, problems))
  for module, node, problems in sources:
    if not port.findings(module, node, CODES):
      continue
    if any(kind != dtypes.FLOAT64 for kind, _, _ in problems):
      continue  # uint8 or strings there too: a float32 cast is not all this statement needs (left as a TODO)
    f = port.file_of(module)
    call = f.node(node)
    data = call.args[0].value if call.args else None
    if data is None or (isinstance(data, cst.Call) and data.args and
                        edits_lib.code_of(data.args[0].value) == 'tpu_float32'):
      continue  # cast already (a port of a port)
    port.add_helper(f, 'float32', templates.FLOAT32_HELPER, 15,
                    'the TPU infeed takes no float64 (NumPy and pandas default to it).')
    map_structure = cst.parse_expression('%s.nest.map_structure' % port.tf_v1(f))
    port.edits[f].replace(data, lambda updated, map_structure=map_structure: cst.Call(func=map_structure, args=[
        cst.Arg(cst.Name('tpu_float32'), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(' '))),
        cst.Arg(updated)]))
    port.edits[f].comment(f.statement_of(call), edits_lib.rule_comment(
        15, 'the TPU infeed takes no float64: tpu_float32 casts it on the host.'))
    port.take(module, node, CODES)
    port.change(f, call, 15, 'float64 in-memory data cast to float32 (tpu_float32)')
