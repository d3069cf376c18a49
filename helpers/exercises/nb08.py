"""Exercises of notebook 08: nn.Module and the graph."""

from typing import Any

import torch

from ..graph import trace_graph
from ..quiz import MultipleChoice, Option
from .answers import answer_from, filled_function
from .exercise import Lesson, Verdict, choose, fix, predict, write
from .judges import value


def _leaves_with_layer_0_frozen(lesson: Lesson) -> int:
    model = lesson["small_mlp"]()
    model[0].requires_grad_(False)
    return trace_graph(model(torch.randn(5, 3)).sum(), model).count("leaf")


def _dropout_in_eval(_lesson: Lesson) -> str:
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.5)).eval()
    return "b" if [n.label for n in trace_graph(model(torch.randn(2, 3)).sum()).nodes if n.kind == "op"] == [
        "SumBackward0", "AddmmBackward0", "TBackward0"] else "c"


FREEZE = '''
def freeze_all_but_last(model):
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    model[-1].requires_grad_(True)
    return model
'''


def _freeze(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled_function(answer)
    torch.manual_seed(8)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4), torch.nn.ReLU(),
                                torch.nn.Linear(4, 2))
    returned = answer(model)
    if returned is None:
        return False, "return the model, as the exercise asks (model = freeze_all_but_last(model) should work)."
    model = returned
    loss = model(torch.randn(5, 3)).sum()
    if loss.grad_fn is None:
        return False, "nothing is trainable, so there is no graph at all: the last layer must stay trainable."
    leaves = sorted(n.label for n in trace_graph(loss, model).nodes if n.kind == "leaf")
    if leaves != ["4.bias", "4.weight"]:
        return False, f"the graph's leaves are {leaves}; only the last layer's weight and bias should be there."
    return True, ("a parameter that does not require grad gets no AccumulateGrad node, and an operation none of "
                  "whose inputs requires grad is not recorded: only the head's two leaves remain.")


TRAIN = '''
def train(model, data, target, steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = (model(data) - target).pow(2).mean()
        loss.backward()
        optimizer.step()
    return loss
'''


def _train(answer: Any, lesson: Lesson) -> Verdict:
    answer = filled_function(answer)
    runs = []
    for train in (answer, answer_from(TRAIN, "train", lesson)):
        torch.manual_seed(8)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        data, target = torch.randn(8, 3), torch.randn(8, 1)
        try:
            train(model, data, target, 3)
        except RuntimeError as error:
            if "inplace" in str(error):
                return False, ("optimizer.step() changed the weights in place, and the old graph saved the old "
                               "weights: the graph of one step cannot serve the next.")
            if "second time" in str(error):
                return False, ("the graph is built once, before the loop, and the first backward freed it: each "
                               "step needs a forward pass of its own.")
            raise
        runs.append(model)
    if not all(torch.allclose(p, q) for p, q in zip(runs[0].parameters(), runs[1].parameters(), strict=True)):
        return False, "the trained weights differ from three plain SGD steps: one forward, backward, step per round."
    return True, "a fresh forward pass each step builds a fresh graph from the updated weights: nothing to retain."


def _clone_of_inference_tensor_raises(_lesson: Lesson) -> bool:
    model, head = torch.nn.Linear(3, 2), torch.nn.Linear(2, 1)
    with torch.inference_mode():
        y = model(torch.randn(2, 3))
    try:
        head(y.clone()).sum().backward()
    except RuntimeError:
        return True
    return False


DROPOUT = MultipleChoice(
    "What happens to a `Dropout` layer's part of the graph when the model is in `eval()` mode?",
    (
        Option("The module is removed from the model until `train()` is called again.",
               "eval() does not delete the module: model[3] is still there, it only behaves differently."),
        Option("Nothing is recorded for it: it passes its input through unchanged.",
               "in eval() dropout passes its input through unchanged, so no operation is recorded for it: the graph "
               "has no node of it at all."),
        Option("It is recorded as a multiplication by a mask of ones.",
               "nothing is multiplied by a mask in eval(): no MulBackward0 of dropout is recorded."),
        Option("The whole model stops recording operations.",
               "the rest of the model is recorded as usual; only dropout's node goes."),
    ),
    right=_dropout_in_eval,
)

EXERCISES = (
    predict(1, "leaves with a frozen layer", "a whole number",
            value(_leaves_with_layer_0_frozen, "layer 0's weight and bias do not require grad, so they get no "
                  "AccumulateGrad node; layer 2's two remain.",
                  hints=((4, "a frozen parameter (requires_grad False) gets no AccumulateGrad node."),
                         (0, "only layer 0 is frozen; layer 2 still trains."),
                         (3, "ReLU has no parameters; count layer 2's."))),
            hint="Which parameters still require grad after model[0].requires_grad_(False)?",
            answer="2",
            needs=("small_mlp",)),
    choose(2, "dropout in eval()", DROPOUT, answer="b",
           hint="Draw a model with dropout in eval() mode, and look for dropout's node."),
    write(3, "freeze all but the last layer", _freeze, FREEZE,
          hint="Which method stops a parameter from requiring grad, and how do you reach a Sequential's last layer?"),
    fix(4, "a training loop that reuses its graph", _train, TRAIN,
        hint="Which line builds the graph, and how often must it run?"),
    predict(5, "an inference tensor, cloned", "True or False",
            value(_clone_of_inference_tensor_raises, "clone(), outside inference_mode, makes an ordinary tensor "
                  "that autograd may save: the head trains on it without an error.",
                  hints=((True, "the error comes from saving an inference tensor itself; what is y.clone()?"),)),
            hint="Read the error message of section 4 to the end: what does it suggest?",
            answer="False"),
)
