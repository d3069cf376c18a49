"""Multiple-choice questions with immediate feedback. The checking is a
pure function (`feedback`), so tests need no browser; `views.quiz_view`
is what a widget panel shows."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Question:
    """`choices` are the answers shown; `why` says, for each choice, why it
    is right or wrong; `answer` is the index of the right one."""

    prompt: str
    choices: tuple
    why: tuple
    answer: int

    def __post_init__(self):
        if len(self.choices) != len(self.why) or len(self.choices) < 2:
            raise ValueError("a Question needs at least two choices and one explanation per choice")
        if not 0 <= self.answer < len(self.choices):
            raise ValueError(f"answer must be the index of a choice, 0 to {len(self.choices) - 1}")


def feedback(question, choice):
    """(right, text) for the choice with index `choice`; None means no
    choice has been made yet."""
    if choice is None:
        return False, "Pick an answer."
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(question.choices):
        raise ValueError(f"choice must be None or a choice's index, 0 to {len(question.choices) - 1}; got {choice!r}")
    right = choice == question.answer
    return right, ("Right. " if right else "Not quite. ") + question.why[choice]


def options(question):
    """(label, index) pairs for an ipywidgets RadioButtons."""
    return [(label, i) for i, label in enumerate(question.choices)]
