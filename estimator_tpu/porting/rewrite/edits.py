"""Edits to one file's concrete syntax tree, applied in one pass: node replacements, statements inserted before
or after a statement, statements removed, and comment lines put above a statement. Everything not edited is
printed back byte for byte.
"""
import collections
import textwrap

import libcst as cst
from libcst import metadata

from estimator_tpu import rules

MAX_COLUMNS = 100  # the width of the lines the rewrite writes (never re-wraps the user's own)


class Edits(object):

  def __init__(self, source):
    self.source = source
    self.replacements = collections.defaultdict(list)  # node -> [fn(updated node) -> new node]
    self.before = collections.defaultdict(list)  # statement -> [statements]
    self.after = collections.defaultdict(list)
    self.removed = {}  # statement -> whether its comments stay (for the next statement)
    self.comments = collections.defaultdict(list)  # statement -> [comment text lines, '# ...']
    self.header = []  # statements put after the module's imports (helpers, settings), in order

  def replace(self, node, fn):
    self.replacements[node].append(fn)

  def insert_before(self, statement, statements):
    self.before[statement].extend(statements)

  def insert_after(self, statement, statements):
    self.after[statement].extend(statements)

  def remove(self, statement, keep_comments=True):
    """Removes a statement; its comment lines go to the next one unless the statement moved (with them)."""
    self.removed[statement] = keep_comments

  def comment(self, statement, text):
    """Puts `text` (one comment, wrapped to the width) above `statement`: one comment per rule and statement."""
    lines = comment_lines(text, self.source.indent_of(statement))
    rule = text.split(')', 1)[0] if text.startswith('TPU rule') else text
    if not any(existing[0][2:].startswith(rule) for existing in self.comments[statement]):
      self.comments[statement].append(lines)

  def add_header(self, statements):
    self.header.extend(statements)

  def empty(self):
    return not (self.replacements or self.before or self.after or self.removed or self.comments or self.header)

  def apply(self):
    """The edited module's source text."""
    if self.header:
      self._place_header()
    code = self.source.tree.visit(_Apply(self)).code
    if self.source.tree.default_indent == '\t':
      code = _tabbed(code, set(self.source.text.splitlines()))
    return code

  def _place_header(self):
    """The header goes after the module's docstring and imports: new imports right after its TensorFlow import
    (or its last import), the rest after all imports."""
    body = self.source.tree.body
    last, tf_import = None, None
    for index, statement in enumerate(body):
      if _is_docstring(statement, index) or _is_import_line(statement):
        last = statement
        if _is_import_line(statement) and 'tensorflow' in cst.Module(body=[statement]).code:
          tf_import = statement
      elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)) or _is_main_block(statement):
        break
      # else: code between imports (sys.path.insert(...), flags): the imports after it still come first
    imports = [s for s in self.header if _is_import_line(s)]
    rest = [s for s in self.header if not _is_import_line(s)]
    if last is None:
      self.before[body[0]][:0] = imports + rest
      return
    self.after[tf_import if tf_import is not None else last].extend(imports)
    self.after[last].extend(rest)
    follower = body[body.index(last) + 1] if body.index(last) + 1 < len(body) else None
    if rest and follower is not None and isinstance(rest[-1], (cst.FunctionDef, cst.ClassDef)):
      blank = sum(1 for line in follower.leading_lines if line.comment is None)
      if blank < 2:
        self.replace(follower, lambda updated: updated.with_changes(
            leading_lines=[cst.EmptyLine()] * (2 - blank) + list(updated.leading_lines)))


