"""Notebook 09's exercises as learners may answer them (see tests/answers/__init__.py)."""

from helpers.lessons.nb09 import CLIPPED, CLIPPED_FIXED, LEAKY

WRONG = {
    1: (("answer_1 = 6", "reuses that graph"), ("answer_1 = 4", "only for a pair that is called"),
        ("answer_1 = 2", "count distinct pairs")),
    2: ((CLIPPED, "breaks the graph"), (CLIPPED_FIXED.replace("largest > 1", "largest > 2"), "gives"),
        (CLIPPED_FIXED.replace("return y /", "return x /"), "gives"),
        ("def clipped(x):\n    y = x * 2\n    return torch.where(y.max() > 1, y / y.max(), y)\n",
         "the one not chosen too"),
        (CLIPPED_FIXED.replace("torch.where(largest > 1, largest, 1.0)",
                               "torch.where(largest > 1, largest, torch.where(largest == 1, largest ** 2, 1.0))"),
         "y.max() is exactly 1")),
    3: (("answer_3 = 'a'", "AOTAutograd"), ("answer_3 = 'd'", "the last one")),
    4: (("def leaky(x):\n    if x > 0:\n        return x\n    return 0.1 * x\n", "ambiguous"),
        ("def leaky(x):\n    return torch.stack([v if v > 0 else 0.1 * v for v in x])\n", "breaks the graph"),
        (LEAKY.replace("0.1 * x", "0.01 * x"), "gives"),
        ("def leaky(x):\n    return x.relu() - 0.1 * (-x).relu()\n", "from 0.1 to 1")),
}

RIGHT = {
    2: (CLIPPED_FIXED.replace("largest > 1, largest, 1.0", "largest <= 1, 1.0, largest"),
        "def clipped(x):\n    y = x * 2\n    big = y.max() > 1\n"
        "    return torch.where(big, y / torch.where(big, y.max(), 1.0), y)\n",
        # at y.max() == 1 both ways give the same values; either way's x.grad (or one between) counts
        "def clipped(x):\n    y = x * 2\n    return y / y.max().clamp(min=1)\n",
        CLIPPED_FIXED.replace("largest > 1", "largest >= 1"),
        "def clipped(x):\n    y = x * 2\n    return y / torch.maximum(y.max(), torch.tensor(1.0))\n"),
    4: ("def leaky(x):\n    return torch.nn.functional.leaky_relu(x, 0.1)\n",
        # at x == 0 both pieces give 0; any x.grad from 0.1 to 1 counts
        "def leaky(x):\n    return torch.maximum(x, 0.1 * x)\n", LEAKY.replace("x > 0", "x >= 0")),
}
