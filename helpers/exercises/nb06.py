"""Exercises of notebook 06: the practice question."""

import torch

from ..graph import trace_graph
from ..quiz import Question
from . import Exercise, ExerciseSet, filled_function
from .judges import choice, value


def _second_call_raises(make):
    def truth(_lesson):
        x = torch.tensor(2.0, requires_grad=True)
        y = make(x)
        y.backward()
        try:
            y.backward()
        except RuntimeError:
            return True
        return False

    return truth


def _grad_after_retained_and_plain(_lesson):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2
    y.backward(retain_graph=True)
    y.backward()
    return x.grad.item()


def _failing_call(_lesson):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2
    for number, retain in enumerate((True, False, False), start=1):
        try:
            y.backward(retain_graph=retain)
        except RuntimeError:
            return number
    return 0


NO_GRAD = {
    "a": "There is no graph to walk a second time: nothing was recorded under torch.no_grad().",
    "b": "Under torch.no_grad() nothing is recorded: y has no grad_fn and does not require grad, so backward has "
         "nothing to start from.",
    "c": "backward() needs a graph from y to x, and under torch.no_grad() none was built.",
    "d": "Nothing here changes a tensor in place.",
}


def _no_grad_error(_lesson):
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


def _survives(answer, _lesson):
    answer = filled_function(answer)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = answer(x)
    if not isinstance(y, torch.Tensor) or y.grad_fn is None:
        return False, f"return a tensor computed from x; you returned {y!r}."
    if y.numel() != 1:
        return False, "backward() needs a scalar: end with .sum()."
    graph = trace_graph(y, {"x": x})
    leaf_ids = {n.id for n in graph.find("x")}
    uses = sum(e.src in leaf_ids for e in graph.edges)
    if graph.count("op") < 3 or uses < 2:
        return False, (f"your graph has {graph.count('op')} operation(s) and uses x {uses} time(s); "
                       "the exercise asks for at least three operations and x used at least twice.")
    y.backward()
    try:
        y.backward()
    except RuntimeError:
        freed = [f"{n.label} ({s.name})" for n in trace_graph(y).nodes for s in n.saved if s.freed]
        return False, (f"the second backward raised: {', '.join(freed)} saved a tensor that the first one freed. "
                       "Choose operations whose backward needs no saved value.")
    return True, "none of its nodes saved a tensor, so there is nothing to free; x.grad simply doubles."


EXERCISES = (
    Exercise(1, "predict", "x * 3, twice", "True or False",
             value(_second_call_raises(lambda x: x * 3), "MulBackward0 saves the 3 (as a tensor) to compute the "
                   "gradient for x, and the first call frees it.",
                   hints=((False, "the derivative of x * 3 is a constant, but that is not the rule: look at what "
                                  "MulBackward0 saves."),)),
             hint="Draw y = x * 3 after one backward(): is anything marked freed?",
             solution="answer_1 = True", answer_name="answer_1",
             wrong=(("answer_1 = False", "MulBackward0 saves"), ("answer_1 = 'error'", "True or False"))),
    Exercise(2, "predict", "x + x, twice", "True or False",
             value(_second_call_raises(lambda x: x + x), "AddBackward0 saves no tensor, so nothing is freed: the "
                   "second call runs and x.grad becomes 4.",
                   hints=((True, "AddBackward0 saves nothing: there is nothing for the first call to free."),)),
             hint="What does the backward of an addition need from the forward pass?",
             solution="answer_2 = False", answer_name="answer_2",
             wrong=(("answer_2 = True", "saves nothing"), ("answer_2 = 0", "True or False"))),
    Exercise(3, "predict", "a retained call, then a plain one", "a number",
             value(_grad_after_retained_and_plain, "both calls run (the first kept the saved tensors), and each adds "
                   "dy/dx = 2x = 4 to x.grad.",
                   hints=((4.0, "both calls run, and backward adds into x.grad; it never overwrites it."),
                          (2.0, "dy/dx of x ** 2 is 2x, at x = 2."),
                          (16.0, "each call adds; nothing multiplies."))),
             hint="Does the second call run? And what does each call do to x.grad?",
             solution="answer_3 = 8", answer_name="answer_3",
             wrong=(("answer_3 = 4", "never overwrites"), ("answer_3 = True", "a number"))),
    Exercise(4, "predict", "which call fails", "1, 2 or 3 (or 0 for none)",
             value(_failing_call, "the first call retained the graph, the second did not, so the third finds the "
                   "saved tensors freed.",
                   hints=((2, "the first call retained the graph, so the second can still run."),
                          (0, "retain_graph=True was passed once, to the first call only."),
                          (1, "nothing was freed before the first call."))),
             hint="Which calls keep the saved tensors, and which free them?",
             solution="answer_4 = 3", answer_name="answer_4",
             wrong=(("answer_4 = 2", "can still run"), ("answer_4 = 0", "first call only"))),
    Exercise(5, "choose", "backward after torch.no_grad()", "a letter in quotes, such as 'a'",
             choice(NO_GRAD, _no_grad_error),
             hint="Under torch.no_grad(), is y's operation recorded at all?",
             solution="answer_5 = 'b'", answer_name="answer_5",
             wrong=(("answer_5 = 'a'", "nothing was recorded"), ("answer_5 = 'c'", "none was built"))),
    Exercise(6, "write", "a graph that survives a second backward", "your function (keep its name, survives)",
             _survives,
             hint="Addition, subtraction, negation and sum save nothing; products, powers and exp do.",
             solution=SURVIVES, answer_name="survives",
             wrong=(("def survives(x):\n    return (x * x + x).sum()", "MulBackward0"),
                    ("def survives(x):\n    return x + x", "scalar"),
                    ("def survives(x):\n    return x.sum()", "at least three operations"))),
)


def exercises(lesson=None):
    """This notebook's exercises for one session; pass `globals()`."""
    return ExerciseSet(EXERCISES, lesson)


PRACTICE_QUESTION = Question(
    prompt="Why does a second y.backward() without retain_graph=True raise an error?",
    choices=(
        "The gradient was already computed, and PyTorch forbids computing it twice.",
        "The first backward() freed the tensors the graph saved for it, which the second call would need.",
        "The first backward() deleted the graph's nodes, so y.grad_fn is None afterwards.",
        "x.grad is already set, and backward() refuses to overwrite it.",
    ),
    why=(
        "Computing a gradient twice is allowed: with retain_graph=True it works and the results add up.",
        "Backward frees the intermediate values (the saved tensors) to save memory; the nodes stay, "
        "but a node that needs a freed value cannot run again.",
        "The nodes survive backward(): y.grad_fn is still there and still names its operation.",
        "backward() never overwrites .grad; it adds to it, as the retain_graph example shows.",
    ),
    answer=1,
)
