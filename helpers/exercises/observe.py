"""An exercise's check in two halves, for a grader that must not run the
learner's code where it judges (classroom/grade.py): `observe` runs
where the answer lives and reduces it to plain data (`plain`: JSON of
exact built-in types, never a method of the answer's own class); `judged`
decides the verdict from that data alone, in another process, with the
exercise's own judge (a prediction or a letter) or by comparing what a
function did with what the reference solution does there (a write or fix
exercise's probe, behaviour.py). Forged data is only another answer: it
is judged like any other."""

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy
import torch

from .answers import Blank, NotAnswered, WrongForm, ____
from .behaviour import described, difference
from .exercise import Exercise
from .sandbox import TimedOut, hermetic, in_sandbox, learners_frame

MAX_ITEMS = 100_000           # items of plain data an observation may hold
MAX_DEPTH = 40
MAX_TENSOR = 10_000           # elements of a tensor kept as numbers


class NotPlain(ValueError):
    """Data that is not what `plain` makes."""


class Opaque:
    """An answer of a type the grader does not rebuild (judged as that type's name)."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<a {self.type_name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.type_name == self.type_name

    def __hash__(self) -> int:
        return hash(self.type_name)


MAX_PLAIN_ITEMS = 50_000      # items and numbers `plain` writes for one value; past them the rest is opaque
MAX_PLAIN_CHARS = 200_000     # characters of text, likewise (so the JSON stays within a child's result limit)


def plain(value: Any) -> Any:
    """`value` as JSON data of exact built-in types: a bool, int, float or
    str as itself (a subclass by its built-in value, read with the built-in
    type's own method), a container tagged with its type, a tensor as its
    shape and numbers, the placeholder as such, anything else by its type's
    name. A value past MAX_DEPTH levels, MAX_PLAIN_ITEMS items or
    MAX_PLAIN_CHARS characters is opaque from there on ("too large"): it can
    never be a right answer, and is never cut into one."""
    left = [MAX_PLAIN_ITEMS, MAX_PLAIN_CHARS]

    def spend(items: int, chars: int = 0) -> bool:
        left[0], left[1] = left[0] - items, left[1] - chars
        return left[0] >= 0 and left[1] >= 0

    def made(value: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            return {"t": "opaque", "type": "too deep"}
        if not spend(1):
            return TOO_LARGE
        if value is None or type(value) is bool:
            return value
        if isinstance(value, numpy.generic):
            return made(numpy.generic.item(value), depth + 1)
        if isinstance(value, int):
            number = int.__int__(value)
            if abs(number) < 2 ** 64:
                return number
            digits = hex(number)          # base 16 has no digit limit (str() of an int has, past 4,300 digits)
            return {"t": "int", "v": digits} if spend(0, len(digits)) else TOO_LARGE
        if isinstance(value, float):
            return _number(float.__float__(value))
        if isinstance(value, Fraction):
            parts = [int.__int__(Fraction.numerator.fget(value)),        # type: ignore[attr-defined]
                     int.__int__(Fraction.denominator.fget(value))]      # type: ignore[attr-defined]
            return {"t": "fraction", "v": [made(part, depth + 1) for part in parts]}
        if isinstance(value, str):
            text = str.__str__(value)
            return text if spend(0, len(text)) else TOO_LARGE
        if isinstance(value, Blank):
            return {"t": "blank"}
        if isinstance(value, (list, tuple)):
            items = list.copy(value) if isinstance(value, list) else list(tuple.__getitem__(value, slice(None)))
            return _container("list" if isinstance(value, list) else "tuple", items, depth, made, spend)
        if isinstance(value, (set, frozenset)):
            items = list(set.__iter__(value) if isinstance(value, set) else frozenset.__iter__(value))
            return _container("set" if isinstance(value, set) else "frozenset", items, depth, made, spend)
        if isinstance(value, dict):
            pairs = list(dict.items(value))
            if not spend(len(pairs)):
                return TOO_LARGE
            return {"t": "dict", "v": [[made(k, depth + 1), made(v, depth + 1)] for k, v in pairs]}
        if isinstance(value, torch.Tensor) and value.numel() <= MAX_TENSOR and spend(value.numel()):
            numbers = value.detach().double().flatten().tolist()
            return {"t": "tensor", "shape": [int(n) for n in value.shape], "v": [_number(float(n)) for n in numbers]}
        return {"t": "opaque", "type": type(value).__qualname__[:100]}

    return made(value, 0)


TOO_LARGE = {"t": "opaque", "type": "too large"}


def _container(tag: str, items: list[Any], depth: int, made: Any, spend: Any) -> Any:
    """A list, tuple, set or frozenset's items, made plain, when the budget holds them all."""
    if not spend(len(items)):
        return TOO_LARGE
    return {"t": tag, "v": [made(item, depth + 1) for item in items]}


NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _number(value: float) -> Any:
    """A float as JSON holds it: NaN and the infinities, which JSON has no
    number for, tagged by name."""
    return value if math.isfinite(value) else {"t": "float", "v": "nan" if math.isnan(value) else repr(value)}


def _float(item: Any) -> Any:
    """A tagged NaN or infinity back as the float (anything else as it is)."""
    if type(item) is dict and item.get("t") == "float" and type(item.get("v")) is str and item["v"] in NON_FINITE:
        return NON_FINITE[item["v"]]
    return item


def unplain(data: Any) -> Any:
    """What `plain` made, rebuilt from exact built-in types only (JSON gives
    no other); NotPlain for anything else."""
    count = [0]

    def build(item: Any, depth: int) -> Any:
        count[0] += 1
        if count[0] > MAX_ITEMS or depth > MAX_DEPTH + 1:
            raise NotPlain("the observation is too large")
        if item is None or type(item) in (bool, int, float, str):
            return item
        if type(item) is not dict or type(item.get("t")) is not str:
            raise NotPlain(f"not plain data: {type(item).__name__}")
        tag = item["t"]
        if tag == "blank":
            return ____
        if tag == "float":
            if type(_float(item)) is not float:
                raise NotPlain("a float that is not NaN or an infinity by name")
            return _float(item)
        if tag == "int":
            digits = item.get("v")
            if type(digits) is not str or not re.fullmatch(r"-?0x[0-9a-f]+", digits):
                raise NotPlain("an integer that is not in hexadecimal digits")
            return int(digits, 16)
        if tag == "fraction":
            parts = item.get("v")
            parts = [build(part, depth + 1) for part in parts] if type(parts) is list and len(parts) == 2 else None
            if parts is None or not all(type(p) is int for p in parts) or parts[1] <= 0:
                raise NotPlain("a fraction that is not two integers")
            return Fraction(parts[0], parts[1])
        if tag == "opaque":
            return Opaque(str(item.get("type", "?"))[:100])
        if tag == "tensor":
            shape, values = item.get("shape"), item.get("v")
            values = [_float(v) for v in values] if type(values) is list and len(values) <= MAX_TENSOR else values
            if type(shape) is not list or type(values) is not list or len(values) > MAX_TENSOR or \
                    not all(type(n) is int and n >= 0 for n in shape) or \
                    not all(type(v) in (int, float) for v in values) or math.prod(shape) != len(values):
                raise NotPlain("a tensor that is not shape and numbers")
            return torch.tensor(values, dtype=torch.float64).reshape(shape)
        values = item.get("v")
        if type(values) is not list:
            raise NotPlain(f"a {tag} without its items")
        if tag == "dict":
            if not all(type(pair) is list and len(pair) == 2 for pair in values):
                raise NotPlain("a dict that is not pairs")
            try:
                return {build(k, depth + 1): build(v, depth + 1) for k, v in values}
            except TypeError as error:
                raise NotPlain(f"a dict key that cannot be one: {error}") from None
        made = [build(v, depth + 1) for v in values]
        kinds = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}
        if tag not in kinds:
            raise NotPlain(f"unknown tag {tag!r}")
        try:
            return kinds[tag](made)
        except TypeError as error:
            raise NotPlain(f"a set of items that cannot be in one: {error}") from None

    return build(data, 0)


