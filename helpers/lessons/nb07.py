"""Notebook 07 (autograd from scratch): its widgets' views, WIDGETS and EXERCISES."""

import math
from collections.abc import Callable
from typing import Any

import torch

from ..arguments import learner_facing, wrong
from ..draw import Figure, draw_graph
from ..exercises.behaviour import data
from ..exercises.exercise import Lesson, Verdict, choose, fix, predict, write
from ..exercises.feedback import shown
from ..exercises.judges import filled_function, value
from ..from_scratch import scratch_graph
from ..quiz import MultipleChoice, Option
from ..saved_values import read_saved
from .widget import Check, Widget, press


@learner_facing
def scratch_step_view(build: Callable[[], Any], step: int) -> Figure:
    """The graph of the scratch engine's Value that `build()` returns after its first
    `step` backward rules ran: each node's grad so far, the one that just ran highlighted."""
    root = build()
    order = root.topological_order()
    ops = [v for v in reversed(order) if v.inputs]
    if not 1 <= step <= len(ops):
        raise wrong(ValueError, f"step must be from 1 to {len(ops)}; got {step}")
    root.backward(steps=step)
    _, ids = scratch_graph(root)               # the same numbering draw_graph gives
    notes = {ids[id(v)]: f"grad {v.grad:.3g}" for v in order if getattr(v, "requires_grad", True)}
    now = ops[step - 1]
    caption = f"step {step} of {len(ops)}: the {now.op} node passes its grad {now.grad:.3g} on to its inputs"
    return Figure(caption, draw_graph(root, notes=notes, highlight=(ids[id(now)],)))


WIDGETS = (
    Widget("scratch-step", {"step": "IntSlider"},
           (Check(press("step"), "step 2 of 4: the * node passes its grad 1 on to its inputs"),)),
)


def _grad_of_a_used_twice(lesson: Lesson) -> float:
    a = lesson["Value"](2.0)
    b = a * a + a
    b.backward()
    return float(a.grad)


MUL = '''
def mul(a, b):
    out = Value(a.data * b.data, (a, b), "*")

    def rule():
        a.grad += b.data * out.grad
        b.grad += a.data * out.grad

    out.backward_rule = rule
    return out
'''


def _pairs() -> list[tuple[float, float]]:
    """The (a, b) the check tries: some chosen, some random."""
    randoms = torch.randn(4, 2, generator=torch.Generator().manual_seed(7)).double() * 3
    chosen = [(2.0, 5.0), (-1.5, 0.25), (0.0, 3.0), (7.0, -2.0)]
    return chosen + [(round(a, 4), round(b, 4)) for a, b in randoms.tolist()]


def _counted(mul: Any, value_class: type) -> tuple[Any, Any, list[int]]:
    """A subclass of the lesson's Value, `mul`, and a count of the products its own
    * computes while `mul` runs (a mul that calls a * b skips the exercise; not
    counted: a check's own mul(a, b) * 3, which runs the engine's * outside mul)."""
    products, running = [0], [False]

    class Counted(value_class):  # type: ignore[misc]
        def __mul__(self, other: Any) -> Any:
            products[0] += running[0]
            return super().__mul__(other)

        __rmul__ = __mul__

    def counting(a: Any, b: Any) -> Any:
        running[0] = True
        try:
            return mul(a, b)
        finally:
            running[0] = False

    return Counted, counting, products


def _mul(answer: Any, lesson: Lesson) -> Verdict:
    counted, mul, products = _counted(filled_function(answer), lesson["Value"])
    for a_data, b_data in _pairs():
        a, b, before = counted(a_data), counted(b_data), products[0]
        out = mul(a, b)
        if products[0] > before:
            return False, ("your mul calls a * b, the engine's own product, so the rule this exercise asks you to "
                           "fix never runs: build the Value and its rule yourself.")
        if not isinstance(out, lesson["Value"]) or not math.isclose(out.data, a_data * b_data, abs_tol=1e-9):
            return False, (f"for a = {a_data:g}, b = {b_data:g} your product's value is "
                           f"{shown(getattr(out, 'data', out))}: out holds a.data * b.data.")
        if out.op != "*":
            return False, (f"your product's operation is named {shown(out.op)}: name it '*' (Value's third "
                           "argument), as the original does; drawings and the engine's steps show it.")
        if len(out.inputs) != 2 or out.inputs[0] is not a or out.inputs[1] is not b:
            return False, ("out must record both inputs, (a, b): backward() finds the values to send gradients to "
                           "by following inputs.")
        verdict = _product_rule(_uses(mul, counted, a_data, b_data), a_data, b_data)
        if verdict:
            return False, verdict
    return True, "each input gets the other's value times out.grad, added to what it has: x * x gives 2x."


