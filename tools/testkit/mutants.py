"""Mutants of a piece of code: the code changed in one small place at a
time, an operator or comparison flipped, a number changed, True and False
swapped, text emptied, a statement dropped or two swapped, a keyword
argument or an argument-less call removed. tools/testkit/mutation.py runs the
mutants of each exercise's solution through its check."""

import ast
from collections.abc import Callable, Iterator

CAP = 24                 # mutants of one piece of code at most, chosen evenly from all of them
FLIPS: dict[type, type] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
                           ast.Pow: ast.Mult, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Lt: ast.LtE, ast.LtE: ast.Lt,
                           ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
                           ast.In: ast.NotIn, ast.NotIn: ast.In, ast.And: ast.Or, ast.Or: ast.And}
Site = tuple[str, Callable[[], None]]       # what the change is, and the change (made in place)


def _flips(node: ast.AST) -> Iterator[Site]:
    """Operators and comparisons swapped for their counterpart."""
    slots = {ast.BinOp: "op", ast.AugAssign: "op", ast.BoolOp: "op"}
    name = slots.get(type(node))
    if name and type(getattr(node, name)) in FLIPS:
        old = getattr(node, name)
        yield (f"line {node.lineno}: {type(old).__name__} -> {FLIPS[type(old)].__name__}",
               lambda: setattr(node, name, FLIPS[type(old)]()))
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in FLIPS:
                yield (f"line {node.lineno}: {type(op).__name__} -> {FLIPS[type(op)].__name__}",
                       lambda i=i, op=op: node.ops.__setitem__(i, FLIPS[type(op)]()))


def _constants(node: ast.AST) -> Iterator[Site]:
    """Numbers changed, True and False swapped, text emptied, a minus or a
    not removed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        yield f"line {node.lineno}: {node.value!r} -> ''", lambda: setattr(node, "value", "")
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield f"line {node.lineno}: {node.value} -> {not node.value}", lambda: setattr(node, "value", not node.value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        new = node.value + 1 if node.value in (0, -1) else node.value * 2
        yield f"line {node.lineno}: {node.value!r} -> {new!r}", lambda: setattr(node, "value", new)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        yield f"line {node.lineno}: {type(node.op).__name__} removed", lambda: setattr(node, "op", ast.UAdd())


def _calls(node: ast.AST) -> Iterator[Site]:
    """A keyword argument removed; a method call without arguments removed
    (`h.detach()` -> `h`)."""
    if not isinstance(node, ast.Call):
        return
    for keyword in list(node.keywords):
        yield (f"line {node.lineno}: {keyword.arg}= removed",
               lambda keyword=keyword: node.keywords.remove(keyword))
    function = node.func
    if isinstance(function, ast.Attribute) and not node.args and not node.keywords:
        yield f"line {node.lineno}: .{function.attr}() removed", lambda: _become(node, function.value)


def _become(node: ast.AST, other: ast.AST) -> None:
    """Make `node` a copy of `other`, in place (its parent then holds `other`)."""
    node.__class__ = other.__class__
    node.__dict__.clear()
    node.__dict__.update(other.__dict__)


def _statements(node: ast.AST) -> Iterator[Site]:
    """A statement dropped (replaced by `pass`), or swapped with the next;
    not the definition itself (a module's statements), nor a docstring."""
    for name in ("body", "orelse"):
        body = getattr(node, name, None)
        if isinstance(node, ast.Module) or not isinstance(body, list) or not body or \
                not isinstance(body[0], ast.stmt):
            continue
        for i, statement in enumerate(body):
            if _docstring(statement):
                continue
            yield (f"line {statement.lineno}: statement dropped",
                   lambda body=body, i=i: body.__setitem__(i, ast.Pass()))
            if i + 1 < len(body) and not _docstring(body[i + 1]):
                yield (f"lines {statement.lineno}-{body[i + 1].lineno}: statements swapped",
                       lambda body=body, i=i: body.__setitem__(slice(i, i + 2), [body[i + 1], body[i]]))


def _docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def sites(tree: ast.AST) -> list[Site]:
    """Every single change the mutation operators can make to `tree`, in a
    fixed order (the same for every parse of the same code)."""
    found: list[Site] = []
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in ast.walk(tree):
        if id(node) in docstrings:
            continue
        for operator in (_flips, _constants, _calls, _statements):
            found += operator(node)
    return found


def mutants(code: str, cap: int = CAP) -> list[tuple[str, str]]:
    """(what changed, the mutant's code) for at most `cap` mutants of
    `code`, chosen evenly among all of them; mutants whose code is the same
    as another's, or as the original's, are left out."""
    total = len(sites(ast.parse(code)))
    chosen = range(total) if total <= cap else sorted({i * total // cap for i in range(cap)})
    made, seen = [], {ast.unparse(ast.parse(code))}
    for index in chosen:
        tree = ast.parse(code)
        label, change = sites(tree)[index]
        change()
        source = ast.unparse(ast.fix_missing_locations(tree))
        if source not in seen:
            seen.add(source)
            made.append((label, source))
    return made
