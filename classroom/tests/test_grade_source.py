"""Flagging (classroom/grade_source.py)."""

import pytest
from answers import RIGHT, RIGHT_SAYING
from answers.trying import TRYING
from hypothesis import given, settings
from hypothesis import strategies as st

from classroom.grade_source import MAX_SOURCE, flags
from helpers import lessons
from helpers.exercises import declared

EVERY = [(n, e) for n in lessons.numbers() for e in declared(n)]

REACHING = {
    "ex.q1.solution()": "uses ex",
    "answer_1 = ex.q1._exercise.solution": "uses ex",
    "s = exercises('06', {}).q1": "uses exercises",
    "from helpers.exercises import declared\nanswer_1 = declared('06')[0]": "uses exercises",
    "from helpers.lessons import nb06": "uses lessons",
    "import helpers.lessons.nb06 as n": "uses nb06",
    "q = my_set.q1\nq.hint()": "uses hint",
    "answer_1 = getattr(box, 'solution')": "uses solution",
    "m = __import__('helpers.exercises.session')": "uses exercises",
    "v = get_ipython().user_ns['ex']": "uses ex",
    "import classroom.grade_run": "uses classroom",
    "import ctypes\nctypes.string_at(0)": "uses ctypes",
    "import sys\nf = sys._getframe(1)": "uses _getframe",
    "import gc\nobjs = gc.get_objects()": "uses gc",
    "torch.library.impl('aten::mul', 'CPU')": "uses library",
    "%timeit ex.q1": "uses ex",
    "text = open('/work/helpers/lessons/nb06.py').read()": "uses lessons",
    "torch.Tensor.backward = lambda self, *a, **k: None": "changes torch",
    "del torch.autograd.grad": "changes torch",
    "class Keep(torch.Tensor):\n    def backward(self, *a, **k):\n        pass": "subclasses torch.Tensor",
    "def f(:\n    ex.q1": "uses ex",                   # does not compile: read word by word
    "s = '''unfinished\nex.q1.solution()": "uses ex",  # does not tokenize: read word by word
}


@pytest.mark.parametrize("source, why", REACHING.items())
def test_every_reach_for_a_solution_or_the_machinery_is_flagged(source, why):
    assert any(f.startswith(why) for f in flags(source)), flags(source)


@pytest.mark.parametrize("notebook, exercise", EVERY, ids=[f"{n}-q{e.number}" for n, e in EVERY])
def test_no_solution_right_answer_or_honest_try_is_flagged(notebook, exercise):
    key = (notebook, exercise.number)
    honest = [exercise.solution, *TRYING[key], *RIGHT.get(key, ()), *(a for a, _ in RIGHT_SAYING.get(key, ()))]
    for source in honest:
        assert flags(source) == [], (source, flags(source))


def test_comments_and_words_in_text_are_not_flagged():
    assert flags("# ex: my solution, after the hint\nprint('the hint helped; an example')\nexample = 1") == []


def test_a_huge_cell_is_flagged_unread_and_a_deep_one_read():
    assert "not read" in flags("x = 1\n" * MAX_SOURCE)[0]
    assert flags("y = (" * 2000 + ")" * 2000 + "\n" + "z = x + 1\n" * 8000) == []


@settings(max_examples=300, deadline=2000)
@given(st.text(max_size=2000))
def test_any_text_is_read_without_raising(source):
    assert isinstance(flags(source), list)
