"""Notebook 09 (the dynamic graph meets torch.compile): its WIDGETS and EXERCISES."""

from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from ..compiled import compile_calls, graph_breaks
from ..exercises.behaviour import data, on_leaf
from ..exercises.exercise import Lesson, Verdict, choose, fix, predict, write
from ..exercises.feedback import shown
from ..exercises.judges import CHECKER, answer_from, filled_function, value
from ..quiz import MultipleChoice, Option
from .widget import Check, Widget, click

WIDGETS = (
    Widget("compile", {"use_extra_layer": "Checkbox", "earlier": "ToggleButtons"},
           (Check(click("use_extra_layer"), "failed, so dynamo compiled graph 2; 2 graphs compiled; graph 2 ran: mul",
                  {"mul": 1, "add": 0, "MulBackward0": 1, "AddBackward0": 0}),
            Check(click("earlier", "True, False"), "the guards of graph 2 (made for use_extra_layer=False) held: "
                  "no recompile; 2 graphs compiled", {"mul": 1, "MulBackward0": 1}))),
)


# Code exercise 1 shows, with these calls, and asks how many graphs they compile.
TWO_FLAGS = '''
def two_flags(x, scale, shift):
    y = x * 2
    if scale:
        y = y * 3
    if shift:
        y = y + 1
    return y
'''
CALLS = ((True, False), (True, True), (True, False), (False, False), (True, True), (False, False))


def _graphs_for_the_calls(_lesson: Lesson) -> int:
    two_flags = answer_from(TWO_FLAGS, "two_flags", None, CHECKER)
    x = torch.tensor(1.0, requires_grad=True)
    return len(compile_calls(two_flags, [(x, *flags) for flags in CALLS]).graphs)


# Exercise 2's slot holds CLIPPED; the fix chooses the divisor with a tensor operation, so no branch divides
# by 0 (a torch.where between y / y.max() and y gives NaN gradients there).
CLIPPED = '''
def clipped(x):
    y = x * 2
    if y.max() > 1:
        y = y / y.max()
    return y
'''
CLIPPED_FIXED = '''
def clipped(x):
    y = x * 2
    largest = y.max()
    return y / torch.where(largest > 1, largest, 1.0)
'''
# Inputs whose largest doubled value is below 1, exactly 1, above it, negative, exactly 0; random ones.
VECTORS = ((0.1, 0.2), (0.5, 0.25), (1.0, -3.0), (-1.0, -2.0), (0.0, 0.3), (2.0, 2.0), (0.0, -1.0), (0.0, 0.0))
# Where the asked function's two ways meet (the same values either way, a kink), any x.grad from one way's to
# the other's counts. A Tie takes x, the answer's x.grad and the asked one's: None for an x that is no such
# point, True for an x.grad that point allows, else the feedback (False: none of its own).
Tie = Callable[[tuple[float, ...], torch.Tensor | None, torch.Tensor], bool | str | None]


def _vectors() -> list[tuple[float, ...]]:
    randoms = torch.randn(3, 4, generator=torch.Generator().manual_seed(9))
    return list(VECTORS) + [tuple(round(v, 4) for v in row) for row in randoms.tolist()]


def _compared(answer: Callable[[torch.Tensor], Any], asked: Callable[[torch.Tensor], Any], name: str,
              tie: Tie) -> str | None:
    """What the answer gets wrong against `asked` on every input, or None."""
    for start in _vectors():
        mine, grad = on_leaf(answer, start)
        wanted, wanted_grad = on_leaf(asked, start)
        if not isinstance(mine, torch.Tensor) or mine.shape != wanted.shape:
            return f"for x = {list(start)} {name} returned {shown(mine)}: return a tensor of x's shape."
        if not torch.allclose(mine, wanted, atol=1e-6):
            return f"for x = {list(start)} {name} gives {shown(mine.tolist())}, not {shown(wanted.tolist())}."
        at_tie = grad is not None and torch.allclose(grad, wanted_grad, atol=1e-6) or tie(start, grad, wanted_grad)
        if at_tie is True:
            continue
        if grad is not None and bool(grad.isnan().any()) and not bool(wanted_grad.isnan().any()):
            return (f"for x = {list(start)} the values are right but x.grad is {shown(grad.tolist())}: backward runs "
                    "through both branches of torch.where, the one not chosen too, and an infinite gradient there "
                    "times where's 0 is NaN. Give each branch an input where its derivative is finite, chosen or not.")
        shown_grad = shown(None if grad is None else grad.tolist())
        return at_tie or (f"for x = {list(start)} the values are right but x.grad is {shown_grad}, not "
                          f"{shown(wanted_grad.tolist())}: is every branch computed from x, with the same formula?")
    return None


