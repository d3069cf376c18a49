"""Notebook 06 (the practice question): its WIDGETS, EXERCISES and PRACTICE_QUESTION."""

from typing import Any

import torch

from ..exercises.exercise import Lesson, Verdict, choose, predict, write
from ..exercises.feedback import shown
from ..exercises.judges import filled_function, known, value
from ..graph import trace_graph
from ..quiz import MultipleChoice, Option
from .nb03 import backward_calls
from .widget import Check, Widget, click

WIDGETS = (
    Widget("quiz", {"choice": "RadioButtons"},
           (Check(click("choice", "deleted y's grad_fn"), "Not quite. The nodes survive backward()"),
            Check(click("choice", "freed the tensors"), "Right. What is freed is the saved tensors"))),
)


def _no_grad_error(_lesson: Lesson) -> str:
    x = torch.tensor(2.0, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    try:
        y.backward()
    except RuntimeError as error:
        return "b" if "does not require grad" in str(error) else "a"
    return "c"


SURVIVES = '''
def survives(x):
    return (x - x.neg() + 1).sum()
'''


XS = ((1.0, 2.0), (-0.5, 3.0), (0.0, -4.0))       # the vectors x the check passes


def _survives(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled_function(answer)
    for values in XS:
        x = torch.tensor(values, requires_grad=True)
        y = answer(x)
        if not isinstance(y, torch.Tensor) or y.grad_fn is None:
            return False, f"return a tensor computed from x; you returned {shown(y)}."
        if y.numel() != 1:
            return False, (f"the check passes a vector x of {x.numel()} numbers, and your result has {y.numel()}: "
                           "backward() needs a scalar, so end with .sum().")
        graph = trace_graph(y, {"x": x})
        y.backward()
        try:
            y.backward()
        except RuntimeError:
            freed = [f"{n.label} saved {' and '.join(s.name for s in n.saved if s.freed)}"
                     for n in trace_graph(y).nodes if any(s.freed for s in n.saved)]
            return False, (f"the second backward raised: {'; '.join(freed)}, and the first backward freed those. "
                           "Choose operations whose backward needs no saved value.")
        leaf_ids = {n.id for n in graph.find("x")}
        uses = sum(e.src in leaf_ids for e in graph.edges)
        if graph.count("op") < 3 or uses < 2:
            return False, (f"your graph has {graph.count('op')} operation(s) and uses x {uses} time(s); "
                           "the exercise asks for at least three operations and x used at least twice.")
    return True, "none of its nodes saved a tensor, so there is nothing to free; x.grad simply doubles."


def _survives_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """For each x: whether the result meets each demand of the exercise."""
    observed = {}
    for values in XS:
        x = torch.tensor(values, requires_grad=True)
        y = answer(x)
        scalar = isinstance(y, torch.Tensor) and y.grad_fn is not None and y.numel() == 1
        graph = trace_graph(y, {"x": x}) if scalar else None
        uses = sum(e.src in {n.id for n in graph.find("x")} for e in graph.edges) if graph else 0
        observed[f"x = {list(values)}"] = {"a scalar with a graph": scalar,
                                           "three operations": graph is not None and graph.count("op") >= 3,
                                           "x used twice": uses >= 2, "runs twice": scalar and _runs_twice(y, x)}
    return observed


def _runs_twice(y: torch.Tensor, x: torch.Tensor) -> bool:
    """Whether y.backward() runs twice without retain_graph, adding the same gradient again."""
    y.backward()
    once = known(x.grad, "x.grad").clone()
    try:
        y.backward()
    except RuntimeError:
        return False
    return torch.allclose(known(x.grad, "x.grad"), 2 * once)


NO_GRAD = MultipleChoice(
    "Under `torch.no_grad()`, `y = x * 2`; then `y.backward()`. What happens?",
    (
        Option("\"Trying to backward through the graph a second time\"",
               "There is no graph to walk a second time: nothing was recorded under torch.no_grad()."),
        Option("\"element 0 of tensors does not require grad and does not have a grad_fn\"",
               "Under torch.no_grad() nothing is recorded: y has no grad_fn and does not require grad, so backward "
               "has nothing to start from."),
        Option("No error: `x.grad` becomes 2.",
               "backward() needs a graph from y to x, and under torch.no_grad() none was built."),
        Option("\"modified by an inplace operation\"",
               "Nothing here changes a tensor in place."),
    ),
    right=_no_grad_error,
)

EXERCISES = (
    predict(1, "x.abs(), twice", "True or False",
            value(lambda _: backward_calls(lambda x: x.abs(), [1.0, -2.0], (False, False))[0] == 2,
                  "AbsBackward0 saves its input x: the derivative of abs is the sign of x, and the node needs x to "
                  "know it. The first call frees it.",
                  hints=((False, "the derivative of abs is 1 or -1, but the node must know which: what does "
                                 "AbsBackward0 keep to tell?"),)),
            hint="What does the backward of abs need to know about x, and where can the node find it?",
            answer="True"),
    predict(2, "x[0] - x[1], twice", "True or False",
            value(lambda _: backward_calls(lambda x: x[0] - x[1], [1.0, -2.0], (False, False))[0] == 2,
                  "SelectBackward0 keeps only the dimension, the index and x's shape (plain numbers), and "
                  "SubBackward0 keeps alpha: no tensor is saved, so the second call runs and x.grad becomes [2, -2].",
                  hints=((True, "indexing does not save x: SelectBackward0 keeps the dimension, the index and x's "
                                "shape, plain numbers, to put the gradient back in place."),)),
            hint="Draw y = x[0] - x[1]: which of its nodes lists a saved tensor, and which only plain numbers?",
            answer="False"),
    predict(3, "x.grad after a retained call and a plain one", "a number",
            value(lambda _: backward_calls(lambda x: x ** 2, 2.0, (True, False))[1],
                  "both calls run (the first kept the saved tensors), and each adds dy/dx = 2x = 4 to x.grad.",
                  hints=((4.0, "both calls run, and backward adds into x.grad; it never overwrites it."),
                         (2.0, "dy/dx of x ** 2 is 2x, at x = 2."),
                         (16.0, "each call adds; nothing multiplies."))),
            hint="Does the second call run? And what does each call do to x.grad?",
            answer="8", optional=True),
    predict(4, "which call fails?", "1, 2 or 3 (or 0 for none)",
            value(lambda _: backward_calls(lambda x: x ** 2, 2.0, (True, False, False))[0],
                  "the first call retained the graph, the second did not, so the third finds the saved tensors freed.",
                  hints=((2, "the first call retained the graph, so the second can still run."),
                         (0, "retain_graph=True was passed once, to the first call only."),
                         (1, "nothing was freed before the first call."))),
            hint="Which calls keep the saved tensors, and which free them?",
            answer="3"),
    choose(5, "backward after torch.no_grad()", NO_GRAD, answer="b",
           hint="Under torch.no_grad(), is y's operation recorded at all?", optional=True),
    write(6, "a graph that survives a second backward", _survives, SURVIVES, probe=_survives_probe,
          hint="Addition, subtraction, negation and sum save nothing; products, powers and exp do.", optional=True),
)


PRACTICE_QUESTION = MultipleChoice(
    "x = torch.tensor(3.0, requires_grad=True); y = x * x; z = y + 1; z.backward().\n"
    "What does y.backward(), called now for the first time, do?",
    (
        Option("It runs: backward was never called on y, so nothing of y's graph was freed.",
               "z's graph is y's graph plus one node: z.backward() walked through y's MulBackward0 and freed "
               "what it saved, so the graph y starts from has lost its tensors."),
        Option("It raises: z.backward() freed the tensors y's MulBackward0 saved, which y.backward() needs.",
               "What is freed is the saved tensors of every node the walk passed, whichever output it started "
               "from: y's node is one of them, so y.backward() raises though it is y's first."),
        Option("It raises: z.backward() deleted y's grad_fn, so y has no graph left.",
               "The nodes survive backward(): y.grad_fn is still MulBackward0; what is gone is what it saved."),
        Option("It runs and replaces x.grad with y's gradient, 6.",
               "backward() never replaces .grad, it adds to it; and here the call does not get that far."),
    ),
    right="b",
)
