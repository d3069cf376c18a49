"""Mutation testing of the exercise checks (tests/test_mutants.py): each write
and fix exercise's solution changed in one small place at a time (an operator
flipped, a constant changed, a statement dropped or swapped, an argument
removed) and judged by its check and its probe: a mutant whose probe differs
from the solution's must be rejected, one whose probe is the same accepted."""

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest.mock import patch

from helpers.exercises import Exercise, answer_from, declared, sandbox
from helpers.exercises.behaviour import PROBED, difference
from helpers.exercises.lesson import stored_definitions
from helpers.exercises.session import judged
from helpers.lessons import numbers

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


TIME_LIMIT = 2.0         # seconds a mutant's check may take (a mutated loop may never end)


@dataclass
class Score:
    """What the check made of one exercise's mutants."""

    name: str
    made: int = 0
    killed: int = 0
    by_probe: int = 0        # of the killed: rejected only by the comparison with the solution's probe
    equivalent: list[str] = field(default_factory=list)
    survived: list[str] = field(default_factory=list)      # changed behaviour, yet judged right
    rejected_equivalent: list[str] = field(default_factory=list)    # behaved the same, yet judged wrong
    checker_errors: list[str] = field(default_factory=list)

    @property
    def score(self) -> str:
        changing = self.made - len(self.equivalent)
        return f"{self.killed}/{changing}" if changing else "-"

    def line(self) -> str:
        return (f"{self.name}: {self.made} mutants, {self.score} behaviour-changing ones rejected "
                f"({self.by_probe} of them only by the probe comparison), "
                f"{len(self.equivalent)} equivalent, {len(self.survived)} survived, "
                f"{len(self.rejected_equivalent)} equivalent but rejected, {len(self.checker_errors)} checker errors")


def behaviour(exercise: Exercise, answer: Any, lesson: dict[str, Any]) -> Any:
    """The probe of `answer`, or what stopped it (an exception's type, a time-out)."""
    assert exercise.probe is not None
    try:
        return sandbox.in_sandbox(lambda: exercise.probe(answer, lesson))      # type: ignore[misc]
    except KeyboardInterrupt:
        raise
    except BaseException as error:      # a mutant may raise anything
        return ("raised", type(error).__name__)


def score(notebook: str, exercise: Exercise, cap: int = CAP) -> Score:
    """Make the exercise's mutants and judge each, as described above."""
    stored = stored_definitions(notebook)
    lesson, result = {name: stored[name] for name in exercise.needs}, Score(f"nb{notebook}-q{exercise.number}")
    asked = behaviour(exercise, exercise.reference(lesson), lesson)
    with patch.object(sandbox, "TIME_LIMIT", TIME_LIMIT):
        for label, source in mutants(exercise.solution, cap):
            try:
                answer = answer_from(source, exercise.answer_name, lesson, "<mutant>")
            except Exception:           # the mutant does not even define its function
                continue
            result.made += 1
            same = difference(behaviour(exercise, answer, lesson), asked) is None
            verdict = judged(exercise, answer, lesson)
            if verdict.status == "error":
                result.checker_errors.append(f"{label}: {verdict.text}")
            elif same and verdict.status == "right":
                result.equivalent.append(label)
            elif same:
                result.rejected_equivalent.append(f"{label}: {verdict.text}")
            elif verdict.status == "right":
                result.survived.append(label)
            else:
                result.killed += 1
                result.by_probe += PROBED in verdict.text
    return result


def checked() -> list[tuple[str, Exercise]]:
    """Every write and fix exercise of every lesson (helpers/lessons/nbNN.py),
    with its notebook's number."""
    return [(n, e) for n in numbers() for e in declared(n) if e.kind in ("write", "fix")]
