"""Exercises of notebook 01: dynamic control flow."""

from typing import Any

import torch

from ..graph import autograd_nodes, trace_graph
from ..quiz import MultipleChoice, Option
from .answers import answer_from, filled, filled_function
from .exercise import Lesson, Verdict, choose, predict, write
from .feedback import shown
from .judges import known, op_labels, value


def _autograd_nodes_of_twenty_rounds(lesson: Lesson) -> int:
    x = torch.tensor(1.0, requires_grad=True)
    return len(autograd_nodes(lesson["repeat_forward"](x, 20)))


def _halvings_of_200(lesson: Lesson) -> int:
    return len(trace_graph(lesson["halve_until_small"](torch.tensor(200.0, requires_grad=True))).find("DivBackward0"))


SIGN_FORWARD = '''
def sign_forward(x):
    if x > 0:
        return x * 3
    return x ** 2
'''


def _sign_forward(answer: Any, _lesson: Lesson) -> Verdict:
    answer, asked = filled_function(answer), answer_from(SIGN_FORWARD, "sign_forward")
    for start in (2.0, 0.5, -2.0, 0.0):
        x, x_ref = torch.tensor(start, requires_grad=True), torch.tensor(start, requires_grad=True)
        y, y_ref = filled(answer(x)), asked(x_ref)
        if not isinstance(y, torch.Tensor):
            return False, f"for x = {start} your function returned {shown(y)}: return a tensor computed from x."
        if y.grad_fn is None:
            return False, f"for x = {start} your result has no grad_fn: was it detached, or made under no_grad()?"
        if "WhereBackward0" in op_labels(y):
            return False, ("torch.where computes both branches and records both; use a Python if, so that only "
                           "the branch taken is recorded.")
        if op_labels(y) == ["MulBackward0"] and op_labels(y_ref) == ["PowBackward0"] and _squares(y):
            return False, (f"for x = {start} your graph multiplies x by itself (MulBackward0, the leaf used twice); "
                           "the exercise asks for x ** 2, which records PowBackward0.")
        if op_labels(y) != op_labels(y_ref):
            asked_op = "x * 3 (MulBackward0)" if start > 0 else "x ** 2 (PowBackward0)"
            zero = " (0 is not positive)" if start == 0.0 else ""
            return False, (f"for x = {start}{zero} the exercise asks for {asked_op}; your graph records "
                           f"{', '.join(op_labels(y))}.")
        y.backward()
        y_ref.backward()
        if x.grad is None:
            return False, f"for x = {start} backward() left no x.grad: is your result computed from x?"
        if not torch.allclose(x.grad, known(x_ref.grad, "x.grad")):
            return False, f"for x = {start} your x.grad is {x.grad.item():g}: check the formula of that branch."
    return True, ("each x records only the branch Python took: MulBackward0 for x > 0, PowBackward0 otherwise, "
                  "and backward follows that branch's derivative.")


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
EXERCISES = (
    predict(1, "autograd nodes of twenty rounds", "a whole number",
            value(_autograd_nodes_of_twenty_rounds, "each round records MulBackward0 and AddBackward0, and the leaf "
                  "x has one AccumulateGrad node: 2 * 20 + 1.",
                  hints=((82, "82 is what the drawing shows: it adds a None box for each Python-number constant and "
                              "a box for the output tensor; neither is an autograd node."),
                         (40, "you counted the operations; the leaf x has a node too, AccumulateGrad, where backward "
                              "ends."),
                         (42, "the output tensor is not a node of its own: it points at its last operation through "
                              "grad_fn."),
                         (20, "each round records two operations, * 2 and + 1.")),
                  otherwise="count what one round records, then add the leaf's node."),
            hint="One round runs y * 2 and then + 1. Constants such as 2 get no node (only a None entry), and the "
                 "leaf x gets one node, AccumulateGrad.",
            answer="41", needs=("repeat_forward",)),
    write(2, "a graph that follows a sign", _sign_forward, SIGN_FORWARD,
          hint="Inside the function, `if x > 0:` works on a one-element tensor (Python asks for its truth value). "
               "Return x * 3 in one branch and x ** 2 in the other."),
    predict(3, "halvings of 200", "a whole number",
            value(_halvings_of_200, "200 → 100 → 50 → 25 → 12.5 → 6.25 → 3.125 → 1.5625 → 0.78125: eight rounds, "
                  "eight DivBackward0 nodes.",
                  hints=((7, "too few: check the value after your last halving against the loop's condition."),
                         (9, "too many: the loop stops as soon as the value is at most 1."),
                         (200, "count the halvings, the rounds the while loop ran, not the value.")),
                  otherwise="halve 200 until it is at most 1, counting the rounds."),
            hint="Halve 200 by hand: 100, 50, ... and stop at the first value at most 1.",
            answer="8", needs=("halve_until_small",)),
    choose(4, "where the comparison went", COMPARISON, answer="b",
           hint="Print y.abs().grad_fn for a y that requires grad. Then ask: is y computed from that result?",
           needs=("halve_until_small",)),
)
