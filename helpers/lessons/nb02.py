"""Notebook 02 (inspecting grad_fn and next_functions): its widgets' views, WIDGETS and EXERCISES."""

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch

from .. import walk
from ..arguments import learner_facing, wrong
from ..draw import Figure, draw_graph
from ..engine import record_backward
from ..exercises.exercise import Lesson, Verdict, choose, predict, write
from ..exercises.feedback import shown
from ..exercises.judges import canonical, filled, filled_function, known, value
from ..graph import trace_graph
from ..quiz import MultipleChoice, Option
from ..views import counted
from .widget import Check, Widget, press


@learner_facing
def step_view(build: Callable[[], tuple[torch.Tensor, dict[str, torch.Tensor]]], step: int) -> Figure:
    """The graph that `build()` returns (a tensor and a dict of names), each
    node numbered by the backward step that ran it, step `step` highlighted."""
    root, params = build()
    graph = trace_graph(root, params)          # before backward() frees the saved values
    steps = record_backward(root)
    if not 1 <= step <= len(steps):
        raise wrong(ValueError, f"step must be from 1 to {len(steps)}; got {step}")
    now = steps[step - 1]
    notes = {s.node_id: f"step {s.number}" for s in steps}
    passes = f"passes on ({', '.join(now.passed_on)})" if now.passed_on else "adds it to the leaf's .grad"
    caption = f"step {now.number} of {len(steps)}: {now.label} receives {', '.join(now.received)} and {passes}"
    return Figure(caption, draw_graph(graph, notes=notes, highlight=(now.node_id,)))


WIDGETS = (
    Widget("step", {"step": "IntSlider"},
           (Check(press("step"), "step 2 of 5: MulBackward0 receives 1"),)),
)


def _same_node_for_x_times_x(_lesson: Lesson) -> bool:
    x = torch.tensor(3.0, requires_grad=True)
    (first, _), (second, _) = known((x * x).grad_fn, "a grad_fn").next_functions
    return first is second


