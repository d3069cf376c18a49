"""What an answer slot holds (the placeholder `____`, then a value, a function or a class), and the
ready-made judges: `value` for a prediction, `choice_verdict` for a letter; truths come from torch."""

from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any, TypeVar

import numpy
import torch

from ..graph import trace_graph
from ..quiz import MultipleChoice

T = TypeVar("T")
FORMS = ("A number is a plain number, 41 or 41.0 or a numpy number, not a tensor and not in quotes; True and False "
         "go without quotes (numpy's bools count too); a set of names may be a set, frozenset, list or tuple of "
         "names in quotes, in any order; a letter or a name goes in quotes, in any case.")
MAX_DEPTH = 20      # levels of nested containers `builtin` converts
CHECKER = "<exercise code>"        # sandbox.CHECKER_FILES: an error in it is the checker's


class Blank:

    def __repr__(self) -> str:
        return "____"


____ = Blank()


class NotAnswered(Exception):
    """Raised by a judge that meets the placeholder."""


class WrongForm(Exception):
    """An answer of the wrong kind (a number where a function goes): told as feedback."""


def filled(value: Any) -> Any:
    """`value`, unless it is or holds the placeholder (then NotAnswered)."""
    parts = value.values() if isinstance(value, dict) else value
    inside = isinstance(parts, (list, tuple, set, frozenset)) and any(isinstance(v, Blank) for v in parts)
    if isinstance(value, Blank) or inside:
        raise NotAnswered
    return value


def filled_function(answer: Any) -> Any:
    """A function the learner wrote, unless it still names ____ (NotAnswered)."""
    code = getattr(answer, "__code__", None)
    if isinstance(answer, Blank) or (code is not None and "____" in code.co_names):
        raise NotAnswered
    if not callable(answer):
        raise WrongForm(f"this answer must be a function you define with def, not a value of type "
                        f"{type(answer).__name__}: run the cell that defines it again (was its name reused?)")
    return answer


def answer_from(code: str, name: str, lesson: Mapping[str, Any] | None = None, filename: str = "<answer>") -> Any:
    """Run answer code with torch, ____ and the lesson's names; return what it defines as `name`."""
    scope = {**(lesson or {}), "torch": torch, "____": ____}
    exec(compile(code, filename, "exec"), scope)
    return scope[name]


def builtin(answer: Any, depth: int = 0) -> Any:
    """`answer` as exact built-in types, read with the built-in types' own methods, not its class's."""
    if answer is None or type(answer) in (bool, int, float, str) or depth > MAX_DEPTH:
        return answer
    if isinstance(answer, numpy.generic):
        return builtin(numpy.generic.item(answer), depth + 1)
    if isinstance(answer, int):
        return int.__int__(answer)
    if isinstance(answer, float):
        return float.__float__(answer)
    if isinstance(answer, str):
        return str.__str__(answer)
    if isinstance(answer, dict):
        pairs = [(builtin(k, depth + 1), builtin(v, depth + 1)) for k, v in dict.items(answer)]
        return _made(dict, pairs, pairs)
    containers: tuple[Any, ...] = (list, tuple, set, frozenset)
    for container in containers:
        if isinstance(answer, container):
            items = [builtin(item, depth + 1) for item in container.__iter__(answer)]
            return _made(container, items, tuple(items))
    return answer


def _made(kind_: Any, items: Any, otherwise: Any) -> Any:
    try:
        return kind_(items)
    except TypeError:       # an unhashable item in a set or a key
        return otherwise


def canonical(answer: Any) -> Any:
    """An answer in one form per kind (FORMS), made of exact built-in types."""
    answer = builtin(answer)
    if isinstance(answer, (set, frozenset, list, tuple)):
        try:
            return frozenset(_scalar(item) for item in answer)
        except TypeError:       # an unhashable item: not a set of names
            return answer
    return _scalar(answer)


def _scalar(answer: Any) -> Any:
    if isinstance(answer, (bool, numpy.bool_)):
        return bool(answer)
    if isinstance(answer, Integral):
        return int(answer)
    return float(answer) if isinstance(answer, Real) else answer