def _between(grad: torch.Tensor, one: torch.Tensor, other: torch.Tensor) -> bool:
    """Whether `grad` lies on the segment from `one` to `other` (within 1e-6)."""
    step = other - one
    length = float((step * step).sum())
    share = 0.0 if length == 0 else min(1.0, max(0.0, float(((grad - one) * step).sum()) / length))
    return bool(torch.allclose(grad, one + share * step, atol=1e-6))


def _clipped_tie(start: tuple[float, ...], grad: torch.Tensor | None, _wanted: torch.Tensor) -> bool | str | None:
    """Exercise 2's tie: the doubled x's largest element exactly 1, where y and y / y.max() are the same."""
    if max(2 * v for v in start) != 1.0:
        return None
    undivided, divided = (on_leaf(way, start)[1] for way in (lambda x: x * 2, lambda x: x * 2 / (x * 2).max()))
    return grad is not None and grad.shape == undivided.shape and _between(grad, undivided, divided) or (
        f"for x = {list(start)} y.max() is exactly 1, where dividing by it or not gives the same values: "
        "x.grad may be either way's (2 for every element undivided, or that of y / y.max()) or one between "
        "them, and yours is none of these. Divide by a divisor that is y.max() above 1 and 1 otherwise.")


def _leaky_tie(start: tuple[float, ...], grad: torch.Tensor | None, wanted: torch.Tensor) -> bool | str | None:
    """Exercise 4's ties: the elements where x is 0, where x and 0.1 * x are the same; x.grad from 0.1 to 1
    there, the asked one elsewhere."""
    if 0.0 not in start:
        return None
    if grad is None or grad.shape != wanted.shape:
        return False
    off = [v for v, g, w in zip(start, grad.tolist(), wanted.tolist(), strict=True)
           if not (0.1 - 1e-6 <= g <= 1 + 1e-6 if v == 0.0 else abs(g - w) <= 1e-6)]
    if not off:
        return True
    return False if any(off) else (
        f"for x = {list(start)} the values are right, but x.grad where x is 0 is not one that counts: the two "
        "pieces meet there, so x.grad may be anything from 0.1 to 1 (from 0.1 * x's slope to x's), and yours "
        "is outside that.")


def _breaks(answer: Callable[[torch.Tensor], Any]) -> str | None:
    """Feedback on the graph breaks dynamo finds in the answer, or None."""
    for start in ((1.0, -3.0), (0.1, 0.2)):
        found = graph_breaks(answer, torch.tensor(start))
        if found.count:
            reason = found.reasons[0] if found.reasons else "no reason given"
            return (f"dynamo still breaks the graph {found.count} time(s) for x = {list(start)} ({reason}): "
                    "Python reads a tensor's value there. Make the choice an operation on tensors.")
    return None