def _tabbed(code, original_lines):
  """A tab-indented file's new lines indented with tabs: a continuation line's hanging indent of 4*k spaces (the
  port writes its calls so) becomes k tabs; alignment with a bracket keeps its spaces. A new line above a line of
  the file indented with spaces (a block of a file that mixes both) keeps its spaces, as that line does."""
  lines = code.splitlines(True)
  for index, line in enumerate(lines):
    if line.rstrip('\r\n') in original_lines:
      continue
    below = next((other for other in lines[index + 1:] if other.strip() and
                  other.rstrip('\r\n') in original_lines), '')
    if line.startswith(' ') and below.startswith(' '):
      continue
    body = line.lstrip('\t')
    tabs = len(line) - len(body)
    spaces = len(body) - len(body.lstrip(' '))
    if spaces and spaces % 4 == 0:
      lines[index] = '\t' * (tabs + spaces // 4) + body[spaces:]
  return ''.join(lines)


def comment_lines(text, indent):
  """'# text' wrapped to MAX_COLUMNS at `indent`; continuation lines are comments too."""
  width = max(40, MAX_COLUMNS - indent - 2)
  return ['# ' + line for line in textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)]


def commented(statement, text, indent):
  """`statement` with the comment `text` (wrapped at `indent`) as its last leading lines."""
  return statement.with_changes(leading_lines=list(statement.leading_lines) + _empty_lines(comment_lines(text,
                                                                                                         indent)))


def rule_comment(rule, why):
  """'TPU rule N (name): why', the form the code cites a rule in."""
  return '%s: %s' % (rules.tag(rule), why)


def todo_comment(rule, what):
  return 'TODO(tpu port, rule %d): %s' % (rule, what)


def _empty_lines(lines):
  return [cst.EmptyLine(indent=True, comment=cst.Comment(line)) for line in lines]


class _Apply(cst.CSTTransformer):

  def __init__(self, edits):
    super(_Apply, self).__init__()
    self.edits = edits
    self.unit = len(edits.source.tree.default_indent)
    self.original_lines = set(edits.source.text.splitlines())
    # What the user wrote, whatever its indentation (a file can mix 2- and 4-space blocks, so the indentation
    # fit_tree computes for a nested statement need not be the file's): never re-wrapped.
    self.original_text = set(line.strip() for line in self.original_lines)

  def _fit(self, statement, indent):
    return fit_tree(statement, indent, self.unit, self.original_text, self.edits.source.tree.default_indent)

  def on_leave(self, original_node, updated_node):
    updated = super(_Apply, self).on_leave(original_node, updated_node)
    for fn in self.edits.replacements.get(original_node, ()):
      updated = fn(updated)
    if isinstance(original_node, (cst.IndentedBlock, cst.Module)) and not isinstance(updated, cst.RemovalSentinel):
      updated = updated.with_changes(body=self._statements(original_node.body, updated.body,
                                                           isinstance(original_node, cst.IndentedBlock)))
    return updated

  def _statements(self, originals, updated, in_block):
    edits = self.edits
    result = []
    carried = []  # comment lines of removed statements, kept for the next statement
    for original, current in zip(originals, updated):
      indent = self.edits.source.indent_of(original)
      inserted = [self._fit(s, indent) for s in _built(edits.before.get(original, ()))]
      if not original.deep_equals(current):
        current = self._fit(current, indent)
      if original in edits.removed:
        if edits.removed[original]:
          carried += list(getattr(original, 'leading_lines', ()))
        result += inserted + [self._fit(s, indent) for s in _built(edits.after.get(original, ()))]
        continue
      comments = _empty_lines([line for lines in edits.comments.get(original, ()) for line in lines])
      own = list(getattr(current, 'leading_lines', ()))
      if inserted:
        # What was inserted for a change goes above the statement, with the rule comment; the statement keeps
        # its own comments, and the blank lines that separated it from the code above now come first.
        blank = 0
        while blank < len(own) and own[blank].comment is None:
          blank += 1
        first = inserted[0]
        inserted[0] = first.with_changes(leading_lines=own[:blank] + carried + list(first.leading_lines))
        current = current.with_changes(leading_lines=own[blank:] + comments)
        result += inserted
      else:
        current = current.with_changes(leading_lines=carried + own + comments)
      carried = []
      result.append(current)
      result += [self._fit(s, indent) for s in _built(edits.after.get(original, ()))]
    if in_block and not result:
      result = [cst.SimpleStatementLine([cst.Pass()])]
    return result