def _raised(error: BaseException) -> dict[str, Any]:
    first = str(error).splitlines()[0][:300] if str(error) else ""
    return {"raised": f"{type(error).__name__}: {first}" if first else type(error).__name__,
            "learner": learners_frame(error) is not None, "timed_out": isinstance(error, TimedOut)}


def observe(exercise: Exercise, answer: Any, lesson: Mapping[str, Any]) -> dict[str, Any]:
    """What the grader needs of `answer` (run where the answer lives, under
    the exercise checks' time limit): a prediction or a letter as plain
    data; for code, the judge's words and what its probe measures."""
    if exercise.kind in ("predict", "choose"):
        return {"kind": "value", "value": plain(answer)}
    try:
        right, text = in_sandbox(lambda: exercise.judge(answer, lesson))    # type: ignore[operator]
    except NotAnswered:
        return {"kind": "code", "blank": True}
    except WrongForm as error:          # not a function where one goes: wrong, as the session says
        return {"kind": "code", "judge": [False, str(error)]}
    except BaseException as error:     # an answer may raise anything, KeyboardInterrupt and SystemExit included
        return {"kind": "code", "judge": _raised(error)}
    found: dict[str, Any] = {"kind": "code", "judge": [right is True, str(text) if isinstance(text, str) else ""]}
    if right is True and exercise.probe is not None:
        try:
            with hermetic():
                found["probe"] = plain(in_sandbox(lambda: exercise.probe(answer, lesson)))   # type: ignore[misc]
        except BaseException as error:
            found["probe"] = _raised(error)
    return found


