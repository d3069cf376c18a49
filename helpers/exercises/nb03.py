"""Exercises of notebook 03: retain_graph, and what backward() frees."""

import torch

from ..saved_memory import SavedTensors
from . import Exercise, ExerciseSet, answer_from, filled, filled_function
from .judges import value

CANDIDATES = {"x * 3": lambda x: x * 3, "x.neg()": lambda x: x.neg(), "x.exp()": lambda x: x.exp(),
              "x + x": lambda x: x + x}
WHY_NOT = {
    "x * 3": "MulBackward0 saves the other factor, even the Python number 3 (as a tensor), and the first backward "
             "frees it: a constant derivative is not the rule, a saved value is.",
    "x.exp()": "ExpBackward0 saves its result, because the derivative of exp is exp itself.",
}
WHY_SO = {"x + x": "AddBackward0 saves nothing: its backward passes the gradient on unchanged.",
          "x.neg()": "NegBackward0 saves nothing: its backward only flips the gradient's sign."}


def _survives_twice(make):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = make(x).sum()
    y.backward()
    try:
        y.backward()
    except RuntimeError:
        return False
    return True


def _which_survive(answer, _lesson):
    answer = filled(answer)
    if not isinstance(answer, (set, list, tuple)) or not all(a in CANDIDATES for a in answer):
        return False, f"give a set of the names as written, such as {{'x + x'}}, chosen from {sorted(CANDIDATES)}."
    truth = {name for name, make in CANDIDATES.items() if _survives_twice(make)}
    chosen = set(answer)
    for name in sorted(chosen - truth):
        return False, f"{name} raises on the second call. " + WHY_NOT.get(name, "")
    for name in sorted(truth - chosen):
        return False, f"{name} runs twice without an error. " + WHY_SO.get(name, "")
    return True, "only the nodes that saved nothing can run again: " + " ".join(WHY_SO.values())


def _grad_after_three(_lesson):
    x = torch.tensor(3.0, requires_grad=True)
    y = x ** 2
    for _ in range(3):
        y.backward(retain_graph=True)
    return x.grad.item()


def _bytes_saved(_lesson):
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.Tanh(), torch.nn.Linear(256, 10))
    with SavedTensors() as saved:
        loss = model(torch.randn(32, 64)).pow(2).mean()
    held = saved.held_bytes()             # counted while `loss` keeps its graph alive
    del loss
    return held


TRAIN_STEP = '''
def train_step(trunk, head_a, head_b, inputs):
    features = torch.tanh(trunk(inputs))
    loss_a = head_a(features).pow(2).mean()
    loss_b = head_b(features).abs().mean()
    (loss_a + loss_b).backward()
'''


def _modules():
    torch.manual_seed(3)
    return torch.nn.Linear(4, 8), torch.nn.Linear(8, 1), torch.nn.Linear(8, 1), torch.randn(16, 4)


def _train_step(answer, _lesson):
    answer = filled_function(answer)
    if "retain_graph" in answer.__code__.co_names or "retain_graph" in str(answer.__code__.co_consts):
        return False, ("retain_graph=True makes the error go, but keeps the trunk's saved tensors alive for a "
                       "second walk; give one backward() that covers both losses.")
    mine, asked = _modules(), _modules()
    try:
        answer(*mine)
    except RuntimeError as error:
        return False, f"your step still raises ({str(error).split('.')[0]}): the second backward walks a freed trunk."
    answer_from(TRAIN_STEP, "train_step")(*asked)
    for module, reference in zip(mine[:3], asked[:3], strict=True):
        for p, q in zip(module.parameters(), reference.parameters(), strict=True):
            if p.grad is None or not torch.allclose(p.grad, q.grad):
                return False, "your gradients are not those of loss_a + loss_b: both losses must reach every module."
    return True, "the gradient of a sum is the sum of the gradients: one backward, and the trunk is walked once."


EXERCISES = (
    Exercise(1, "predict", "which graphs survive a second backward", "a set of names, such as {'x + x'}",
             _which_survive,
             hint="For each operation ask: does its backward formula need a value from the forward pass? "
                  "Draw each graph after backward() and look for 'freed'.",
             solution="answer_1 = {'x.neg()', 'x + x'}", answer_name="answer_1",
             wrong=(("answer_1 = {'x * 3', 'x.neg()', 'x + x'}", "Python number 3"),
                    ("answer_1 = {'x.neg()'}", "AddBackward0 saves nothing"),
                    ("answer_1 = {'x.neg()', 'x + x', 'x.exp()'}", "derivative of exp"))),
    Exercise(2, "predict", "three retained calls", "a number",
             value(_grad_after_three, "each call adds dy/dx = 2x = 6 to x.grad: 6 + 6 + 6.",
                   hints=((6.0, "gradients accumulate: every backward() adds into x.grad."),
                          (12.0, "count the calls: there are three."),
                          (54.0, "each call adds 6; nothing multiplies."))),
             hint="dy/dx = 2x = 6 at x = 3; what does each further backward() do to x.grad?",
             solution="answer_2 = 18", answer_name="answer_2",
             wrong=(("answer_2 = 6", "accumulate"), ("answer_2 = 12", "three"))),
    Exercise(3, "predict", "count the saved bytes", "a whole number of bytes",
             value(_bytes_saved, "input 32x64, tanh output 32x256, second weight 256x10 and the 32x10 output that "
                   "pow saves, 4 bytes each: 8192 + 32768 + 10240 + 1280.",
                   hints=((42240, "the second Linear also saves its weight, to compute the gradient for its input."),
                          (51200, "pow saves its input too: the 32x10 output of the second layer."),
                          (13120, "count bytes, not float32 values: 4 bytes each."))),
             hint="float32 is 4 bytes. Add up the four tensors the exercise lists, each once.",
             solution="answer_3 = 52480", answer_name="answer_3",
             wrong=(("answer_3 = 42240", "its weight"), ("answer_3 = 13120", "4 bytes"))),
    Exercise(4, "fix", "two losses, one trunk", "your fixed train_step (delete the ____ line)", _train_step,
             hint="Do not walk the trunk twice: what is the gradient of loss_a + loss_b?",
             solution=TRAIN_STEP, answer_name="train_step",
             wrong=((TRAIN_STEP.replace("(loss_a + loss_b).backward()", "loss_a.backward()\n    loss_b.backward()"),
                     "still raises"),
                    (TRAIN_STEP.replace("(loss_a + loss_b).backward()",
                                        "loss_a.backward(retain_graph=True)\n    loss_b.backward()"), "retain_graph"),
                    (TRAIN_STEP.replace("(loss_a + loss_b).backward()", "loss_a.backward()"), "both losses"))),
)


def exercises(lesson=None):
    """This notebook's exercises for one session; pass `globals()`."""
    return ExerciseSet(EXERCISES, lesson)
