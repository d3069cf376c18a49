"""Notebook 03 (retain_graph, and what backward() frees): its EXERCISES."""

from collections.abc import Callable, Sequence
from typing import Any

import torch

from ..exercises.behaviour import ParameterWatch, grads
from ..exercises.exercise import Lesson, Verdict, fix, predict
from ..exercises.judges import CHECKER, answer_from, canonical, filled, filled_function, kind, known, value
from ..saved_memory import held_bytes

CANDIDATES = {"2 * x": lambda x: 2 * x, "x - 1": lambda x: x - 1, "x.sin()": lambda x: x.sin(),
              "x.clone()": lambda x: x.clone()}


WHY_NOT = {
    "2 * x": "MulBackward0 saves the other factor, even the Python number 2 (as a tensor), and the first backward "
             "frees it: a constant derivative is not the rule, a saved value is.",
    "x.sin()": "SinBackward0 saves its input x, because the derivative of sin(x) is cos(x).",
}
WHY_SO = {"x - 1": "SubBackward0 saves no tensor (only the Python number alpha): its backward passes the gradient "
                   "on unchanged.",
          "x.clone()": "CloneBackward0 saves nothing: its backward passes the gradient straight through."}


def backward_calls(make: Callable[[torch.Tensor], torch.Tensor], start: Any,
                   retains: Sequence[bool]) -> tuple[int, Any]:
    """y = make(x).sum() for x = `start`, then y.backward(retain_graph=r) for each r
    in `retains`: the number of the call that raised (0: none), and x.grad's values."""
    x = torch.tensor(start, requires_grad=True)
    y = make(x).sum()
    for number, retain in enumerate(retains, start=1):
        try:
            y.backward(retain_graph=retain)
        except RuntimeError:
            return number, None if x.grad is None else x.grad.tolist()
    return 0, None if x.grad is None else x.grad.tolist()


def _named(answer: Any) -> set[Any]:
    """The answer's names as the question spells them (judges.FORMS); others as given."""
    spelled = {name.lower(): name for name in CANDIDATES}
    return {spelled.get(item.strip().lower(), item) if isinstance(item, str) else item for item in canonical(answer)}


def _which_survive(answer: Any, _lesson: Lesson) -> Verdict:
    answer = filled(answer)
    if kind(answer) != "set":
        return False, f"give a set of the names as written, such as {{'a', 'b'}}, chosen from {sorted(CANDIDATES)}."
    unknown = sorted(map(str, _named(answer) - set(CANDIDATES)))
    if unknown:
        verb = "is not one of the names" if len(unknown) == 1 else "are not among the names"
        return False, (f"{', '.join(map(repr, unknown))} {verb}: write each as the question does, chosen from "
                       f"{sorted(CANDIDATES)}.")
    truth = {name for name, make in CANDIDATES.items() if not backward_calls(make, [1.0, 2.0], (False, False))[0]}
    chosen = _named(answer)
    for name in sorted(chosen - truth):
        return False, f"{name} raises on the second call. " + WHY_NOT.get(name, "")
    missing = len(truth - chosen)
    if missing:
        more = "one more of them also runs" if missing == 1 else f"{missing} more of them also run"
        return False, f"{more} twice without an error: which other nodes save nothing?"
    return True, "only the nodes that saved nothing can run again: " + " ".join(WHY_SO.values())


def _bytes_saved(_lesson: Lesson) -> int:
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(), torch.nn.Linear(128, 10))
    return held_bytes(lambda: model(torch.randn(16, 64)).pow(2).mean())


TRAIN_STEP = '''
def train_step(trunk, head_a, head_b, inputs):
    features = torch.tanh(trunk(inputs))
    loss_a = head_a(features).pow(2).mean()
    loss_b = head_b(features).abs().mean()
    (loss_a + loss_b).backward()
'''


CASES = ((3, 16), (13, 16), (23, 1))        # (seed, batch): the modules and inputs of each case


def _stepped(step: Callable[..., Any], seed: int, batch: int) -> tuple[tuple[torch.nn.Module, ...], ParameterWatch]:
    """Run a train step on a case's fresh modules, watching the trunk's weight."""
    torch.manual_seed(seed)
    trunk, head_a, head_b = torch.nn.Linear(4, 8), torch.nn.Linear(8, 1), torch.nn.Linear(8, 1)
    inputs = torch.randn(batch, 4)
    with ParameterWatch(trunk.weight) as watch:
        step(trunk, head_a, head_b, inputs)
    return (trunk, head_a, head_b), watch