def _uses(mul: Any, value_class: type, a_data: float, b_data: float) -> dict[str, Any]:
    """The product mul(a, b) (value, operation, inputs) and the gradients in four
    uses of mul: alone, scaled, with a and b the same value, used outside mul too."""
    a, b = value_class(a_data), value_class(b_data)
    out = mul(a, b)
    product = (getattr(out, "data", None), getattr(out, "op", None),
               tuple("a" if v is a else "b" if v is b else "other" for v in getattr(out, "inputs", ())))
    out.backward()
    a3, b3 = value_class(a_data), value_class(b_data)
    (mul(a3, b3) * 3 + a3).backward()           # out.grad is 3, and a is used outside mul too
    x, x2 = value_class(a_data), value_class(a_data)
    mul(x, x).backward()
    (mul(x2, x2) + x2).backward()               # the + x's rule runs first and puts 1 in x.grad
    return {"product": product, "gradients": (a.grad, b.grad), "gradients in mul(a, b) * 3 + a": (a3.grad, b3.grad),
            "gradient in mul(x, x)": x.grad, "gradient in mul(x, x) + x": x2.grad}


def _product_rule(uses: dict[str, Any], a_data: float, b_data: float) -> str:
    """What is wrong with mul's gradients (its _uses) at (a, b); '' when nothing."""
    (a, b), (a3, b3) = uses["gradients"], uses["gradients in mul(a, b) * 3 + a"]
    square, square_and_x = uses["gradient in mul(x, x)"], uses["gradient in mul(x, x) + x"]
    if (a, b) != (b_data, a_data) and (a, b) == (a_data, b_data):
        return "a's gradient is b's value times out.grad, and b's is a's: the product rule swaps them."
    if not (math.isclose(a, b_data) and math.isclose(b, a_data)):
        return (f"for a = {a_data:g}, b = {b_data:g} you get a.grad = {shown(a)}, b.grad = {shown(b)}: "
                "check both factors.")
    if math.isclose(b3, a_data) and not math.isclose(a_data, 0):
        return "in mul(a, b) * 3 the product's out.grad is 3: a rule must scale by the grad it receives."
    if not (math.isclose(a3, 3 * b_data + 1) and math.isclose(b3, 3 * a_data)):
        return (f"in mul(a, b) * 3 + a you get a.grad = {shown(a3)} (want 3b + 1): a is used outside mul "
                "too, so its rule must add to a.grad, not overwrite it.")
    if not math.isclose(square, 2 * a_data):
        return (f"mul(x, x) at x = {a_data:g} gives x.grad = {shown(square)}: with a and b the same value, the "
                "second line overwrites what the first put there. Add to grad instead.")
    if not math.isclose(square_and_x, 2 * a_data + 1):
        return (f"mul(x, x) + x at x = {a_data:g} gives x.grad = {shown(square_and_x)} (want 2x + 1): x is used "
                "outside mul too, and when a and b are the same value your rule overwrites the 1 the + x put in "
                "x.grad. Add to grad in every case.")
    return ""


def _mul_probe(answer: Any, lesson: Lesson) -> dict[str, Any]:
    """For each pair: the product and the gradients in its _uses, and how often mul used Value's own *."""
    observed, (counted, mul, products) = {}, _counted(answer, lesson["Value"])
    for a_data, b_data in _pairs():
        before = products[0]
        uses = _uses(mul, counted, a_data, b_data)
        observed[f"a = {a_data:g}, b = {b_data:g}"] = {**uses, "uses of Value's own *": products[0] - before}
    return observed


CUBE = '''
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad
'''


def _cube_inputs() -> torch.Tensor:
    """x for the check: 0, values on both sides of it, and random ones (double, for gradcheck)."""
    randoms = torch.randn(6, generator=torch.Generator().manual_seed(3), dtype=torch.double) * 2
    return torch.cat([torch.tensor([0.5, -1.5, 2.0, 0.0, 1e-3], dtype=torch.double), randoms]).requires_grad_()


