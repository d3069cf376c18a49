"""Ready-made judges: `value` for a prediction, `choice_verdict` for a letter.
Each gives (right, text) and raises NotAnswered on the placeholder. Truths
are computed by running torch when the check runs, never read from a
stored constant."""

from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any, TypeVar

import torch

from ..graph import trace_graph
from ..quiz import MultipleChoice
from .answers import filled
from .feedback import shown

T = TypeVar("T")


def same(answer: Any, expected: Any, tolerance: float = 1e-6) -> bool:
    """Equal as the learner means it: 11 == 11 but not True; numbers within
    `tolerance` (relative, at least absolute); any list, tuple or set of
    the same items for a set."""
    if isinstance(expected, bool) or isinstance(answer, bool):
        return type(answer) is type(expected) and answer == expected
    if isinstance(expected, (set, frozenset)):
        return isinstance(answer, (list, tuple, set, frozenset)) and set(answer) == set(expected)
    if isinstance(expected, Real):
        gap = abs(float(answer) - float(expected)) if isinstance(answer, Real) else float("inf")
        return gap <= tolerance * max(1.0, abs(float(expected)))
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().lower() == expected.strip().lower()
    return bool(answer == expected)


def _comparable(answer: Any, expected: Any) -> bool:
    """Whether the answer has the form asked for (any real number for a number)."""
    if isinstance(expected, (set, frozenset)):
        return isinstance(answer, (list, tuple, set, frozenset))
    if isinstance(expected, bool) or isinstance(answer, bool):
        return type(answer) is type(expected)
    if isinstance(expected, Real):
        return isinstance(answer, Real)
    return type(answer) is type(expected)


def _form(expected: Any, answer: Any) -> str:
    if isinstance(expected, Real) and not isinstance(expected, bool) and isinstance(answer, bool):
        return "a number (True and False are not numbers here)"
    if isinstance(expected, Real) and isinstance(answer, (list, tuple)):
        return "a single number, without quotes"
    if isinstance(answer, torch.Tensor):
        return "a plain Python number, not a tensor (.item() turns a one-element tensor into one)"
    if isinstance(expected, bool):
        return "True or False, without quotes"
    if isinstance(expected, Real):
        return "a number, without quotes"
    if isinstance(expected, (set, frozenset)):
        return "a set of names, each in quotes, such as {'a', 'b'}"
    return "text in quotes"


def value(truth: Callable[[Mapping[str, Any]], Any], why: str, hints: tuple[tuple[Any, str], ...] = (),
          otherwise: str = "that is not what the code gives: work it through again, or ask for the hint.",
          tolerance: float = 1e-6) -> Callable[[Any, Mapping[str, Any]], tuple[bool, str]]:
    """A prediction compared with `truth(lesson)`, computed now. `hints`
    pairs a wrong answer with the hint it gets; other wrong answers get
    `otherwise`."""

    def judge(answer: Any, lesson: Mapping[str, Any]) -> tuple[bool, str]:
        answer = filled(answer)
        expected = truth(lesson)
        if same(answer, expected, tolerance):
            return True, why
        if not _comparable(answer, expected):
            return False, f"give {_form(expected, answer)}; you gave {shown(answer)}."
        for wrong, hint in hints:
            if same(answer, wrong, tolerance):
                return False, hint
        return False, otherwise

    return judge


def choice_verdict(question: MultipleChoice, answer: Any, lesson: Mapping[str, Any]) -> tuple[bool, str]:
    """A choose exercise's verdict: the letter in quotes, judged by its
    MultipleChoice (which finds the right letter by running torch now)."""
    answer = filled(answer)
    letter = answer.strip().lower() if isinstance(answer, str) else None
    if letter not in question.letters:
        return False, f"answer with one of the letters {', '.join(map(repr, question.letters))}, in quotes."
    return question.verdict(letter, lesson)


def known(value: T | None, what: str) -> T:
    """A `.grad` or `.grad_fn` of a tensor the checker made, which cannot be
    None there: if it is, the checker itself is wrong."""
    if value is None:
        raise RuntimeError(f"the checker expected {what} and found None")
    return value


def op_labels(tensor: torch.Tensor) -> list[str]:
    """The operations of a tensor's graph, in walk order (output first)."""
    return [node.label for node in trace_graph(tensor, saved=False).nodes if node.kind == "op"]


def plural(count: int, word: tuple[str, str]) -> str:
    """"1 leaf", "2 leaves": `word` is (singular, plural)."""
    return f"{count} {word[0] if count == 1 else word[1]}"
