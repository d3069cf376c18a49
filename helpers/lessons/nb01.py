"""Notebook 01 (dynamic control flow): its widgets' views, WIDGETS and EXERCISES."""

import random
from collections.abc import Callable, Sequence
from typing import Any

import torch

from ..arguments import learner_facing, wrong
from ..draw import Figure, draw_graph
from ..exercises.behaviour import data, difference, graph, on_leaf
from ..exercises.exercise import Lesson, Verdict, choose, predict, write
from ..exercises.feedback import shown
from ..exercises.judges import CHECKER, answer_from, filled, filled_function, known, op_labels, value
from ..graph import autograd_nodes, trace_graph
from ..models import TanhRNNCell
from ..quiz import MultipleChoice, Option
from ..views import counted, unrolled
from .widget import Check, Widget, click, pick, press


def branch_view(forward: Callable[[torch.Tensor, bool], torch.Tensor], use_extra_layer: bool, x: float) -> Figure:
    """`forward(x, use_extra_layer)` for one setting: its graph, with the
    operations only the `True` branch records highlighted, and x.grad."""
    value = float(x)
    leaf = torch.tensor(value, requires_grad=True)
    y = forward(leaf, use_extra_layer)
    # what only the True branch records: compared with the other branch, run on a fresh x
    extra = set(op_labels(y)) - set(op_labels(forward(torch.tensor(value, requires_grad=True), False))) \
        if use_extra_layer else set()
    drawing = draw_graph(y, {"x": leaf}, highlight=sorted(extra))
    y.backward()
    grad = 0.0 if leaf.grad is None else leaf.grad.item()
    return Figure(f"use_extra_layer={use_extra_layer}: y = {y.item():g}, x.grad = {grad:g}, "
                  f"{counted(drawing.graph.count('op'), 'operation')}", drawing)


def loop_view(forward: Callable[[torch.Tensor, int], torch.Tensor], n: int) -> Figure:
    """The graph of `forward(x, n)` (a loop of `n` rounds), counting its autograd nodes
    apart from the boxes the drawing adds (None placeholders, the output)."""
    x = torch.tensor(1.0, requires_grad=True)
    y = forward(x, n)
    drawing = draw_graph(y, {"x": x})
    graph = drawing.graph
    return Figure(f"n = {n}: {counted(graph.count('op'), 'operation')}, "
                  f"{counted(len(autograd_nodes(y)), 'autograd node')}, {counted(len(graph.nodes), 'box', 'boxes')} "
                  "drawn", drawing)


def while_view(forward: Callable[[torch.Tensor], torch.Tensor], value: float) -> Figure:
    """The graph of `forward(x)` for x = `value` (a loop that halves until
    small): its number of halvings and its depth follow the value."""
    x = torch.tensor(float(value), requires_grad=True)
    drawing = draw_graph(forward(x), {"x": x})
    halvings = len(drawing.graph.find("DivBackward0"))
    return Figure(f"x = {value:g}: {counted(halvings, 'halving')}, depth {drawing.graph.depth()}", drawing)


@learner_facing
def sequence_view(cell: TanhRNNCell, sequences: Sequence[torch.Tensor], index: int, view: str = "cut") -> Figure:
    """The graph of sequence number `index` run through `cell`, drawn as
    `view` says (see VIEWS), with its step count."""
    if not 0 <= index < len(sequences):
        raise wrong(ValueError, f"index must be from 0 to {len(sequences) - 1}; got {index}")
    return unrolled(cell, sequences[index], f"sequence {index}: ", view)


WIDGETS = (
    Widget("branch", {"use_extra_layer": "Checkbox", "x": "FloatSlider"},
           (Check(click("use_extra_layer"), "use_extra_layer=False: y = 6, x.grad = 2, 1 operation",
                  {"AddBackward0": 0, "MulBackward0": 1}),)),
    Widget("loop", {"n": "IntSlider"},
           (Check(press("n"), "n = 4: 8 operations, 9 autograd nodes, 18 boxes drawn", {"MulBackward0": 4}),)),
    Widget("while", {"value": "FloatLogSlider"},
           (Check(press("value", "End"), "x = 1000: 10 halvings, depth 10", {"DivBackward0": 10}),)),
    Widget("sequence", {"index": "Dropdown", "view": "ToggleButtons"},
           (Check(pick("index", "sequence 4 (length 200)"),
                  "sequence 4: length 200, 200 cell steps counted in its graph (rolled)", shows=("× 198 steps",)),
            Check(click("view", "cut"), "length 200, 200 cell steps counted in its graph (cut)",
                  {"TanhBackward0": 10}, ("more nodes not drawn",)))),
)


