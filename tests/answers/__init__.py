"""Learners' answers to every exercise, as test data kept out of the package
learners import: tests/answers/nbNN_answers.py holds notebook NN's, keyed by
exercise number: WRONG, wrong answers each with words its feedback must hold;
RIGHT, right answers written otherwise than the solution; RIGHT_SAYING, right
answers with words their feedback must also hold. Gathered here, keyed by
(notebook, exercise number), for tests/test_exercises.py."""

import importlib
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _gathered(kind):
    entries = {}
    for path in sorted(HERE.glob("nb[0-9][0-9]_answers.py")):
        notebook = re.fullmatch(r"nb(\d\d)_answers", path.stem).group(1)
        module = importlib.import_module(f"{__name__}.{path.stem}")
        entries.update({(notebook, number): answers for number, answers in getattr(module, kind, {}).items()})
    return entries


WRONG = _gathered("WRONG")
RIGHT = _gathered("RIGHT")
RIGHT_SAYING = _gathered("RIGHT_SAYING")
