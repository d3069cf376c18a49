"""Notebook 08 (nn.Module and the graph): its widgets' views, WIDGETS and EXERCISES."""

from collections.abc import Callable
from typing import Any

import torch

from ..draw import Figure, draw_graph
from ..exercises.behaviour import data
from ..exercises.exercise import Lesson, Verdict, choose, fix, predict, write
from ..exercises.judges import CHECKER, answer_from, filled_function, op_labels, value
from ..graph import trace_graph
from ..model_cache import as_built
from ..quiz import MultipleChoice, Option
from ..views import counted
from .widget import Check, Widget, click


def freeze_view(build: Callable[[], torch.nn.Sequential], x: torch.Tensor, **frozen: bool) -> Figure:
    """The graph of model(x).sum(), `build()`'s model with the layers `frozen` names
    (freeze_0=True: layer 0) frozen by requires_grad_(False)."""
    model = as_built(build)
    for name, on in frozen.items():
        model[int(name.removeprefix("freeze_"))].requires_grad_(not on)
    loss = model(x).sum()
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    leaves = counted(len(trainable), "AccumulateGrad leaf", "AccumulateGrad leaves")
    caption = f"trainable: {', '.join(trainable) or 'nothing'}; {leaves}"
    if loss.grad_fn is None:
        return Figure(f"{caption}: no graph at all, nothing to train")
    return Figure(caption, draw_graph(loss, model, constants=False))


def mode_view(build: Callable[[], torch.nn.Module], x: torch.Tensor, training: bool) -> Figure:
    """`build()`'s model in train() or eval() mode: the graph of one forward
    pass, and whether BatchNorm's running statistics moved."""
    model = as_built(build).train(training)
    means = [m.running_mean for m in model.modules()
             if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.running_mean is not None]
    before = [mean.clone() for mean in means]
    drawing = draw_graph(model(x).sum(), model, constants=False)
    moved = any(not torch.equal(b, mean) for b, mean in zip(before, means, strict=True))
    caption = (f"{'train' if training else 'eval'}(): {counted(drawing.graph.count('op'), 'operation')} recorded; "
               f"BatchNorm running statistics {'updated' if moved else 'unchanged'}")
    return Figure(caption, drawing)


WIDGETS = (
    Widget("freeze", {"freeze_0": "Checkbox", "freeze_2": "Checkbox"},
           (Check(click("freeze_0"), "trainable: 2.weight, 2.bias; 2 AccumulateGrad leaves"),)),
    Widget("mode", {"training": "Checkbox"},
           (Check(click("training"), "eval(): 7 operations recorded; BatchNorm running statistics unchanged"),)),
)


