"""Ready-made checkers. Each returns a judge: answer -> (right, text), which
raises NotAnswered on the placeholder. Truths are computed by running
torch when the check runs, never read from a stored constant."""

from numbers import Real

import torch

from ..graph import trace_graph
from . import filled


def same(answer, expected, tolerance=1e-6):
    """Equal as the learner means it: 11 == 11 but not True; numbers within
    `tolerance` (relative, at least absolute); any list, tuple or set of
    the same items for a set."""
    if isinstance(expected, bool) or isinstance(answer, bool):
        return type(answer) is type(expected) and answer == expected
    if isinstance(expected, (set, frozenset)):
        return isinstance(answer, (list, tuple, set, frozenset)) and set(answer) == set(expected)
    if isinstance(expected, Real):
        return isinstance(answer, Real) and abs(answer - expected) <= tolerance * max(1.0, abs(expected))
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().lower() == expected.strip().lower()
    return answer == expected


def _comparable(answer, expected):
    """Whether the answer has the form asked for (any real number for a number)."""
    if isinstance(expected, (set, frozenset)):
        return isinstance(answer, (list, tuple, set, frozenset))
    if isinstance(expected, bool) or isinstance(answer, bool):
        return type(answer) is type(expected)
    if isinstance(expected, Real):
        return isinstance(answer, Real)
    return type(answer) is type(expected)


def _form(expected, answer):
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


def value(truth, why, hints=(), otherwise="that is not what the code gives: work it through again, or ask "
                                          "for the hint.", tolerance=1e-6):
    """A prediction compared with `truth(lesson)`, computed now. `hints`
    pairs a wrong answer with the hint it gets; other wrong answers get
    `otherwise`."""

    def judge(answer, lesson):
        answer = filled(answer)
        expected = truth(lesson)
        if same(answer, expected, tolerance):
            return True, why
        if not _comparable(answer, expected):
            return False, f"give {_form(expected, answer)}; you gave {answer!r}."
        for wrong, hint in hints:
            if same(answer, wrong, tolerance):
                return False, hint
        return False, otherwise

    return judge


def choice(options, right):
    """Multiple choice: `options` maps each letter to the feedback that
    choice gets (for the right one, why it is right). `right(lesson)` finds
    the right letter by running torch now."""

    def judge(answer, lesson):
        answer = filled(answer)
        key = answer.strip().lower() if isinstance(answer, str) else None
        if key not in options:
            return False, f"answer with one of the letters {', '.join(repr(k) for k in options)}, in quotes."
        return key == right(lesson), options[key]

    return judge


def op_labels(tensor):
    """The operations of a tensor's graph, in walk order (output first)."""
    return [node.label for node in trace_graph(tensor, saved=False).nodes if node.kind == "op"]


def plural(count, word):
    """"1 leaf", "2 leaves": `word` is (singular, plural)."""
    return f"{count} {word[0] if count == 1 else word[1]}"
