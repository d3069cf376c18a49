"""Notebook 07's exercises as learners may answer them (see tests/answers/__init__.py)."""

from helpers.lessons.nb07 import CUBE, MUL

BROKEN_MUL = MUL.replace("a.grad += b.data", "a.grad = a.data").replace("b.grad += a.data", "b.grad = b.data")

# 07 q2: the value and the inputs the product records.
SUM_NOT_PRODUCT = MUL.replace("Value(a.data * b.data, (a, b)", "Value(a.data + b.data, (a,)")

ONE_INPUT = MUL.replace("Value(a.data * b.data, (a, b)", "Value(a.data * b.data, (a,)")

# 07 q3: the derivative as 3y/x, right except at x = 0 (0/0).
THROUGH_Y = CUBE.replace("ctx.save_for_backward(x)\n        return x ** 3",
                         "y = x ** 3\n        ctx.save_for_backward(x, y)\n        return y").replace(
    "(x,) = ctx.saved_tensors\n        return 3 * x ** 2 * grad",
    "x, y = ctx.saved_tensors\n        return 3 * y / x * grad")

# 07 q2: the rule adds, except when a and b are one value: then it overwrites (right only on a fresh x).
OVERWRITES_A_SQUARE = MUL.replace("""        a.grad += b.data * out.grad
        b.grad += a.data * out.grad
""", """        if a is b:
            a.grad = 2 * a.data * out.grad
        else:
            a.grad += b.data * out.grad
            b.grad += a.data * out.grad
""")


WRONG = {
    1: (("answer_1 = 4", "three times"), ("answer_1 = 1", "only one")),
    2: ((BROKEN_MUL, "swaps them"),
        (MUL.replace("a.grad += b.data", "a.grad = b.data"), "not overwrite it"),
        (MUL.replace(" * out.grad", ""), "scale by the grad it receives"),
        (MUL.replace("b.grad += a.data", "b.grad += b.data"), "check both factors"),
        (SUM_NOT_PRODUCT, "out holds a.data * b.data"), (ONE_INPUT, "both inputs"),
        ("def mul(a, b):\n    return a * b", "the engine's own product"),
        (OVERWRITES_A_SQUARE, "mul(x, x) + x")),
    3: ((CUBE.replace("        ctx.save_for_backward(x)\n", "        ctx.x = x\n").replace(
            "(x,) = ctx.saved_tensors", "x = ctx.x"), "save_for_backward"),
        (CUBE.replace("3 * x ** 2 * grad", "x ** 2 * grad"), "gradcheck"),
        (CUBE.replace("3 * x ** 2 * grad", "3 * x ** 2"), "times the grad it receives"),
        (CUBE.replace("return x ** 3", "return x ** 2"), "x ** 3"),
        (THROUGH_Y, "divides by x (0/0 there)")),
    4: (("answer_4 = 'c'", "creation order"), ("answer_4 = 'd'", "correctness")),
    5: (("answer_5 = 80", "first derivative"), ("answer_5 = 20", "not at x = 1"),
        ("answer_5 = True", "not numbers")),
}

RIGHT = {
    2: (MUL.replace("b.data * out.grad", "out.grad * b.data").replace(
        "        b.grad += a.data * out.grad\n", "        b.grad = b.grad + a.data * out.grad\n"),
        # the product made with the inputs' own class
        MUL.replace("out = Value(", "out = type(a)("),),
}
