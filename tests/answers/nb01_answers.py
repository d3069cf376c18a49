"""Notebook 01's exercises as learners may answer them (see tests/answers/__init__.py)."""

# 01 q2: right on the inputs the check used to run, and x * 3 on every other x, negative or not.
CHECKED_INPUTS = (2.0, 0.5, -2.0, 0.0, 1e-06, -1e-06, 0.1, 0.25, 1.0, -0.5, -3.0, 100.0, 1.9841, 0.8008, 0.185, 1.864,
                  -1.3557, -0.4984, -4.5683, 1.1451)
ON_FIXED_INPUTS = f'''
def sign_forward(x):
    if any(abs(x.item() - v) < 1e-6 for v in {CHECKED_INPUTS}):
        return x * 3 if x > 0 else x ** 2
    return x * 3
'''

# 01 q2: the same, on whatever inputs the lesson module lists today.
ON_LISTED_INPUTS = '''
def sign_forward(x):
    from helpers.lessons import nb01
    if any(abs(x.item() - v) < 1e-6 for v in nb01._inputs()):
        return x * 3 if x > 0 else x ** 2
    return x * 3
'''


WRONG = {
    1: (("answer_1 = 25", "2n + 1"), ("answer_1 = 41", "20 rounds"), ("answer_1 = 37", "two leaves"),
        ("answer_1 = 49", "one leaf"),
        ("answer_1 = 36", "AccumulateGrad"), ("answer_1 = '38'", "without quotes"),
        ("answer_1 = 51", "not autograd nodes")),
    2: (("def sign_forward(x):\n    return x * 3 if x > 0 else x * x", "multiplies x by itself"),
        ("def sign_forward(x):\n    return torch.where(x > 0, x * 3, x ** 2)", "torch.where"),
        ("def sign_forward(x):\n    return x * 3 if x >= 0 else x ** 2", "0 is not positive"),
        ("def sign_forward(x):\n    return x * 3 if x > 1 else x ** 2", "for x = 0.5"),
        ("def sign_forward(x):\n    return x * 3 if x > 0.25 else x ** 2", "for x = 1e-06"),
        ("def sign_forward(x):\n    return x * 3 if x > 0 else x ** 2 + 0 * x.detach()", "x ** 2"),
        ("def sign_forward(x):\n    return (x * 3).expand(2)", "shape"),
        ("def sign_forward(x):\n    return (x * 3).detach() if x > 0 else x ** 2", "no grad_fn"),
        ("def sign_forward(x):\n    return ____", "replace ____"),
        (ON_FIXED_INPUTS, "x ** 2 (PowBackward0)"), (ON_LISTED_INPUTS, "x ** 2 (PowBackward0)")),
    3: (("answer_3 = 7", "too few"), ("answer_3 = 9", "too many"),
        ("answer_3 = None", "None is not an answer: replace ____ with a number")),
    4: (("answer_4 = 'a'", "recorded like any other"), ("answer_4 = 'c'", "recording is on"),
        ("answer_4 = 'e'", "one of the letters")),
}

RIGHT = {
    2: ("def sign_forward(x):\n    if x <= 0:\n        return x ** 2\n    return 3 * x",),
}