def reference(exercise: Exercise, lesson: Mapping[str, Any]) -> Any:
    """What the reference solution does on the check's inputs, as the learner's
    observation is turned into data (so both sides compare alike)."""
    if exercise.probe is None:
        raise ValueError(f"exercise {exercise.number} is a {exercise.kind} exercise: it has no probe")
    with hermetic():
        return unplain(plain(exercise.probe(exercise.reference(lesson), lesson)))


def _from_raise(found: Mapping[str, Any], limit: float) -> tuple[str, str]:
    what = str(found.get("raised", "?"))[:300]
    if found.get("learner") is not True:
        return "error", f"the check itself failed ({what}) where the answer ran."
    if found.get("timed_out") is True:
        return "wrong", f"the function did not return within {limit:g} s."
    return "wrong", f"running the answer raised {what}."


def judged(exercise: Exercise, observation: Any, lesson: Mapping[str, Any],
           expected: Any = None) -> tuple[str, str]:
    """(status, text) from an observation alone: status right, wrong, blank,
    flagged (data `observe` cannot have made) or error (the checker's own
    failure). `expected` is `reference(exercise, lesson)` for a write or fix
    exercise (computed once per exercise by the caller). Nothing here runs
    the learner's code: the observation holds none."""
    from .sandbox import TIME_LIMIT

    if type(observation) is not dict or observation.get("kind") not in ("value", "code"):
        return "flagged", "the observation is not what the grader's probe writes."
    try:
        if observation["kind"] == "value":
            if exercise.kind not in ("predict", "choose"):
                return "flagged", "the observation is of a value, and this exercise asks for code."
            answer = unplain(observation.get("value"))
            try:
                with hermetic():
                    right, text = exercise.verdict(answer, lesson)
            except NotAnswered:
                return "blank", "not answered"
            return ("right" if right else "wrong"), text
        if exercise.kind not in ("write", "fix"):
            return "flagged", "the observation is of code, and this exercise asks for a value."
        if observation.get("blank") is True:
            return "blank", "not answered"
        judge = observation.get("judge")
        if type(judge) is dict:
            return _from_raise(judge, TIME_LIMIT)
        if type(judge) is not list or len(judge) != 2 or type(judge[0]) is not bool or type(judge[1]) is not str:
            return "flagged", "the observation's judge part is not what the grader's probe writes."
        if not judge[0]:
            return "wrong", judge[1]
        probe = observation.get("probe")
        if type(probe) is dict and "raised" in probe:
            return _from_raise(probe, TIME_LIMIT)
        found = difference(unplain(probe), expected)
        return ("right", judge[1]) if found is None else ("wrong", described(found))
    except NotPlain as error:
        return "flagged", f"the observation is not plain data ({error})."
    except Exception as error:      # the checker's own code failed on this answer
        first = str(error).splitlines()[0][:300] if str(error) else ""
        return "error", f"the check itself failed ({type(error).__name__}: {first})."
