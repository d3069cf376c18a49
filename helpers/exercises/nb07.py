"""Exercises of notebook 07: autograd from scratch."""

from typing import Any

import torch

from ..quiz import MultipleChoice, Option
from ..saved_values import saved_values
from .answers import filled_function
from .exercise import Lesson, Verdict, choose, fix, predict, write
from .feedback import shown
from .judges import value


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


def _mul(answer: Any, lesson: Lesson) -> Verdict:
    answer, value_class = filled_function(answer), lesson["Value"]
    a, b = value_class(2.0), value_class(5.0)
    answer(a, b).backward()
    if (a.grad, b.grad) == (2.0, 5.0):
        return False, "a's gradient is b's value times out.grad, and b's is a's: the product rule swaps them."
    if (a.grad, b.grad) != (5.0, 2.0):
        return False, (f"for a = 2, b = 5 you get a.grad = {shown(a.grad)}, b.grad = {shown(b.grad)}: check both "
                       "factors.")
    a, b = value_class(2.0), value_class(5.0)
    (answer(a, b) * 3 + a).backward()           # out.grad is 3, and a is used outside mul too
    if b.grad == 2.0:
        return False, "in mul(a, b) * 3 the product's out.grad is 3: a rule must scale by the grad it receives."
    if (a.grad, b.grad) != (16.0, 6.0):
        return False, (f"in mul(a, b) * 3 + a you get a.grad = {shown(a.grad)} (want 3b + 1 = 16): a is used outside "
                       "mul too, so its rule must add to a.grad, not overwrite it.")
    x = value_class(3.0)
    answer(x, x).backward()
    if x.grad != 6.0:
        return False, (f"mul(x, x) at x = 3 gives x.grad = {shown(x.grad)}: with a and b the same value, the second "
                       "line overwrites what the first put there. Add to grad instead.")
    return True, "each input gets the other's value times out.grad, added to what it has: x * x gives 2x."


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


def _cube(answer: Any, _lesson: Lesson) -> Verdict:
    if not (isinstance(answer, type) and issubclass(answer, torch.autograd.Function)):
        filled_function(answer)
        return False, "define a class Cube(torch.autograd.Function) with forward and backward."
    for method in (answer.forward, answer.backward):
        filled_function(method)                 # not answered while either still returns ____
    x = torch.tensor([0.5, -1.5, 2.0, 0.0], dtype=torch.double, requires_grad=True)
    y = answer.apply(x)
    if not torch.allclose(y, x ** 3):
        return False, "forward should return x ** 3."
    if not any(s.name == "saved_tensors" for s in saved_values(y.grad_fn)):
        return False, "keep x with ctx.save_for_backward(x): it is what backward needs, and what backward frees."
    if not any(torch.equal(t, x) for t in y.grad_fn.saved_tensors):
        return False, "save the input x itself (ctx.save_for_backward(x)), the value d(x³)/dx is computed from."
    if not torch.autograd.gradcheck(answer.apply, (x,), raise_exception=False):
        return False, ("gradcheck finds your backward differs from the numerical gradient: it must return the "
                       "derivative at x times the grad it receives.")
    return True, "forward saves x, backward reads it back from ctx.saved_tensors: gradcheck agrees with it."


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
    fix(2, "the product rule", _mul, MUL,
        hint="Check the rule for c = a * b: dc/da = b and dc/db = a. And what if a and b are the same value?",
        needs=("Value",)),
    write(3, "a custom Function", _cube, CUBE,
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