def kind(answer: Any) -> str:
    """What form an answer has: 'bool', 'number', 'set', 'text' or its type's name."""
    answer = canonical(answer)
    if isinstance(answer, bool):
        return "bool"
    if isinstance(answer, (int, float)):
        return "number"
    if isinstance(answer, frozenset):
        return "set"
    return "text" if isinstance(answer, str) else type(answer).__name__


def same(answer: Any, expected: Any, tolerance: float = 1e-6) -> bool:
    """Equal as the learner means it, in any of the forms FORMS states."""
    answer, expected = canonical(answer), canonical(expected)
    if kind(answer) != kind(expected):
        return False
    if kind(expected) == "number":
        try:
            return bool(abs(answer - expected) <= tolerance * max(1.0, abs(expected)))
        except OverflowError:       # an int too large for a float: no number the code gives
            return False
    if kind(expected) == "text":
        return bool(answer.strip().lower() == expected.strip().lower())
    if kind(expected) == "set":
        return _names(answer) == _names(expected)
    return type(answer) is type(expected) and bool(expected == answer)


def _names(items: frozenset[Any]) -> frozenset[Any]:
    """A set's names as FORMS lets the learner write them: any case, spaces around or not."""
    return frozenset(item.strip().lower() if type(item) is str else item for item in items)


def _form(expected: Any, answer: Any) -> str:
    """What to give instead, for an answer of the wrong form."""
    wanted, given = kind(expected), kind(answer)
    if isinstance(answer, torch.Tensor):
        return "a plain Python number, not a tensor (.item() turns a one-element tensor into one)"
    if wanted == "number" and given == "bool":
        return "a number (True and False are not numbers here)"
    if wanted == "number" and given == "set":
        return "a single number, without quotes"
    forms = {"number": "a number, without quotes", "bool": "True or False, without quotes",
             "set": "a set of names, each in quotes, such as {'a', 'b'}"}
    return forms.get(wanted, "text in quotes")


def value(truth: Callable[[Mapping[str, Any]], Any], why: str, hints: tuple[tuple[Any, str], ...] = (),
          otherwise: str = "that is not what the code gives: work it through again, or ask for the hint.",
          tolerance: float = 1e-6) -> Callable[[Any, Mapping[str, Any]], tuple[bool, str]]:
    """A prediction compared with `truth(lesson)`; `hints` pair wrong answers with their hint."""

    def judge(answer: Any, lesson: Mapping[str, Any]) -> tuple[bool, str]:
        answer = filled(answer)
        expected = truth(lesson)
        if same(answer, expected, tolerance):
            return True, why
        if answer is None:
            return False, f"None is not an answer: replace ____ with {_form(expected, answer)}."
        if kind(expected) == "number" and isinstance(answer, (list, tuple)) and len(answer) > 1 \
                and all(same(item, expected, tolerance) for item in answer):
            return False, "each element is the same: give that one number, not a list of them."
        if kind(answer) != kind(expected):
            return False, f"give {_form(expected, answer)}."
        for wrong, hint in hints:
            if same(answer, wrong, tolerance):
                return False, hint
        return False, otherwise

    return judge


def choice_verdict(question: MultipleChoice, answer: Any, lesson: Mapping[str, Any]) -> tuple[bool, str]:
    """A choose exercise's verdict: the letter in quotes, judged by its MultipleChoice."""
    answer = builtin(filled(answer))
    letter = answer.strip().lower() if type(answer) is str else None
    if letter not in question.letters:
        return False, f"answer with one of the letters {', '.join(map(repr, question.letters))}, in quotes."
    return question.verdict(letter, lesson)


def known(value: T | None, what: str) -> T:
    """A `.grad` or `.grad_fn` the checker expects; None means the checker is wrong."""
    if value is None:
        raise RuntimeError(f"the checker expected {what} and found None")
    return value


def op_labels(tensor: torch.Tensor) -> list[str]:
    """The operations of a tensor's graph, in walk order (output first)."""
    return [node.label for node in trace_graph(tensor, saved=False).nodes if node.kind == "op"]