def _mlp(linears: int) -> torch.nn.Sequential:
    """Linear(3, 4), then Linear(4, 4) layers, the last Linear(4, 2), with a ReLU between each two."""
    torch.manual_seed(8)
    sizes = [3] + [4] * (linears - 1) + [2]
    layers: list[torch.nn.Module] = []
    for inputs, outputs in zip(sizes, sizes[1:], strict=False):
        layers += [torch.nn.Linear(inputs, outputs), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def _products_with_two_frozen(_lesson: Lesson) -> int:
    model = _mlp(3)
    model[0].requires_grad_(False)
    model[4].requires_grad_(False)
    return op_labels(model(torch.randn(5, 3)).sum()).count("AddmmBackward0")


def _dropout_first(_lesson: Lesson) -> str:
    model = torch.nn.Sequential(torch.nn.Dropout(0.5), torch.nn.Linear(3, 4)).train()
    recorded = op_labels(model(torch.randn(5, 3)).sum())
    if "AddmmBackward0" not in recorded:
        return "d"
    return "a" if "MulBackward0" in recorded or "NativeDropoutBackward0" in recorded else "b"


FREEZE = '''
def freeze_all_but_last(model):
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    model[-1].requires_grad_(True)
    return model
'''


DEPTHS = (3, 2, 4)      # Linear layers of the models the check freezes (5, 3 and 7 modules)


def _freeze(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled_function(answer)
    for linears in DEPTHS:
        model, size = _mlp(linears), 2 * linears - 1
        try:
            returned = answer(model)
        except IndexError as error:
            return False, (f"on a model of {size} modules your function raised IndexError ({error}): is a layer's "
                           "number written into it? The last layer's number depends on the model.")
        plain = [f"model[{n}]" if n else "model" for n, m in model.named_modules() if "requires_grad" in vars(m)]
        if plain:
            return False, (f"{plain[0]}.requires_grad = ... sets a plain Python attribute on a Module, which "
                           "nothing reads: freeze a layer's parameters with layer.requires_grad_(False) (the "
                           "method, with an underscore), or each parameter's requires_grad.")
        if returned is None:
            return False, "return the model, as the exercise asks (model = freeze_all_but_last(model) should work)."
        if returned is not model:
            return False, ("you returned another model (a copy?): the model passed in must itself be frozen, in "
                           "place (requires_grad_ on its parameters), and returned; a frozen copy leaves the "
                           "caller's model training every layer.")
        loss = returned(torch.randn(5, 3)).sum()
        if loss.grad_fn is None:
            return False, "nothing is trainable, so there is no graph at all: the last layer must stay trainable."
        leaves = sorted(n.label for n in trace_graph(loss, returned).nodes if n.kind == "leaf")
        if leaves != [f"{size - 1}.bias", f"{size - 1}.weight"]:
            return False, (f"on a model of {size} modules the graph's leaves are {leaves}; only the last layer's "
                           "weight and bias should be there.")
    return True, ("a parameter that does not require grad gets no AccumulateGrad node, and an operation none of "
                  "whose inputs requires grad is not recorded: only the head's two leaves remain.")


def _freeze_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """For each model: whether it came back, and which parameters require grad."""
    observed = {}
    for linears in DEPTHS:
        model = _mlp(linears)
        returned = answer(model)
        observed[f"a model of {2 * linears - 1} modules"] = {
            "returned model": returned is model,
            "parameters that require grad": [n for n, p in model.named_parameters() if p.requires_grad]}
    return observed


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


TRAIN_CASES = ((8, 3), (9, 1), (10, 5))      # (seed, steps)
# What train() does without optimizer.zero_grad(): each step's gradients add to the last ones'.
ACCUMULATING = TRAIN.replace("        optimizer.zero_grad()\n", "")


def _model(seed: int) -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)), \
        torch.randn(8, 3), torch.randn(8, 1)


def _trained(train: Any, seed: int, steps: int) -> tuple[torch.nn.Module, Any]:
    model, inputs, target = _model(seed)
    return model, train(model, inputs, target, steps)


def _same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    return all(torch.allclose(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))