def _what_tanh_saves(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled(answer)
    if not isinstance(answer, str):
        return False, f"give the attribute's name in quotes, such as '_saved_other'; you gave {shown(answer)}."
    x = torch.tensor(2.0, requires_grad=True)
    tanh_node = known(known((torch.tanh(x) * 4).grad_fn, "a grad_fn").next_functions[0][0], "the tanh node")
    saved = [name for name in dir(tanh_node) if name.startswith("_saved_")]
    if [name.lower() for name in saved] == [answer.strip().lower()]:
        return True, (f"{tanh_node.name()} keeps its own output: the derivative of tanh is 1 - tanh(x)², "
                      "computed from the result, so x itself is not needed.")
    core = answer.strip().lower().removeprefix("_").removeprefix("saved_")
    if saved == ["_saved_" + core]:
        return False, (f"{shown(answer)} is not an attribute of the node (it is close to how the drawing labels "
                       "it): give the attribute's full name, with its _saved_ prefix, as dir(node) lists it.")
    hints = {"self": "_saved_self would be the input x; the derivative of tanh can be computed without it.",
             "other": "_saved_other belongs to the multiplication (the * 4), not to the tanh."}
    if core.startswith("raw_saved_") and hasattr(tanh_node, answer.strip()):
        return False, (f"{shown(answer)} is the raw packed form of what the node saved (a SavedTensor, not the "
                       "tensor itself); the answer is the _saved_ name next to it in dir(node).")
    if hasattr(tanh_node, answer.strip()):
        return False, f"{shown(answer)} is an attribute of the node, but not one that holds a saved tensor: " \
                      "those start with _saved_."
    return False, hints.get(core, f"{shown(answer)} is not an attribute of this node: list them with dir(node).")


COUNT_LEAVES = '''
def count_leaves(tensor):
    seen, queue, leaves = set(), [tensor.grad_fn], 0
    while queue:
        node = queue.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        leaves += node.name().endswith("AccumulateGrad")
        queue.extend(child for child, _ in node.next_functions)
    return leaves
'''


def _graphs_to_count() -> dict[str, torch.Tensor]:
    """Leaves used once, twice and in several places, a leaf that needs no gradient, two models."""
    torch.manual_seed(2)
    x, w1, w2 = (torch.tensor(v, requires_grad=True) for v in (3.0, 1.5, -0.5))
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    deeper = torch.nn.Sequential(*(torch.nn.Linear(3, 3) for _ in range(4)))
    h = x.sin()
    return {"x * 3": x * 3, "(x.sin() * 2).exp()": (x.sin() * 2).exp(), "x * x": x * x,
            "w1 * 3 + w2": w1 * 3 + w2, "the diamond": h * h.exp() + x,
            "w1 used three times": (w1 * x).sin() + w1.exp() * w1, "x.detach() * w2": x.detach() * w2,
            "a stack of three leaves": torch.stack([x, w1, w2]).prod(),
            "the nn.Sequential's loss": model(torch.randn(2, 3)).sum(),
            "four Linear layers": deeper(torch.randn(2, 3)).pow(2).sum()}


def _tallies(tensor: torch.Tensor) -> dict[str, int]:
    """What a walk from tensor.grad_fn can count: the leaves, each node, the
    operations, and the leaves or nodes each time one is reached again."""
    nodes, visits, queue = set(), {"leaf visits": 0, "node visits": 0}, [tensor.grad_fn]
    while queue:
        node = queue.pop()
        if node is None:
            continue
        visits["node visits"] += 1
        visits["leaf visits"] += node.name().endswith("AccumulateGrad")
        nodes.add(node)
        queue.extend(child for child, _ in node.next_functions)
    leaves = sum(node.name().endswith("AccumulateGrad") for node in nodes)
    return {"leaves": leaves, **visits, "nodes": len(nodes), "operations": len(nodes) - leaves}


# The input that needs no gradient, and so gets a None entry, in each graph that has one.
NONE_INPUTS = {"x * 3": "the 3", "(x.sin() * 2).exp()": "the 2", "w1 * 3 + w2": "the 3",
               "x.detach() * w2": "x.detach()", "the nn.Sequential's loss": "the input batch",
               "four Linear layers": "the input batch"}

DIAGNOSES = {
    "leaf visits": "your count goes up each time the walk reaches a leaf again along another path: keep a set of "
                   "the nodes already seen, so a leaf used twice counts once.",
    "nodes": "you count every node the walk reaches (each once, which is right); count only the AccumulateGrad "
             "ones: their name() ends with 'AccumulateGrad'.",
    "node visits": "you count every node, and some more than once: count only the AccumulateGrad nodes, and keep "
                   "a set of those already seen.",
    "operations": "you count the operations; the leaves are the other nodes, the AccumulateGrad ones.",
}


def _counted_by(count: Callable[[torch.Tensor], Any], tensor: torch.Tensor) -> tuple[Any, bool]:
    """count(tensor), and whether that call ran helpers/walk.py (which trace_graph,
    draw_graph and autograd_nodes use), however the answer reached it."""
    walked, previous = False, sys.getprofile()

    def watch(frame: FrameType, event: Any, arg: Any) -> None:
        nonlocal walked
        if event == "call" and frame.f_code.co_filename == walk.__file__:
            walked = True
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(watch)
    try:
        result = count(tensor)
    finally:
        sys.setprofile(previous)
    return canonical(result), walked       # a numpy integer is a number too (judges.FORMS)


def _count_leaves(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled_function(answer)
    counts, tallies = {}, {}
    for name, tensor in _graphs_to_count().items():
        try:
            counts[name], walked = _counted_by(answer, tensor)
            if walked:
                return False, ("your count_leaves leaves the walk to the collection's own (trace_graph, draw_graph "
                               "and autograd_nodes walk the graph for you), so the count is not yours: the exercise "
                               "is that walk. Follow next_functions from tensor.grad_fn yourself, as hand_walk does: "
                               "a queue, a set of the nodes seen, None entries skipped.")
        except AttributeError as error:
            if "NoneType" in str(error):
                example = f" (here {NONE_INPUTS[name]})" if name in NONE_INPUTS else ""
                return False, (f"on {name}: next_functions has None entries for inputs that need no "
                               f"gradient{example}; skip them.")
            if "'tuple' object" in str(error):
                return False, (f"on {name}: each entry of next_functions is a pair (node, output number); put "
                               "the node, the pair's first element, on your queue.")
            raise
        tallies[name] = _tallies(tensor)
    wrong = [name for name in counts if counts[name] != tallies[name]["leaves"]]
    if not wrong:
        return True, ("a walk that visits each node once finds exactly one AccumulateGrad per leaf that needs a "
                      "gradient.")
    for tally, diagnosis in DIAGNOSES.items():
        if all(counts[name] == tallies[name][tally] for name in counts):
            return False, f"on {wrong[0]} you count {shown(counts[wrong[0]])}, and torch's graph has " \
                          f"{counted(tallies[wrong[0]]['leaves'], 'leaf', 'leaves')}: {diagnosis}"
    if all(count == 0 and not isinstance(count, bool) for count in counts.values()):
        return False, ("your function counts 0 leaves on every graph: a leaf's node has name() "
                       "'torch::autograd::AccumulateGrad', so a comparison with == 'AccumulateGrad' never matches. "
                       "Test name().endswith('AccumulateGrad'), as the question says.")
    found = counts[wrong[0]]
    shown_count = f"{found} {'leaf' if found == 1 else 'leaves'}" if isinstance(found, int) else shown(found)
    return False, (f"on {wrong[0]} your function counts {shown_count}, and torch's graph has "
                   f"{tallies[wrong[0]]['leaves']}.")


def _count_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """The count on each graph of the check, and whether the collection's own walk made it."""
    return {name: dict(zip(("count", "left to the collection's walk"), _counted_by(answer, tensor), strict=True))
            for name, tensor in _graphs_to_count().items()}


def _before_the_product(_lesson: Lesson) -> str:
    a, b = torch.tensor(1.0, requires_grad=True), torch.tensor(2.0, requires_grad=True)
    p = a * b
    steps = [s.label for s in record_backward(p.sin() + p.exp())]
    before = set(steps[:steps.index("MulBackward0")])
    return "b" if before == {"AddBackward0", "SinBackward0", "ExpBackward0"} else "a"


def _leaves_of_deeper_model(_lesson: Lesson) -> int:
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4), torch.nn.ReLU(),
                                torch.nn.Linear(4, 1, bias=False))
    return trace_graph(model(torch.randn(2, 3)).sum(), model).count("leaf")