def _built(items):
  """Statements, some of them given as functions that build them once the code around them is edited."""
  result = []
  for item in items:
    result += list(item()) if callable(item) else [item]
  return result


def _is_docstring(statement, index):
  return index == 0 and isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
      isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, (cst.SimpleString,
                                                                                       cst.ConcatenatedString))


def _is_main_block(statement):
  return isinstance(statement, cst.If) and '__main__' in cst.Module(body=[]).code_for_node(statement.test)


def _is_import_line(statement):
  return isinstance(statement, cst.SimpleStatementLine) and all(
      isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body)


# --- building code --------------------------------------------------------------------------------------------------

def statements(code):
  """Statements parsed from code written with 4-space indents (printed with the file's own indentation)."""
  module = cst.parse_module(textwrap.dedent(code).strip('\n') + '\n')
  return list(module.visit(_UnindentedBlankLines()).body)


class _UnindentedBlankLines(cst.CSTTransformer):
  """Blank lines of inserted code print no indentation: no trailing whitespace where the code lands in a block."""

  def leave_EmptyLine(self, original_node, updated_node):
    if updated_node.comment is None and not updated_node.whitespace.value:
      return updated_node.with_changes(indent=False)
    return updated_node


def expression(code):
  return cst.parse_expression(code)


def add_keywords(call, keywords, column=None):
  """`call` with keyword arguments added at its end: [(name, expression node)]. `fit` lays them out."""
  args = list(call.args)
  before = call.whitespace_before_args
  comments = [line for line in getattr(before, 'empty_lines', ()) if line.comment is not None]
  below_comments = not args and comments and before.indent
  for name, value in keywords:
    new = cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(''), whitespace_after=cst.SimpleWhitespace('')))
    if args:
      previous = args[-1]
      if previous.comma is not cst.MaybeSentinel.DEFAULT:  # a trailing comma: the new argument keeps it
        new = new.with_changes(comma=previous.comma)
      # A line break after the last argument (the parenthesis on a line of its own) follows the new comma: no space.
      breaks = isinstance(previous.whitespace_after_arg, cst.ParenthesizedWhitespace)
      args[-1] = previous.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace('' if breaks else ' ')))
    args.append(new)
  if below_comments:
    # `RunConfig(\n    # a commented-out option\n)`: the arguments go below the comments, at their indentation,
    # and the parenthesis stays on a line of its own.
    closing = cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
                                          last_line=before.last_line)
    args[-1] = args[-1].with_changes(whitespace_after_arg=closing)
    return call.with_changes(args=args, whitespace_before_args=before.with_changes(
        last_line=comments[-1].whitespace))
  return call.with_changes(args=args)


def fit_tree(statement, indent, unit, original_text, default_indent):
  """`statement` with the calls on lines the rewrite made longer than MAX_COLUMNS laid out again (see fit),
  inside compound statements too. Lines the user wrote are left as they are."""
  if isinstance(statement, cst.SimpleStatementLine):
    return _fit_simple(statement, indent, original_text, default_indent)
  body = getattr(statement, 'body', None)
  if isinstance(body, cst.IndentedBlock):
    inner = [fit_tree(s, indent + unit, unit, original_text, default_indent) for s in body.body]
    statement = statement.with_changes(body=body.with_changes(body=inner))
  orelse = getattr(statement, 'orelse', None)
  if orelse is not None and isinstance(getattr(orelse, 'body', None), cst.IndentedBlock):
    statement = statement.with_changes(orelse=fit_tree(orelse, indent, unit, original_text, default_indent))
  return statement


