"""Ready-made checkers. Each returns a judge: answer -> (right, text), which
raises NotAnswered on the placeholder. Truths are computed by running
torch when the check runs, never read from a stored constant."""

from ..graph import trace_graph
from . import filled


def same(answer, expected):
    """Equal as the learner means it: 11 == 11 but not True; 0.675 within
    1e-6; any list, tuple or set of the same items for a set."""
    if isinstance(expected, bool) or isinstance(answer, bool):
        return type(answer) is type(expected) and answer == expected
    if isinstance(expected, (set, frozenset)):
        return isinstance(answer, (list, tuple, set, frozenset)) and set(answer) == set(expected)
    if isinstance(expected, (int, float)):
        return isinstance(answer, (int, float)) and abs(answer - expected) <= 1e-6 * max(1.0, abs(expected))
    if isinstance(expected, str):
        return isinstance(answer, str) and answer.strip().lower() == expected.strip().lower()
    return answer == expected


def _comparable(answer, expected):
    """Whether the answer has the form asked for (an int for a float is fine)."""
    if isinstance(expected, (set, frozenset)):
        return isinstance(answer, (list, tuple, set, frozenset))
    if isinstance(expected, float) and not isinstance(answer, bool):
        return isinstance(answer, (int, float))
    return type(answer) is type(expected)


def _form(expected):
    if isinstance(expected, bool):
        return "True or False (no quotes)"
    if isinstance(expected, (int, float)):
        return "a number (no quotes)"
    if isinstance(expected, (set, frozenset)):
        return "a set of names in quotes, such as {'x + 1'}"
    return "text in quotes"


def value(truth, why, hints=(), otherwise="not what torch does: run the code and look again."):
    """A prediction compared with `truth(lesson)`, computed now. `hints`
    pairs a wrong answer with the hint it gets; other wrong answers get
    `otherwise`."""

    def judge(answer, lesson):
        answer = filled(answer)
        expected = truth(lesson)
        if same(answer, expected):
            return True, why
        if not _comparable(answer, expected):
            return False, f"give {_form(expected)}; you gave a {type(answer).__name__}."
        for wrong, hint in hints:
            if same(answer, wrong):
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
    return [node.label for node in trace_graph(tensor).nodes if node.kind == "op"]


def graph_difference(yours, asked, where):
    """"" when the two tensors' graphs record the same operations in the
    same order, else a sentence naming the first difference."""
    mine, theirs = op_labels(yours), op_labels(asked)
    if mine == theirs:
        return ""
    for position, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            return f"{where} your graph has {a} where {b} was asked (operation {position + 1} from the output)."
    longer, count = ("more", len(mine) - len(theirs)) if len(mine) > len(theirs) else ("fewer", len(theirs) - len(mine))
    return f"{where} your graph records {count} {longer} operation(s) than asked: {mine} against {theirs}."
