"""Multiple-choice questions, options lettered a, b, c, ..., each with its
feedback: the quiz widget's (`views.quiz_view`) and the choose exercises'."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from string import ascii_lowercase
from typing import Any

Lesson = Mapping[str, Any]
# The quiz before a choice (an earlier choice is not saved with the notebook).
UNANSWERED = "Pick an answer (a choice made before this kernel started is not restored)."


@dataclass(frozen=True)
class Option:
    """One answer and why it is right or not (kept out of repr)."""

    text: str
    why: str = field(repr=False)


@dataclass(frozen=True)
class MultipleChoice:
    """A question and its options; `right` is a letter, or a function of the
    lesson's names that finds it (kept out of repr)."""

    prompt: str
    options: tuple[Option, ...]
    right: str | Callable[[Lesson], str] = field(repr=False)

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(ascii_lowercase[: len(self.options)])

    def verdict(self, letter: str, lesson: Lesson | None = None) -> tuple[bool, str]:
        """(right, why) for the option with this letter (one of `letters`: its callers check)."""
        right = self.right if isinstance(self.right, str) else self.right(lesson or {})
        return letter == right, self.options[self.letters.index(letter)].why


def options(question: MultipleChoice) -> list[tuple[str, str]]:
    """(text, letter) pairs for an ipywidgets RadioButtons."""
    return list(zip((o.text for o in question.options), question.letters, strict=True))


def feedback(question: MultipleChoice, choice: str | None) -> tuple[bool, str]:
    """(right, text) for the option with letter `choice` (None: no choice yet), as the quiz's RadioButtons
    (`options`) give it."""
    if choice is None:
        return False, UNANSWERED
    right, why = question.verdict(choice)
    return right, ("Right. " if right else "Not quite. ") + why
