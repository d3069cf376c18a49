"""One exercise, declared as data; `nbNN.py` holds each notebook's."""

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..arguments import wrong
from ..quiz import MultipleChoice
from .behaviour import Probe, described, difference
from .judges import CHECKER, answer_from, builtin, choice_verdict
from .sandbox import hermetic

Kind = Literal["predict", "write", "fix", "choose"]
Lesson = Mapping[str, Any]
Verdict = tuple[bool, str]
Judge = Callable[[Any, Lesson], Verdict]


@dataclass(frozen=True)
class Exercise:
    """One exercise, made by `predict`, `choose`, `write` or `fix` (their signatures hold each kind's judge and
    probe); judge, hint, solution and probe stay out of repr, so nothing shows the answer."""

    number: int
    kind: Kind
    title: str
    slot: str
    judge: Judge | MultipleChoice = field(repr=False)
    hint: str = field(repr=False)
    solution: str = field(repr=False)
    answer_name: str
    needs: tuple[str, ...] = ()
    probe: Probe | None = field(default=None, repr=False)
    optional: bool = False

    def verdict(self, answer: Any, lesson: Lesson) -> Verdict:
        """(right, text); code the judge finds right must also behave as the solution does (its probe)."""
        if self.kind in ("predict", "choose"):
            answer = builtin(answer)
        if isinstance(self.judge, MultipleChoice):
            return choice_verdict(self.judge, answer, lesson)
        right, text = self.judge(answer, lesson)
        if not right or self.probe is None:
            return right, text
        with hermetic():            # each probe as in a fresh session: the same random numbers for both
            mine = self.probe(answer, lesson)
        with hermetic():
            asked = self.probe(self.reference(lesson), lesson)
        found = difference(mine, asked)
        return (True, text) if found is None else (False, described(found))

    def reference(self, lesson: Lesson | None = None) -> Any:
        """The answer the solution code defines (an error in it is the checker's)."""
        return answer_from(self.solution, self.answer_name, lesson, CHECKER)


def predict(number: int, title: str, form: str, judge: Judge, *, answer: str, hint: str,
            needs: tuple[str, ...] = (), optional: bool = False) -> Exercise:
    """A prediction: `answer_N = ...`; `answer` is the right value as code."""
    return Exercise(number, "predict", title, form, judge, hint, f"answer_{number} = {answer}", f"answer_{number}",
                    needs, optional=optional)


def choose(number: int, title: str, question: MultipleChoice, *, answer: str, hint: str,
           needs: tuple[str, ...] = (), optional: bool = False) -> Exercise:
    """A choice among the question's lettered options; `answer` is the right letter."""
    return Exercise(number, "choose", title, "a letter in quotes, such as 'a'", question, hint,
                    f"answer_{number} = {answer!r}", f"answer_{number}", needs, optional=optional)


def write(number: int, title: str, judge: Judge, solution: str, *, probe: Probe, hint: str,
          needs: tuple[str, ...] = (), optional: bool = False) -> Exercise:
    """Code the learner writes: the function or class `solution` defines."""
    name, is_class = _defined(solution)
    slot = f"your class {name}" if is_class else f"your function (keep its name, {name})"
    return Exercise(number, "write", title, slot, judge, hint, solution, name, needs, probe, optional)


def fix(number: int, title: str, judge: Judge, solution: str, *, probe: Probe, hint: str,
        needs: tuple[str, ...] = (), optional: bool = False) -> Exercise:
    """Broken code the learner fixes: `solution` is the fixed version."""
    name, _ = _defined(solution)
    return Exercise(number, "fix", title, f"your fixed {name} (delete the ____ line)", judge, hint, solution, name,
                    needs, probe, optional)


def _defined(code: str) -> tuple[str, bool]:
    """The name of the one function or class `code` defines, and whether it is a class."""
    found = [node for node in ast.parse(code).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    if len(found) != 1:
        raise wrong(ValueError, f"a solution defines one function or class; this one defines {len(found)}")
    return found[0].name, isinstance(found[0], ast.ClassDef)
