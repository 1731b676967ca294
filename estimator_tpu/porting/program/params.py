"""What an estimator's `params` holds: a dict (and its keys), an HParams, or something TPUEstimator cannot use.

TPUEstimator adds `batch_size`, `use_tpu` and `context` to params itself: it refuses params that already hold
`batch_size` or `context` (`_RESERVED_PARAMS_KEYS`, ValueError in TPUEstimator.__init__), tests `key in params` and
stores with `params[key] = value` (HParams: set_hparam), so an argparse Namespace, absl's FLAGS or an object fails
(tpu_estimator.py, TPUEstimator.__init__ and _add_item_to_params).
"""
import ast
import collections

from estimator_tpu.porting.program import apis
from estimator_tpu.porting.program import containers
from estimator_tpu.porting.program import neighbours
from estimator_tpu.porting.program import syntax
from estimator_tpu.porting.program import values

RESERVED_KEYS = ('batch_size', 'context')
DICT, HPARAMS, NAMESPACE, FLAGS, OBJECT, UNKNOWN = 'dict', 'HParams', 'argparse Namespace', 'FLAGS', 'object', '?'
# Methods that let `key in obj` and `obj[key] = value` work on an object.
_MAPPING_METHODS = ('__contains__', '__iter__', '__getitem__', 'set_hparam')


class Params(object):
  """kinds: the kinds of value params can be; entries: key -> [(Value of the key's node, Value of its value)]."""

  def __init__(self):
    self.kinds = set()
    self.entries = collections.OrderedDict()
    self.what = None  # Value of a non-dict origin, for the message

  def add(self, key, key_value, value):
    self.entries.setdefault(key, []).append((key_value, value))

  def values_of(self, key):
    return [value for _, value in self.entries.get(key, [])]


def argument(call, kind):
  """The params argument of an estimator constructor (Estimator and TPUEstimator: keyword or 4th positional)."""
  if kind in ('estimator', 'tpu'):
    return syntax.argument(call, 3, 'params')
  return syntax.keyword(call, 'params')


def describe(program, module, fn, node):
  params = Params()
  for origin in values.origins(program, module, fn, node):
    _describe(program, origin, params, 0)
  if isinstance(node, ast.Name):
    _add_mutations(program, module, fn, node.id, params)
  return params


def _describe(program, origin, params, depth):
  module, fn, node = origin
  if isinstance(node, ast.Dict):
    params.kinds.add(DICT)
    for key, value in zip(node.keys, node.values):
      literal = syntax.literal(key) if key is not None else None
      if isinstance(literal, str):
        params.add(literal, values.Value(module, fn, key), values.Value(module, fn, value))
    return
  every = every_option(program, module, fn, node)
  if every:
    # FLAGS.flag_values_dict(), vars(args), args.__dict__: every flag or option the program defines is a key.
    params.kinds.add(DICT)
    for name, where in defined_flags(program) if every == FLAGS else argparse_options(program):
      params.add(name, values.Value(module, fn, node), where)
    return
  if not isinstance(node, ast.Call):
    canonical = program.canonical(module, fn, node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if apis.is_flags(canonical):
      params.kinds.add(FLAGS)
      params.what = origin
    elif syntax.literal(node) is None and syntax.is_literal(node):
      params.kinds.add(DICT)  # params=None: Estimator uses {}
    else:
      params.kinds.add(UNKNOWN)
    return
  canonical = program.canonical(module, fn, node.func) or ''
  func_name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, 'attr', '')
  if apis.is_hparams(canonical) or (not canonical and func_name == 'HParams'):
    params.kinds.add(HPARAMS)
    _add_keywords(node, module, fn, params)
    _add_unpacked(program, node, module, fn, params, depth)
  elif func_name == 'dict' and not canonical:
    params.kinds.add(DICT)
    _add_keywords(node, module, fn, params)
    _add_unpacked(program, node, module, fn, params, depth)
    if node.args and depth < 3:
      for inner in values.origins(program, module, fn, node.args[0]):
        _describe(program, inner, params, depth + 1)
  elif func_name in ('parse_args', 'parse_known_args') and isinstance(node.func, ast.Attribute):
    params.kinds.add(NAMESPACE)
    params.what = origin
  else:
    found = program.callables.class_of(module, fn, node)
    if found and not any(program.callables.find_method(found[0], found[1], name) for name in _MAPPING_METHODS):
      params.kinds.add(OBJECT)
      params.what = origin
    else:
      params.kinds.add(UNKNOWN)


def _parses_arguments(node):
  return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
      node.func.attr in ('parse_args', 'parse_known_args')


def parsed_namespace(program, module, fn, node):
  """Whether `node` holds what argparse's parse_args()/parse_known_args() returned (the first of its pair)."""
  return any(_parses_arguments(inner.node) for inner in values.origins(program, module, fn, node))