def _fit_simple(statement, indent, original_text, default_indent):
  for _ in range(6):
    code = cst.Module(body=[statement], default_indent=default_indent).code
    lines = code.splitlines()
    long_lines = [number for number, line in enumerate(lines, 1)
                  if indent + len(line) > MAX_COLUMNS and line.strip() not in original_text
                  and not line.lstrip().startswith('#')]
    if not long_lines:
      return statement
    wrapper = metadata.MetadataWrapper(cst.Module(body=[statement], default_indent=default_indent))
    positions = wrapper.resolve(metadata.PositionProvider)
    line = long_lines[0]
    calls = [n for n, p in positions.items() if isinstance(n, cst.Call) and n.args and
             p.start.line <= line <= p.end.line]
    # The outermost call whose arguments are on the long line, that fit can still change.
    calls.sort(key=lambda n: (positions[n].start.line, positions[n].start.column))
    target, replacement = None, None
    # Aligned with a parenthesis, outermost call first; else a hanging indent, innermost call first.
    for hanging, order in ((False, calls), (True, calls)):
      for call in order:
        if len(code_of(call)) < 40:
          continue  # breaking a short call (tf.reshape(x, [1])) reads worse than breaking the one around it
        start = positions[call].start
        line_start = lines[start.line - 1]
        base = len(line_start) - len(line_start.lstrip(' '))
        new = fit(call, start.column, indent, base, allow_hanging=hanging)
        if not new.deep_equals(call) and (hanging or _fits(new, start.column, MAX_COLUMNS - indent)):
          target, replacement = call, new
          break
      if target is not None:
        break
    if target is None:
      return statement
    statement = wrapper.module.visit(_ReplaceOne(target, replacement)).body[0]
  return statement


class _ReplaceOne(cst.CSTTransformer):

  def __init__(self, target, replacement):
    super(_ReplaceOne, self).__init__()
    self.target = target
    self.replacement = replacement

  def on_leave(self, original_node, updated_node):
    updated = super(_ReplaceOne, self).on_leave(original_node, updated_node)
    return self.replacement if original_node is self.target else updated


def fit(call, start, indent, base=0, allow_hanging=True):
  """`call`, its arguments put on new lines where a line would pass MAX_COLUMNS: aligned with the first argument,
  or with the continuation lines the call already has, or all on the lines below the call (a hanging indent)
  when they do not fit beside it. `start` is the call's column relative to its statement's indentation `indent`,
  `base` the indentation of the line it starts on; line breaks already there are kept."""
  width = MAX_COLUMNS - indent
  if _fits(call, start, width) or not call.args:
    return call
  laid_out = _lay_out(call, start, width, base, hanging=isinstance(call.whitespace_before_args,
                                                                   cst.ParenthesizedWhitespace))
  if _fits(laid_out, start, width) or isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace) or \
      not allow_hanging:
    return laid_out
  # Hanging: the arguments start on the next line; breaks that were aligned with the parenthesis follow them.
  opening = start + len(code_of(call.func)) + 1
  args = []
  for index, arg in enumerate(call.args):
    if index == 0:  # it moves from the parenthesis to the next line: its own continuation lines move with it
      arg = arg.with_changes(value=arg.value.visit(_Shift(base + 4 - opening)))
    whitespace = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else None
    if isinstance(whitespace, cst.ParenthesizedWhitespace) and len(whitespace.last_line.value) == opening:
      arg = arg.with_changes(comma=arg.comma.with_changes(whitespace_after=whitespace.with_changes(
          last_line=cst.SimpleWhitespace(' ' * (base + 4)))))
    args.append(arg)
  hanging = call.with_changes(args=args, whitespace_before_args=cst.ParenthesizedWhitespace(
      first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
      last_line=cst.SimpleWhitespace(' ' * (base + 4))))
  return _lay_out(hanging, start, width, base, hanging=True)


class _Shift(cst.CSTTransformer):
  """Moves every continuation line in a subtree by `delta` columns."""

  def __init__(self, delta):
    super(_Shift, self).__init__()
    self.delta = delta

  def leave_ParenthesizedWhitespace(self, original_node, updated_node):
    columns = max(0, len(updated_node.last_line.value) + self.delta)
    return updated_node.with_changes(last_line=cst.SimpleWhitespace(' ' * columns))


def _fits(call, start, width):
  lines = code_of(call).splitlines()
  return start + len(lines[0]) <= width and all(len(line) <= width for line in lines[1:])


