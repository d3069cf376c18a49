"""What an answer slot holds: the placeholder `____`, then a value, a function or a class."""

from collections.abc import Mapping
from typing import Any

import torch

CHECKER = "<exercise code>"        # sandbox.CHECKER_FILES: an error in it is the checker's


class Blank:

    def __repr__(self) -> str:
        return "____"


____ = Blank()


class NotAnswered(Exception):
    """Raised by a judge that meets the placeholder."""


class WrongForm(Exception):
    """An answer of the wrong kind (a number where a function goes): told as feedback."""


def filled(value: Any) -> Any:
    """`value`, unless it is or holds the placeholder (then NotAnswered)."""
    parts = value.values() if isinstance(value, dict) else value
    inside = isinstance(parts, (list, tuple, set, frozenset)) and any(isinstance(v, Blank) for v in parts)
    if isinstance(value, Blank) or inside:
        raise NotAnswered
    return value


def filled_function(answer: Any) -> Any:
    """A function the learner wrote, unless it still names ____ (NotAnswered)."""
    code = getattr(answer, "__code__", None)
    if isinstance(answer, Blank) or (code is not None and "____" in code.co_names):
        raise NotAnswered
    if not callable(answer):
        raise WrongForm(f"this answer must be a function you define with def, not a value of type "
                        f"{type(answer).__name__}: run the cell that defines it again (was its name reused?)")
    return answer


def answer_from(code: str, name: str, lesson: Mapping[str, Any] | None = None, filename: str = "<answer>") -> Any:
    """Run answer code with torch, ____ and the lesson's names; return what it defines as `name`."""
    scope = {**(lesson or {}), "torch": torch, "____": ____}
    exec(compile(code, filename, "exec"), scope)
    return scope[name]