def every_option(program, module, fn, node):
  """FLAGS for `FLAGS.flag_values_dict()`, NAMESPACE for `vars(args)` or `args.__dict__` of a parsed argparse
  Namespace: a dict holding every flag or option the program defines; else None."""
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'flag_values_dict':
    return FLAGS if apis.is_flags(program.canonical(module, fn, node.func.value)) else None
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == 'vars' and \
      len(node.args) == 1 and not program.canonical(module, fn, node.func):
    namespace = node.args[0]
  elif isinstance(node, ast.Attribute) and node.attr == '__dict__':
    namespace = node.value
  else:
    return None
  return NAMESPACE if parsed_namespace(program, module, fn, namespace) else None


def flag_read(program, module, fn, node, parameters=True):
  """The flag a value reads: FLAGS.x, args.x of a parsed command line, x.y of a parameter (the flag values handed
  down: fv.eval_steps, flags_obj.train_steps; only with `parameters`), or d['x'] of a dict of every option
  (vars(args), args.__dict__, FLAGS.flag_values_dict()); else None."""
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
    if apis.is_flags(program.canonical(module, fn, node.value)):
      return node.attr
    if parameters and node.value.id not in ('self', 'cls') and program.lookup(module, fn, node.value.id)[0] == 'param':
      return node.attr
    # args.max_steps of `args = parser.parse_args()` (or the first of parse_known_args())
    return node.attr if parsed_namespace(program, module, fn, node.value) else None
  if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
    key = syntax.subscript_key(node)
    if isinstance(key, str) and any(every_option(program, o.module, o.fn, o.node)
                                    for o in values.origins(program, module, fn, node.value)):
      return key
  return None


def defined_flags(program):
  """(flag name, Value of its DEFINE_* call) for every absl / tf.flags flag the scanned files define."""
  found = []
  for module, fn, call in program.calls():
    defined = neighbours.absl_flag(module, call)
    if defined is not None:
      found.append((defined[0], values.Value(module, fn, call)))
  return found


def argparse_options(program):
  """(destination, Value of its add_argument call) for every option an argparse parser of the scanned files adds."""
  found = []
  for module, fn, call in program.calls_named('add_argument'):
    dest, _ = neighbours.argparse_option(call)
    if dest:
      found.append((dest, values.Value(module, fn, call)))
  return found


def _add_keywords(call, module, fn, params):
  for keyword in call.keywords:
    if keyword.arg:
      params.add(keyword.arg, values.Value(module, fn, keyword.value), values.Value(module, fn, keyword.value))


def _add_unpacked(program, call, module, fn, params, depth):
  """The keys of a mapping unpacked into the call (`HParams(**vars(args))`: every option a key); its kind stays the
  call's."""
  if depth >= 3:
    return
  for keyword in call.keywords:
    if keyword.arg is None:
      _add_keys_of(program, module, fn, keyword.value, params, depth)


def _add_keys_of(program, module, fn, mapping, params, depth):
  """The keys (and values) of a mapping expression, added to params; the kind stays params' own."""
  inner = Params()
  for origin in values.origins(program, module, fn, mapping):
    _describe(program, origin, inner, depth + 1)
  for key, pairs in inner.entries.items():
    for pair in pairs:
      params.add(key, *pair)


def _add_mutations(program, module, fn, name, params):
  for owner_module, owner, what, where, value in containers.stored_into(program, module, fn, name):
    if what == 'update':
      _add_keys_of(program, owner_module, owner, value, params, 0)  # `params.update(DEFAULT_PARAMS)`
    elif what == 'item':
      key = syntax.literal(where.slice.value if type(where.slice).__name__ == 'Index' else where.slice)
      if isinstance(key, str):
        params.add(key, values.Value(owner_module, owner, where), values.Value(owner_module, owner, value))
    elif what == 'hparam' and where.args:
      key = syntax.literal(where.args[0])
      if isinstance(key, str):
        params.add(key, values.Value(owner_module, owner, where), values.Value(owner_module, owner, value))


def not_a_mapping(params):
  """The kind of a params value TPUEstimator cannot add its keys to, else None."""
  for kind in (NAMESPACE, FLAGS, OBJECT):
    if kind in params.kinds:
      return kind
  return None


def reads_key(node, key, params_names=('params',)):
  """True for `params['key']`, `params.key` (HParams) and `params.get('key'...)` reads."""
  if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in params_names:
    return syntax.subscript_key(node) == key
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in params_names:
    return node.attr == key
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get' and \
      isinstance(node.func.value, ast.Name) and node.func.value.id in params_names and node.args:
    return syntax.literal(node.args[0]) == key
  return False


def key_read(node, params_names=('params',)):
  """The key of a params read (see reads_key), else None."""
  if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in params_names:
    key = syntax.subscript_key(node)
    return key if isinstance(key, str) else None
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in params_names and \
      isinstance(node.ctx, ast.Load):
    return node.attr
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'get' and \
      isinstance(node.func.value, ast.Name) and node.func.value.id in params_names and node.args:
    key = syntax.literal(node.args[0])
    return key if isinstance(key, str) else None
  return None