def _train(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled_function(answer)
    asked, accumulating = (answer_from(code, "train", None, CHECKER) for code in (TRAIN, ACCUMULATING))
    for seed, steps in TRAIN_CASES:
        try:
            mine, loss = _trained(answer, seed, steps)
        except RuntimeError as error:
            if "inplace" in str(error):
                return False, ("optimizer.step() changed the weights in place, and the old graph saved the old "
                               "weights: the graph of one step cannot serve the next.")
            if "second time" in str(error):
                return False, ("the graph is built once, before the loop, and the first backward freed it: each "
                               "step needs a forward pass of its own.")
            raise
        reference, asked_loss = _trained(asked, seed, steps)
        if _same_weights(mine, reference):
            if isinstance(loss, torch.Tensor) and torch.allclose(loss, asked_loss):
                continue
            return False, "the training is right; return the last step's loss, as the original does."
        if _same_weights(mine, _model(seed)[0]):
            return False, ("the weights did not change: did a step run after each backward, with the gradients "
                           "still in .grad?")
        if _same_weights(mine, _trained(accumulating, seed, steps)[0]):
            return False, ("each step used the gradients of all the steps so far: backward adds to .grad, so reset "
                           "it every step (optimizer.zero_grad()) before the next backward.")
        return False, (f"after {steps} steps the trained weights differ from {steps} plain SGD steps: one forward, "
                       "backward, step per round.")
    # backward without retain_graph freed the saved values; a loss returned without its graph has none
    freed = loss.grad_fn is None or any(saved.freed for node in trace_graph(loss).nodes for saved in node.saved)
    kept = "" if freed else (" retain_graph=True can go: nothing is reused, and it only keeps each "
                            "step's graph until the next forward replaces it.")
    return True, ("a fresh forward pass each step builds a fresh graph from the updated weights: nothing to "
                  f"retain.{kept}")


def _train_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """For each case: the trained weights and the loss returned."""
    observed = {}
    for seed, steps in TRAIN_CASES:
        model, loss = _trained(answer, seed, steps)
        observed[f"{steps} steps"] = {"weights": [data(p) for p in model.parameters()], "loss": data(loss)}
    return observed


def _sum_with_inference_tensor_raises(_lesson: Lesson) -> bool:
    model, w = torch.nn.Linear(3, 2), torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        y = model(torch.randn(2, 3))
    try:
        (y + w).sum().backward()
    except RuntimeError:
        return True
    return False


DROPOUT = MultipleChoice(
    "`model = nn.Sequential(nn.Dropout(0.5), nn.Linear(3, 4))`, in `train()` mode, on an input `x` that does not "
    "require grad. What does the graph of `model(x).sum()` record for the dropout?",
    (
        Option("A multiplication by its random mask (`MulBackward0`), as for any dropout in `train()`.",
               "the mask multiplication runs, but neither of its inputs (x and the mask) requires grad, so autograd "
               "does not record it."),
        Option("Nothing: the mask multiplication runs, but none of its inputs requires grad.",
               "an operation is recorded only when one of its inputs requires grad: x does not, nor does the mask. "
               "The Linear after it is recorded, because its weight and bias do."),
        Option("Nothing, because dropout is recorded only in `eval()` mode.",
               "in eval() dropout does nothing at all; in train() it runs its mask multiplication, and whether that "
               "is recorded depends on its inputs."),
        Option("Nothing at all: the model's first operation went unrecorded, so nothing after it is recorded.",
               "the Linear's AddmmBackward0 is recorded: its weight and bias require grad, whatever came before."),
    ),
    right=_dropout_first,
)

EXERCISES = (
    predict(1, "operations with two frozen layers", "a whole number",
            value(_products_with_two_frozen, "layer 0 is not recorded: neither x nor its frozen weight and bias "
                  "require grad. Layer 2 is, its weight requires grad, and so is layer 4: it is frozen, but its "
                  "input comes from layer 2.",
                  hints=((1, "layer 4 is frozen, but its input comes from layer 2, which requires grad: an operation "
                             "is recorded when any of its inputs requires grad."),
                         (3, "nothing entering layer 0 requires grad: x does not, and its weight and bias are "
                             "frozen."),
                         (0, "the middle layer trains: its weight and bias require grad, so its product is "
                             "recorded.")),
                  otherwise="go layer by layer: is any input of its product (the input, the weight, the bias) "
                            "requiring grad?"),
            hint="An operation is recorded when any of its inputs requires grad. Go through the three Linear layers "
                 "in order, and ask that of each.",
            answer="2"),
    choose(2, "dropout before anything trainable", DROPOUT, answer="b",
           hint="Which inputs of dropout's mask multiplication require grad?"),
    write(3, "freeze all but the last layer", _freeze, FREEZE, probe=_freeze_probe,
          hint="Which method stops a parameter from requiring grad, and how do you reach a Sequential's last layer?"),
    fix(4, "a training loop that reuses its graph", _train, TRAIN, probe=_train_probe,
        hint="Which line builds the graph, and how often must it run?"),
    predict(5, "an inference tensor in a sum", "True or False",
            value(_sum_with_inference_tensor_raises, "only saving an inference tensor for backward fails, and "
                  "AddBackward0 saves nothing (notebook 03): y + w is recorded, and backward runs.",
                  hints=((True, "an inference tensor fails only when autograd must save it for backward: what does "
                                "AddBackward0 save?"),)),
            hint="Read section 4's error again: when exactly does an inference tensor fail? Then ask what an "
                 "addition saves.",
            answer="False"),
)