# Code exercise 1 shows (the page does not run it) and asks a count of.
LOOP = '''
def repeat_scaled(x, w, n):
    y = x
    for _ in range(n):
        y = (y * w).sin() + 1
    return y
'''
ROUNDS = 12


def _nodes_of_the_other_loop(_lesson: Lesson) -> int:
    x, w = torch.tensor(0.5, requires_grad=True), torch.tensor(1.5, requires_grad=True)
    return len(autograd_nodes(answer_from(LOOP, "repeat_scaled", None, CHECKER)(x, w, ROUNDS)))


def _halvings_of_200(lesson: Lesson) -> int:
    return len(trace_graph(lesson["halve_until_small"](torch.tensor(200.0, requires_grad=True))).find("DivBackward0"))


SIGN_FORWARD = '''
def sign_forward(x):
    if x > 0:
        return x * 3
    return x ** 2
'''


# Inputs on both sides of 0, at it, near it, far from it; then seeded random ones and a grid.
EDGES = (2.0, 0.5, -2.0, 0.0, 1e-6, -1e-6, 0.1, 0.25, 1.0, -0.5, -3.0, 100.0)
FRESH = 4           # magnitudes drawn anew for every check, each tried with both signs


def _inputs() -> tuple[float, ...]:
    randoms = torch.randn(8, generator=torch.Generator().manual_seed(1)) * 3
    grid = tuple(k / 8 for k in range(-40, 41) if k / 8 not in EDGES)
    return EDGES + tuple(round(v, 4) for v in randoms.tolist()) + grid


def _fresh() -> tuple[float, ...]:
    """Inputs no answer can know in advance, each with both signs; drawn from the
    system's randomness, so torch's and Python's random numbers stay as they were."""
    draw = random.SystemRandom()
    magnitudes = [round(10 ** draw.uniform(-2, 1.7), 4) for _ in range(FRESH)]
    return tuple(sign * m for m in magnitudes for sign in (1, -1))


def _sign_forward(answer: Any, _lesson: Lesson) -> Verdict:
    answer, asked = filled_function(answer), answer_from(SIGN_FORWARD, "sign_forward", None, CHECKER)
    for start in _inputs() + _fresh():
        x, x_ref = torch.tensor(start, requires_grad=True), torch.tensor(start, requires_grad=True)
        y, y_ref = filled(answer(x)), asked(x_ref)
        if not isinstance(y, torch.Tensor):
            return False, f"for x = {start:g} your function returned {shown(y)}: return a tensor computed from x."
        if y.shape != y_ref.shape:
            return False, (f"for x = {start:g} your result has shape {tuple(y.shape)}: return a tensor of x's shape "
                           "(a scalar), computed from x.")
        if y.grad_fn is None:
            return False, f"for x = {start:g} your result has no grad_fn: was it detached, or made under no_grad()?"
        if "WhereBackward0" in op_labels(y):
            return False, ("torch.where computes both branches and records both; use a Python if, so that only "
                           "the branch taken is recorded.")
        if op_labels(y) == ["MulBackward0"] and op_labels(y_ref) == ["PowBackward0"] and _squares(y):
            return False, (f"for x = {start:g} your graph multiplies x by itself (MulBackward0, the leaf used twice); "
                           "the exercise asks for x ** 2, which records PowBackward0.")
        if op_labels(y) != op_labels(y_ref):
            asked_op = "x * 3 (MulBackward0)" if start > 0 else "x ** 2 (PowBackward0)"
            zero = " (0 is not positive)" if start == 0.0 else ""
            return False, (f"for x = {start:g}{zero} the exercise asks for {asked_op}; your graph records "
                           f"{', '.join(op_labels(y))}.")
        y.backward()
        y_ref.backward()
        if x.grad is None:
            return False, f"for x = {start:g} backward() left no x.grad: is your result computed from x?"
        if not torch.allclose(x.grad, known(x_ref.grad, "x.grad")):
            return False, f"for x = {start:g} your x.grad is {x.grad.item():g}: check the formula of that branch."
        if not torch.allclose(y, y_ref):
            return False, f"for x = {start:g} your result is {y.item():g}: check the formula of that branch."
    return True, ("each x records only the branch Python took: MulBackward0 for x > 0, PowBackward0 otherwise, "
                  "and backward follows that branch's derivative.")


def _sign_case(function: Callable[[torch.Tensor], Any], start: float) -> dict[str, Any]:
    """The result's value and graph, and x.grad, for x = start."""
    y, grad = on_leaf(function, start)
    return {"value": data(y), "graph": graph(y), "x.grad": data(grad)}


def _sign_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """Each input's _sign_case, and whether the answer does as asked on fresh inputs."""
    observed: dict[str, Any] = {f"x = {start:g}": _sign_case(answer, start) for start in _inputs()}
    asked = answer_from(SIGN_FORWARD, "sign_forward", None, CHECKER)
    observed[f"{2 * FRESH} fresh random x"] = {"as asked": all(
        difference(_sign_case(answer, start), _sign_case(asked, start)) is None for start in _fresh())}
    return observed