def _cube(answer: Any, _lesson: Lesson) -> Verdict:
    if not (isinstance(answer, type) and issubclass(answer, torch.autograd.Function)):
        filled_function(answer)
        return False, "define a class Cube(torch.autograd.Function) with forward and backward."
    missing = [name for name in ("forward", "backward") if name not in vars(answer)]
    if missing:
        return False, f"your Cube has no {' and no '.join(missing)} of its own: define both, as static methods."
    for method in (answer.forward, answer.backward):
        filled_function(method)                 # not answered while either still returns ____
    x = _cube_inputs()
    y = answer.apply(x)
    if not isinstance(y, torch.Tensor) or y.shape != x.shape or not torch.allclose(y, x ** 3):
        return False, "forward should return x ** 3."
    if y.grad_fn is None or not any(s.name == "saved_tensors" for s in read_saved(y.grad_fn)):
        return False, "keep x with ctx.save_for_backward(x): it is what backward needs, and what backward frees."
    if not any(torch.equal(t, x) for t in getattr(y.grad_fn, "saved_tensors", ())):
        return False, "save the input x itself (ctx.save_for_backward(x)), the value d(x³)/dx is computed from."
    if not torch.autograd.gradcheck(answer.apply, (x,), raise_exception=False):
        if _wrong_only_at_zero(answer):
            return False, ("your backward is right away from 0, but at x = 0 it gives nan or inf: it divides by x "
                           "(0/0 there). Compute the derivative from x alone: 3 * x ** 2 times the grad.")
        return False, ("gradcheck finds your backward differs from the numerical gradient: it must return the "
                       "derivative at x times the grad it receives.")
    return True, "forward saves x, backward reads it back from ctx.saved_tensors: gradcheck agrees with it."


def _wrong_only_at_zero(answer: Any) -> bool:
    """Whether the answer's x.grad is 3x² wherever x is not 0, and not finite at 0."""
    x = _cube_inputs()
    (grad,) = torch.autograd.grad(answer.apply(x).sum(), x, allow_unused=True)
    zero, values = x.detach() == 0, x.detach()
    if grad is None:
        return False
    return bool((~grad[zero].isfinite()).all() and torch.allclose(grad[~zero], 3 * values[~zero] ** 2))


def _cube_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """y, what its node saved, and x.grad for a random upstream gradient."""
    x = _cube_inputs()
    y = answer.apply(x)
    saved = [data(t) for t in getattr(y.grad_fn, "saved_tensors", ())]
    y.backward(torch.randn(x.shape, generator=torch.Generator().manual_seed(4), dtype=torch.double))
    return {"x = 0.5, -1.5, 2, 0, 0.001 and six random values": {"y": data(y), "saved": saved,
                                                                   "x.grad": data(x.grad)}}


def _second_derivative_at_two(_lesson: Lesson) -> float:
    x = torch.tensor(2.0, requires_grad=True)
    (dy_dx,) = torch.autograd.grad(x ** 5, x, create_graph=True)
    (d2,) = torch.autograd.grad(dy_dx, x)
    return d2.item()


TOPO = MultipleChoice(
    "Why does `backward()` run the rules in reversed topological order?",
    (
        Option("Because a `Value` knows who used it, and this is the order it stores them in.",
               "a Value knows only its own inputs, not who used it: the order has to be found by a walk."),
        Option("Because a node may pass its gradient on only after every user of it has added its share.",
               "a node may pass its grad on only once every use of it has added its share; a topological order "
               "(reversed) runs each node after all the nodes that used it."),
        Option("It is not needed: running the rules in the order the values were created works.",
               "in creation order a value's rule would run before its users had sent it anything (try x ** 2 * 3). "
               "Reversed creation order would do, but the engine has only the output, so it finds an order by "
               "walking."),
        Option("Only for speed: any order gives the same gradients, the sorted one is faster.",
               "the sort is about correctness, not speed: in the wrong order a node passes on an unfinished grad."),
    ),
    right="b",
)

EXERCISES = (
    predict(1, "a value used twice", "a number",
            value(_grad_of_a_used_twice, "b = a * a + a: the product gives 2a = 4 and the + a gives 1, added "
                  "together in a.grad.",
                  hints=((4.0, "a is used three times: twice in the product and once more in the + a."),
                         (1.0, "the + a is only one of the uses of a."),
                         (2.0, "the product a * a contributes a.data from each side."))),
            hint="Write down every place a is used, and what each contributes to a.grad.",
            answer="5", needs=("Value",)),
    fix(2, "the product rule", _mul, MUL, probe=_mul_probe,
        hint="Check the rule for c = a * b: dc/da = b and dc/db = a. And what if a and b are the same value?",
        needs=("Value",)),
    write(3, "a custom Function", _cube, CUBE, probe=_cube_probe,
          hint="Follow MySin: what must forward keep for backward, and what is d(x³)/dx?"),
    choose(4, "why a topological order?", TOPO, answer="b",
           hint="Think of the diamond: when may the sin node pass its gradient on to x?"),
    predict(5, "a second derivative", "a number",
            value(_second_derivative_at_two, "d/dx x⁵ = 5x⁴, and its derivative 20x³ is 160 at x = 2: the "
                  "create_graph=True pass recorded 5x⁴ as a graph of its own.",
                  hints=((80.0, "that is the first derivative, 5x⁴; differentiate once more."),
                         (20.0, "20x³ at x = 2, not at x = 1."),
                         (40.0, "differentiate 5x⁴: the exponent comes down as a factor."))),
            hint="Differentiate x⁵ twice by hand, then put x = 2.",
            answer="160"),
)
