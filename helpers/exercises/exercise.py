"""One exercise, declared as data: what it asks, how an answer is judged,
a hint and a solution. `nbNN.py` holds each notebook's exercises."""

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from ..arguments import wrong
from ..quiz import MultipleChoice
from .answers import CHECKER, answer_from
from .behaviour import Probe, described, difference
from .judges import builtin, choice_verdict
from .sandbox import hermetic

Kind = Literal["predict", "write", "fix", "choose"]
KINDS: tuple[str, ...] = get_args(Kind)
Lesson = Mapping[str, Any]
Verdict = tuple[bool, str]
Judge = Callable[[Any, Lesson], Verdict]


@dataclass(frozen=True)
class Exercise:
    """One exercise. `judge(answer, lesson)` returns (right, text) and
    raises NotAnswered on the placeholder; a choose exercise's judge is its
    MultipleChoice. `lesson` holds the notebook's names listed in `needs`.
    `slot` says what goes in the answer cell; `solution` is the code that
    fills it, defining `answer_name`. A write or fix exercise has a `probe`
    (behaviour.py): what an answer does on every input its check uses;
    once the judge finds nothing wrong, the answer must do what the
    solution does there. `optional`: the question marks it off the core
    path (*Optional, for a second pass.*), and the score counts it apart.
    Judge, hint, solution and probe stay out of repr: nothing shows the
    answer until the learner asks for it."""

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

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise wrong(ValueError, f"kind must be one of {KINDS}; got {self.kind!r}")
        if (self.kind == "choose") != isinstance(self.judge, MultipleChoice):
            raise wrong(TypeError, "a choose exercise, and only a choose exercise, is judged by a MultipleChoice")
        if not isinstance(self.optional, bool):
            raise wrong(TypeError, f"optional must be True or False; got {self.optional!r}")
        if (self.kind in ("write", "fix")) != (self.probe is not None):
            raise wrong(TypeError, "a write or fix exercise, and only one, needs a probe: what an answer does on "
                                   "the check's inputs (helpers/exercises/behaviour.py)")

    def verdict(self, answer: Any, lesson: Lesson) -> Verdict:
        """(right, text) for an answer; NotAnswered on the placeholder. A
        prediction or a letter reaches its judge as exact built-in types
        (judges.builtin), whatever its class claims. Code the judge finds
        right must also behave as the solution does on every input of the
        check (its probe, run for each as in a fresh session)."""
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
        """The answer the solution code defines (run with the lesson's names;
        an error in it is the checker's, not the learner's)."""
        return answer_from(self.solution, self.answer_name, lesson, CHECKER)


def predict(number: int, title: str, form: str, judge: Judge, *, answer: str, hint: str,
            needs: tuple[str, ...] = (), optional: bool = False) -> Exercise:
    """A prediction: the learner writes `answer_N = ...` in the `form` asked
    for; `answer` is the right value as code ("41", "{'p', 'r'}").
    `optional=True` where the question is marked optional (every factory)."""
    return Exercise(number, "predict", title, form, judge, hint, f"answer_{number} = {answer}", f"answer_{number}",
                    needs, optional=optional)


def choose(number: int, title: str, question: MultipleChoice, *, answer: str, hint: str,
           needs: tuple[str, ...] = (), optional: bool = False) -> Exercise:
    """A choice among the question's lettered options; `answer` is the right letter."""
    return Exercise(number, "choose", title, "a letter in quotes, such as 'a'", question, hint,
                    f"answer_{number} = {answer!r}", f"answer_{number}", needs, optional=optional)


def write(number: int, title: str, judge: Judge, solution: str, *, probe: Probe, hint: str,
          needs: tuple[str, ...] = (), optional: bool = False) -> Exercise:
    """Code the learner writes: the function or class `solution` defines;
    `probe` runs it on the check's inputs."""
    name, is_class = _defined(solution)
    slot = f"your class {name}" if is_class else f"your function (keep its name, {name})"
    return Exercise(number, "write", title, slot, judge, hint, solution, name, needs, probe, optional)


def fix(number: int, title: str, judge: Judge, solution: str, *, probe: Probe, hint: str,
        needs: tuple[str, ...] = (), optional: bool = False) -> Exercise:
    """Broken code the learner fixes: `solution` is the fixed version;
    `probe` runs it on the check's inputs."""
    name, _ = _defined(solution)
    return Exercise(number, "fix", title, f"your fixed {name} (delete the ____ line)", judge, hint, solution, name,
                    needs, probe, optional)


def _defined(code: str) -> tuple[str, bool]:
    """The name of the one function or class `code` defines, and whether it is a class."""
    found = [node for node in ast.parse(code).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    if len(found) != 1:
        raise wrong(ValueError, f"a solution defines one function or class; this one defines {len(found)}")
    return found[0].name, isinstance(found[0], ast.ClassDef)