def _probe(code: str, name: str, tie: Tie, answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """What an answer does on every input of the check (`code` defines the asked function,
    `name`): values, x.grad (at a tie, whether it is one the tie allows), graph breaks."""
    asked = answer_from(code, name, None, CHECKER)
    observed: dict[str, Any] = {}
    for start in _vectors():
        result, grad = on_leaf(answer, start)
        at_tie = tie(start, grad, on_leaf(asked, start)[1])
        gradient = {"x.grad": data(grad)} if at_tie is None else {"x.grad one the tie allows": at_tie is True}
        observed[f"x = {list(start)}"] = {"value": data(result), **gradient}
    observed["graph breaks"] = graph_breaks(answer, torch.tensor((1.0, -3.0))).count
    return observed


def _clipped(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled_function(answer)
    asked = answer_from(CLIPPED, "clipped", None, CHECKER)
    wrong = _compared(answer, asked, "your clipped", _clipped_tie) or _breaks(answer)
    if wrong:
        return False, wrong
    return True, ("the choice is now an operation on tensors, so dynamo captures the whole function: one graph, "
                  "no break, the same values and gradients as the if (at y.max() exactly 1, where dividing or not "
                  "gives the same, either way's gradient counts).")


LEAKY = '''
def leaky(x):
    return torch.where(x > 0, x, 0.1 * x)
'''


def _leaky(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled_function(answer)
    asked = answer_from(LEAKY, "leaky", None, CHECKER)
    try:
        wrong = _compared(answer, asked, "your leaky", _leaky_tie)
    except RuntimeError as error:
        if "ambiguous" not in str(error):
            raise
        return False, ("a Python if on a tensor of several elements cannot decide (its truth is ambiguous); "
                       "the choice is made per element: make it with a tensor operation.")
    wrong = wrong or _breaks(answer)
    if wrong:
        return False, wrong
    return True, "the choice per element is a tensor operation: dynamo captures it in one graph, no break."


def _eager_backend_letter(_lesson: Lesson) -> str:
    square_times_three = answer_from("def f(x):\n    return (x ** 2) * 3\n", "f", None, CHECKER)
    compiled: Callable[..., torch.Tensor] = torch.compile(square_times_three, backend="eager")
    name = compiled(torch.tensor(2.0, requires_grad=True)).grad_fn
    letters = {"CompiledFunctionBackward": "a", "MulBackward0": "b", "PowBackward0": "d"}
    return "c" if name is None else letters.get(name.name(), "a")


EAGER_BACKEND = MultipleChoice(
    "`torch.compile(f, backend=\"eager\")` with `f(x) = (x ** 2) * 3`: dynamo captures the graph and the "
    "`eager` backend runs its operations as they are, no AOTAutograd. What is `grad_fn` of the output?",
    (
        Option("`CompiledFunctionBackward`: one node for the whole compiled graph, as with `aot_eager`.",
               "that node comes from AOTAutograd, which the aot_eager backend uses and eager does not: without it, "
               "nothing folds the graph into one autograd node."),
        Option("`MulBackward0`: each operation runs eagerly, and autograd records it as in notebook 02.",
               "the captured graph's operations run one by one, in eager PyTorch, so autograd records "
               "PowBackward0 then MulBackward0, as without compiling."),
        Option("`None`: a compiled function's output is not recorded.",
               "autograd records compiled outputs too: a loss from a compiled model still has a backward."),
        Option("`PowBackward0`: the first operation of the graph.",
               "grad_fn is the node of the operation that made the output, the last one: * 3."),
    ),
    right=_eager_backend_letter,
)


SHOWN = {1: TWO_FLAGS}       # code a question shows as written and its check runs, by exercise number

EXERCISES = (
    predict(1, "graphs for a call sequence", "a whole number",
            value(_graphs_for_the_calls, "dynamo guards each graph on the two flags' values, so each distinct "
                  "pair of flags called gets one graph: (True, False), (True, True), (False, False).",
                  hints=((6, "a call whose flags match an earlier call's reuses that graph: its guards hold."),
                         (4, "two flags make four pairs, but a graph is compiled only for a pair that is called."),
                         (2, "each graph is guarded on both flags: count distinct pairs, not values of one flag."),
                         (1, "a flag in an if is not kept in the graph: each pair runs its own branch, so its "
                             "own graph.")),
                  otherwise="list the distinct pairs of flags among the calls."),
            hint="A captured graph holds only the branches taken, and guards on the flags' values: which calls "
                 "find a graph whose guards hold?",
            answer="3"),
    fix(2, "remove a graph break", _clipped, CLIPPED_FIXED,
        probe=partial(_probe, CLIPPED_FIXED, "clipped", _clipped_tie),
        hint="Let a tensor operation make the choice, torch.where (or torch.cond), and give what it does not "
             "choose a safe input, where its derivative is finite too: backward runs through both."),
    choose(3, "the grad_fn of an eager-backend output", EAGER_BACKEND, answer="b",
           hint="Which part of torch.compile makes CompiledFunctionBackward, and does the eager backend use it?"),
    write(4, "an elementwise choice with no graph break", _leaky, LEAKY,
          probe=partial(_probe, LEAKY, "leaky", _leaky_tie),
          hint="x where x > 0, else 0.1 * x, element by element: which tensor operation picks between two "
               "tensors per element?"),
)