BEFORE_MUL = MultipleChoice(
    "In `out.backward()`, which nodes must the engine run before the `MulBackward0` that made `p`?",
    (
        Option("Only `AddBackward0`, the node that made `out`.",
               "AddBackward0 does run before it, but the MulBackward0 waits for more than the node that made out."),
        Option("`AddBackward0`, `SinBackward0` and `ExpBackward0`.",
               "p is used twice, by sin and by exp; the engine runs p's MulBackward0 only once the gradients from "
               "both users of p (and so AddBackward0 before them) have arrived, and sums them."),
        Option("The `AccumulateGrad` nodes of `a` and `b`.",
               "the AccumulateGrad nodes run after the MulBackward0: they receive their gradients from it."),
        Option("None: the engine runs nodes in the order they were created.",
               "the engine's order follows the arrows backward, from the output, not the order the nodes were made "
               "in."),
    ),
    right=_before_the_product,
)

EXERCISES = (
    predict(1, "one input, used twice", "True or False",
            value(_same_node_for_x_times_x, "both entries point at the one AccumulateGrad node of x; the engine "
                  "adds the two gradients for x together before it runs that node, once.",
                  hints=((False, "a leaf gets one AccumulateGrad node, made the first time it is used and found "
                                 "again by every later use while a graph holds it; compare the two entries with "
                                 "Python's is, and look again."),)),
            hint="pairs = (x * x).grad_fn.next_functions, then look at pairs[0][0] is pairs[1][0].",
            answer="True"),
    predict(2, "what does tanh save?", "the attribute's name in quotes, such as '_saved_other'",
            _what_tanh_saves,
            hint="What does the derivative of tanh(x) need to be computed: the input x, or the output tanh(x)?",
            answer="'_saved_result'", optional=True),
    write(3, "count the leaves", _count_leaves, COUNT_LEAVES, probe=_count_probe,
          hint="Walk as hand_walk does (a queue and a set of seen nodes), skip None entries, and count the nodes "
               "whose name() ends with 'AccumulateGrad'.", optional=True),
    choose(4, "what must run first?", BEFORE_MUL, answer="b",
           hint="A node runs once every gradient for its output has arrived. Which nodes used p?", optional=True),
    predict(5, "leaves of a deeper model", "a whole number",
            value(_leaves_of_deeper_model, "one AccumulateGrad per parameter: a weight and a bias for the first "
                  "two Linear layers, a weight alone for the last (bias=False). The input needs no gradient and "
                  "gets no node.",
                  hints=((6, "the last Linear was made with bias=False: it has a weight only."),
                         (3, "a Linear layer with a bias has two parameters, a weight and a bias."),
                         (7, "ReLU has no parameters, and the last Linear has no bias."),
                         (8, "ReLU has no parameters to learn.")),
                  otherwise="count the parameters: each one gets an AccumulateGrad node, and nothing else does."),
            hint="Each parameter (model.named_parameters()) gets one; the input needs no gradient and gets none.",
            answer="5", optional=True),
)
