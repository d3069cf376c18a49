"""Exercises of notebook 01: dynamic control flow."""

import torch

from ..graph import autograd_nodes, trace_graph
from . import Exercise, ExerciseSet, answer_from, filled, filled_function
from .judges import choice, graph_difference, op_labels, value


def _autograd_nodes_of_five_rounds(lesson):
    x = torch.tensor(1.0, requires_grad=True)
    return len(autograd_nodes(lesson["repeat_forward"](x, 5)))


def _halvings_of_37(lesson):
    return len(trace_graph(lesson["halve_until_small"](torch.tensor(37.0, requires_grad=True))).find("DivBackward0"))


SIGN_FORWARD = '''
def sign_forward(x):
    if x > 0:
        return x * 3
    return x ** 2
'''


def _sign_forward(answer, _lesson):
    answer, asked = filled_function(answer), answer_from(SIGN_FORWARD, "sign_forward")
    for start in (2.0, -2.0, 0.0):
        x, x_ref = torch.tensor(start, requires_grad=True), torch.tensor(start, requires_grad=True)
        y, y_ref = filled(answer(x)), asked(x_ref)
        if not isinstance(y, torch.Tensor) or y.grad_fn is None:
            return False, f"for x = {start} your function returned {y!r}: return a tensor computed from x."
        if "WhereBackward0" in op_labels(y):
            return False, ("torch.where computes both branches and records both; use a Python if, so that only "
                           "the branch taken is recorded.")
        if op_labels(y) == ["MulBackward0"] and op_labels(y_ref) == ["PowBackward0"]:
            return False, (f"for x = {start} your graph multiplies x by itself (MulBackward0, the leaf used twice); "
                           "the exercise asks for x ** 2, which records PowBackward0.")
        difference = graph_difference(y, y_ref, f"for x = {start}")
        if difference:
            return False, difference + " Which branch should run for this x?"
        y.backward()
        y_ref.backward()
        if not torch.allclose(x.grad, x_ref.grad):
            return False, f"for x = {start} your x.grad is {x.grad.item():g}: check the formula of that branch."
    return True, ("each x records only the branch Python took: MulBackward0 for x > 0, PowBackward0 otherwise, "
                  "and backward follows that branch's derivative.")


Q1 = Exercise(
    1, "predict", "autograd nodes of five rounds", "a whole number",
    value(_autograd_nodes_of_five_rounds,
          "each round records MulBackward0 and AddBackward0, and the leaf x has one AccumulateGrad node: 2 * 5 + 1.",
          hints=((22, "22 is what the drawing shows: it adds a None box for each Python-number constant and a box "
                      "for the output tensor; neither is an autograd node."),
                 (10, "you counted the operations; the leaf x has a node too, AccumulateGrad, where backward ends."),
                 (12, "the output tensor is not a node of its own: it points at its last operation through grad_fn."),
                 (5, "each round records two operations, * 2 and + 1.")),
          otherwise="count what one round records, then add the leaf's node."),
    hint="One round runs y * 2 and then + 1. Constants such as 2 get no node (only a None entry), and the "
         "leaf x gets one node, AccumulateGrad.",
    solution="answer_1 = 11", answer_name="answer_1",
    wrong=(("answer_1 = 22", "drawing"), ("answer_1 = 10", "AccumulateGrad"), ("answer_1 = '11'", "no quotes")),
    needs=("repeat_forward",),
)
Q2 = Exercise(
    2, "write", "a graph that follows a sign", "your function (keep its name, sign_forward)",
    _sign_forward,
    hint="Inside the function, `if x > 0:` works on a one-element tensor (Python asks for its truth value). "
         "Return x * 3 in one branch and x ** 2 in the other.",
    solution=SIGN_FORWARD, answer_name="sign_forward",
    wrong=(("def sign_forward(x):\n    return x * 3 if x > 0 else x * x", "multiplies x by itself"),
           ("def sign_forward(x):\n    return torch.where(x > 0, x * 3, x ** 2)", "torch.where"),
           ("def sign_forward(x):\n    return x * 3 if x >= 0 else x ** 2", "for x = 0.0"),
           ("def sign_forward(x):\n    return ____", "replace ____")),
)
Q3 = Exercise(
    3, "predict", "halvings of 37", "a whole number",
    value(_halvings_of_37, "37 → 18.5 → 9.25 → 4.625 → 2.3125 → 1.15625 → 0.578125: six rounds, six DivBackward0.",
          hints=((5, "after five halvings 37 is 1.15625, still above 1: the loop runs once more."),
                 (7, "after six halvings it is 0.578125, at most 1: the loop has stopped."),
                 (37, "count the halvings, the rounds the while loop ran, not the value.")),
          otherwise="halve 37 until it is at most 1, counting the rounds."),
    hint="Halve 37 by hand: 18.5, 9.25, ... and stop at the first value at most 1.",
    solution="answer_3 = 6", answer_name="answer_3",
    wrong=(("answer_3 = 5", "still above 1"), ("answer_3 = 7", "has stopped")),
    needs=("halve_until_small",),
)
ABS_OPTIONS = {
    "a": "It does not: y.abs() in the condition is recorded like any other operation on a tensor that requires "
         "grad. Print y.abs().grad_fn and see.",
    "b": "The abs is recorded, in a small graph of its own, but y was not computed from it, so walking back from "
         "y never reaches it. Only the comparison's outcome, a Python bool, steered the loop.",
    "c": "No: the y / 2 that runs after each comparison is recorded (the DivBackward0 nodes).",
    "d": "abs has a derivative almost everywhere (the sign of x), and torch records AbsBackward0 for it.",
}


def _abs_is_recorded_apart(lesson):
    x = torch.tensor(3.0, requires_grad=True)
    recorded = x.abs().grad_fn is not None
    in_graph = "AbsBackward0" in op_labels(lesson["halve_until_small"](x))
    return "b" if recorded and not in_graph else "a"


Q4 = Exercise(
    4, "choose", "where the comparison went", "a letter in quotes, such as 'a'",
    choice(ABS_OPTIONS, _abs_is_recorded_apart),
    hint="Print y.abs().grad_fn for a y that requires grad. Then ask: is y computed from that result?",
    solution="answer_4 = 'b'", answer_name="answer_4",
    wrong=(("answer_4 = 'a'", "recorded like any other"), ("answer_4 = 'c'", "DivBackward0"),
           ("answer_4 = 'e'", "one of the letters")),
    needs=("halve_until_small",),
)
EXERCISES = (Q1, Q2, Q3, Q4)


def exercises(lesson=None):
    """This notebook's exercises for one session; pass `globals()`."""
    return ExerciseSet(EXERCISES, lesson)