def _lay_out(call, start, width, base, hanging):
  args = list(call.args)
  opening = start + len(code_of(call.func)) + 1
  align = len(call.whitespace_before_args.last_line.value) if hanging else opening
  if not hanging:
    for arg in args[:-1]:
      whitespace = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else None
      if isinstance(whitespace, cst.ParenthesizedWhitespace):
        align = len(whitespace.last_line.value)
        break
  position = align
  for index, arg in enumerate(args):
    text = code_of(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    first, last = text.splitlines()[0], text.splitlines()[-1]
    if index > 0:
      previous = args[index - 1]
      whitespace = previous.comma.whitespace_after if isinstance(previous.comma, cst.Comma) else None
      if isinstance(whitespace, cst.ParenthesizedWhitespace):
        position = len(whitespace.last_line.value)
      elif position + 1 + len(first) + 1 > width and position > align:
        args[index - 1] = previous.with_changes(comma=cst.Comma(whitespace_after=cst.ParenthesizedWhitespace(
            first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
            last_line=cst.SimpleWhitespace(' ' * align))))
        position = align
      else:
        position += 1
    position = (position + len(first)) if '\n' not in text else len(last)
    position += 1
  return call.with_changes(args=args)


def renamed(call, original, func_code, source):
  """`call` (the edited `original`) calling `func_code`: its continuation lines aligned with the old opening
  parenthesis move with the new one."""
  statement = source.statement_of(original)
  start = source.column(original) - source.indent_of(statement)
  old_opening = start + len(code_of(original.func)) + 1
  new_opening = start + len(func_code) + 1
  args = list(call.args)
  for index, arg in enumerate(args):
    whitespace = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else None
    if isinstance(whitespace, cst.ParenthesizedWhitespace) and len(whitespace.last_line.value) == old_opening:
      args[index] = arg.with_changes(comma=arg.comma.with_changes(whitespace_after=whitespace.with_changes(
          last_line=cst.SimpleWhitespace(' ' * new_opening))))
  return call.with_changes(func=expression(func_code), args=args)


def arg_node(call, position, keyword):
  """The Arg of a LibCST call that passes a parameter, by keyword or at its position (None: not passed)."""
  for arg in call.args:
    if arg.keyword is not None and arg.keyword.value == keyword:
      return arg
  positional = [a for a in call.args if a.keyword is None and not a.star]
  if position is not None and position < len(positional):
    return positional[position]
  return None


def set_keyword(call, name, value):
  """`call` with keyword `name` set to `value` (replaced if it is there)."""
  for index, arg in enumerate(call.args):
    if arg.keyword is not None and arg.keyword.value == name:
      args = list(call.args)
      args[index] = arg.with_changes(value=value)
      return call.with_changes(args=args)
  return None


def format_call(func, args, indent=0, start=0, base=0, hang=4):
  """Source of a call `func(args)` for a statement at `indent`: the call starts at column `start` of a line
  indented `base` (both relative to the statement). On one line when it fits MAX_COLUMNS, else one argument per
  line with a hanging indent. args: [(keyword or None, value)], each value a string or a nested (func, args)."""
  flat = '%s(%s)' % (func, ', '.join(_flat_arg(a) for a in args))
  if indent + start + len(flat) <= MAX_COLUMNS or not args:
    return flat
  parts = []
  for index, (keyword, value) in enumerate(args):
    prefix = '%s=' % keyword if keyword else ''
    column = base + hang
    text = value if isinstance(value, str) else format_call(value[0], value[1], indent, column + len(prefix),
                                                            column, hang)
    parts.append(' ' * column + prefix + text + (',' if index < len(args) - 1 else ')'))
  return '%s(\n%s' % (func, '\n'.join(parts))


def _flat_arg(arg):
  keyword, value = arg
  text = value if isinstance(value, str) else '%s(%s)' % (value[0], ', '.join(_flat_arg(a) for a in value[1]))
  return '%s=%s' % (keyword, text) if keyword else text


def code_of(node):
  return cst.Module([]).code_for_node(node)