def _squares(y: torch.Tensor) -> bool:
    """Whether the graph's one operation takes the same leaf twice (x * x)."""
    (first, _), (second, _) = known(y.grad_fn, "a grad_fn").next_functions
    return first is not None and first is second


def _abs_is_recorded_apart(lesson: Lesson) -> str:
    x = torch.tensor(3.0, requires_grad=True)
    recorded = x.abs().grad_fn is not None
    in_graph = "AbsBackward0" in op_labels(lesson["halve_until_small"](x))
    return "b" if recorded and not in_graph else "a"


COMPARISON = MultipleChoice(
    "`halve_until_small` computes `y.abs() > limit` in every round, yet its drawing has no `AbsBackward0`. Why?",
    (
        Option("Autograd does not record operations inside a `while` condition.",
               "y.abs() in the condition is recorded like any other operation on a tensor that requires grad: print "
               "y.abs().grad_fn and see."),
        Option("The drawing follows only what `y` was computed from; the `abs` fed the comparison, not `y`.",
               "The abs is recorded, in a small graph of its own, but y was not computed from it, so walking back "
               "from y never reaches it. Only the comparison's outcome, a Python bool, steered the loop."),
        Option("A comparison switches off gradient recording for the rest of the loop.",
               "the y / 2 that runs after each comparison is recorded (the DivBackward0 nodes), so recording is on."),
        Option("`abs` has no derivative, so autograd never records it.",
               "abs has a derivative almost everywhere (the sign of x), and torch records AbsBackward0 for it."),
    ),
    right=_abs_is_recorded_apart,
)
SHOWN = {1: LOOP}       # code a question shows as written and its check runs, by exercise number

EXERCISES = (
    predict(1, "nodes of another loop", "a whole number",
            value(_nodes_of_the_other_loop, "each round records MulBackward0, SinBackward0 and AddBackward0, and "
                  "each of the two leaves has one AccumulateGrad node, however often it is used: 3 * 12 + 2.",
                  hints=((25, "2n + 1 is repeat_forward's count. This body runs three operations a round, and "
                              "there are two leaves."),
                         (41, "41 is what repeat_forward records in 20 rounds; this loop runs 12 rounds of its own "
                              "body: count what one of them records."),
                         (24, "sin records a node too, and each leaf has its own AccumulateGrad node."),
                         (39, "there are two leaves, x and w; the constant 1 is not a leaf and gets no node."),
                         (37, "x and w are two leaves: each has its own AccumulateGrad node."),
                         (36, "you counted the operations; each leaf has a node too, AccumulateGrad, where backward "
                              "ends."),
                         (26, "sin records a node too: three operations a round."),
                         (51, "51 counts every box the drawing shows, and some of them are not autograd nodes: "
                              "the constant 1 each round adds, and the output y. Count the recorded operations, "
                              "and one AccumulateGrad per leaf."),
                         *((n, "w is used in every round, but it is one leaf: one AccumulateGrad node, shared by "
                               "all its uses.") for n in (48, 49))),
                  otherwise="count what one round records, then add one AccumulateGrad node per leaf."),
            hint="One round records a node for each operation on a tensor: y * w, .sin() and + 1 (the constant 1 "
                 "gets none). Each leaf gets one AccumulateGrad node, however often it is used.",
            answer=str(3 * ROUNDS + 2)),
    write(2, "a graph that follows a sign", _sign_forward, SIGN_FORWARD, probe=_sign_probe,
          hint="A Python if works on a one-element tensor: Python asks for its truth value, True or False. "
               "Which case does the question put first, and what does each case return?"),
    predict(3, "halvings of 200", "a whole number",
            value(_halvings_of_200, "200 → 100 → 50 → 25 → 12.5 → 6.25 → 3.125 → 1.5625 → 0.78125: eight rounds, "
                  "eight DivBackward0 nodes.",
                  hints=((7, "too few: check the value after your last halving against the loop's condition."),
                         (9, "too many: the loop stops as soon as the value is at most 1."),
                         (200, "count the halvings, the rounds the while loop ran, not the value.")),
                  otherwise="halve 200 until it is at most 1, counting the rounds."),
            hint="Halve 200 by hand: 100, 50, ... and stop at the first value at most 1.",
            answer="8", needs=("halve_until_small",), optional=True),
    choose(4, "where the comparison went", COMPARISON, answer="b",
           hint="Print y.abs().grad_fn for a y that requires grad. Then ask: is y computed from that result?",
           needs=("halve_until_small",), optional=True),
)