def _train_step(answer: Any, _lesson: Lesson) -> Verdict:
    answer, asked = filled_function(answer), answer_from(TRAIN_STEP, "train_step", None, CHECKER)
    for seed, batch in CASES:
        try:
            mine, watch = _stepped(answer, seed, batch)
        except RuntimeError as error:
            if "second time" not in str(error):
                raise
            return False, "your step still raises (the second backward walks a freed trunk): the trunk's saved " \
                          "tensors were freed by the first backward."
        if watch.uses > 1:
            return False, (f"your step runs the trunk {watch.uses} times: the gradients may be right, but the "
                           "exercise asks for one forward and one walk of the trunk.")
        if watch.walks > 1:
            return False, (f"your step walks the trunk's graph {watch.walks} times: a first backward kept it "
                           "(retain_graph) for a second to walk again, and its saved tensors stay alive until then. "
                           "Give one backward() that covers both losses.")
        ratio = _gradient_ratio(mine, _stepped(asked, seed, batch)[0])
        if ratio is None:
            return False, "your gradients are not the sum of both losses' gradients: does each loss reach every " \
                          "module?"
        if abs(ratio - 1) > 1e-5:
            return False, (f"your gradients are {ratio:.3g} times the sum of both losses' gradients: use the losses "
                           "as they are.")
    return True, "the gradient of a sum is the sum of the gradients: one backward, and the trunk is walked once."


def _train_step_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """For each case: every module's gradients, and how often the trunk was read and walked."""
    observed = {}
    for seed, batch in CASES:
        modules, watch = _stepped(answer, seed, batch)
        observed[f"seed {seed}, batch {batch}"] = {"gradients": grads(*modules), "trunk forwards": watch.uses,
                                                  "trunk walks": watch.walks}
    return observed


def _gradient_ratio(mine: Sequence[torch.nn.Module], asked: Sequence[torch.nn.Module]) -> float | None:
    """The one factor relating all your gradients to the asked ones, or None."""
    given = [p.grad for m in mine for p in m.parameters()]
    wanted = [known(q.grad, "a parameter's grad") for m in asked for q in m.parameters()]
    found = [g for g in given if g is not None]
    if len(found) < len(given):
        return None
    ratio = (found[0].flatten()[0] / wanted[0].flatten()[0]).item()
    return ratio if all(torch.allclose(g, ratio * q, atol=1e-6) for g, q in zip(found, wanted, strict=True)) else None


EXERCISES = (
    predict(1, "which graphs survive a second backward?", "a set of names, such as {'a', 'b'}",
            _which_survive,
            hint="For each operation ask: does its backward formula need a value from the forward pass? "
                 "Draw each graph after backward() and look for 'freed'.",
            answer="{'x - 1', 'x.clone()'}"),
    predict(2, "three retained calls", "a number",
            value(lambda _: backward_calls(lambda x: x ** 2, 3.0, (True,) * 3)[1],
                  "each call adds dy/dx = 2x = 6 to x.grad: 6 + 6 + 6.",
                  hints=((6.0, "gradients accumulate: every backward() adds into x.grad."),
                         (12.0, "count the calls: there are three."),
                         (54.0, "each call adds 6; nothing multiplies."))),
            hint="dy/dx = 2x = 6 at x = 3; what does each further backward() do to x.grad?",
            answer="18", optional=True),
    predict(3, "count the saved bytes", "a whole number of bytes",
            value(_bytes_saved, "input 16x64, tanh output 16x128, second weight 128x10 and the 16x10 output that "
                  "pow saves, 4 bytes each: 4096 + 8192 + 5120 + 640.",
                  hints=((12928, "the second Linear also saves its weight, to compute the gradient for its input."),
                         (17408, "pow saves its input too: the 16x10 output of the second layer."),
                         (26240, "the tanh output is saved twice (by TanhBackward0 and by the second layer) but "
                                 "it is one storage: count it once."),
                         (4512, "count bytes, not float32 values: 4 bytes each."),
                         (22144, "the input is counted twice: it is one storage, saved once, by the first layer."),
                         (50816, "the first layer's weight is not saved: it would serve only a gradient for the "
                                 "input, and the data needs none."))),
            hint="float32 is 4 bytes. Add up the four tensors the exercise lists, each once.",
            answer="18048", optional=True),
    fix(4, "two losses, one trunk", _train_step, TRAIN_STEP, probe=_train_step_probe,
        hint="Do not walk the trunk twice: what is the gradient of loss_a + loss_b?"),
)
