"""Notebook 06's exercises as learners may answer them (see tests/answers/__init__.py)."""


WRONG = {
    1: (("answer_1 = False", "AbsBackward0 keep"), ("answer_1 = 'error'", "True or False")),
    2: (("answer_2 = True", "does not save x"), ("answer_2 = 0", "True or False")),
    3: (("answer_3 = 4", "never overwrites"), ("answer_3 = True", "a number")),
    4: (("answer_4 = 2", "can still run"), ("answer_4 = 0", "first call only")),
    5: (("answer_5 = 'a'", "nothing was recorded"), ("answer_5 = 'c'", "none was built")),
    6: (("def survives(x):\n    return (x * x + x).sum()", "MulBackward0 saved other and self"),
        ("def survives(x):\n    return x + x", "scalar"),
        ("def survives(x):\n    return x - x.neg() + 1", "vector x of 2 numbers"),
        ("def survives(x):\n    return x.sum()", "at least three operations"),
        ("def survives(x):\n    return (x * x).sum()", "MulBackward0 saved other and self")),
}
