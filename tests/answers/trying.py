"""A right answer for every exercise whose cell also tries things out, as
an honest learner's does: a lesson name bound again (`x`, as the lessons
use it), a print, a plot, and the answer between them. Each must be
graded right and never flagged (classroom/tests/test_grade.py,
classroom/tests/test_grade_source.py)."""

from helpers import lessons
from helpers.exercises import declared

BEFORE = """x = torch.tensor(2.0, requires_grad=True)   # trying it out first
y = x * 3
print(y, y.grad_fn)
"""
AFTER = """
import matplotlib.pyplot as plt
plt.plot([0, 1, 2], [0, 1, 4])
plt.title("my try")
plt.close()
print("my answer is in")
"""


def trying(solution):
    """The solution with an honest learner's trying out around it."""
    return BEFORE + solution.strip() + "\n" + AFTER


TRYING = {(notebook, e.number): (trying(e.solution),) for notebook in lessons.numbers() for e in declared(notebook)}
