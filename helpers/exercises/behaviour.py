"""What an answer does on a check's inputs, as plain data that compares:
the values it returns, the operations its graphs record, the gradients it
leaves. Each write and fix exercise declares a probe, `probe(answer,
lesson)`, that runs an answer on every input its check uses and returns
this data keyed by case ({"x = 0.5": {"value": ..., "x.grad": ...}}). The
check compares the learner's with the reference solution's once its hints
aimed at particular mistakes have found nothing, so an answer that behaves
differently on any of those inputs is never marked right; tools/testkit/mutants.py
uses the same probe to tell a mutant that changes behaviour from one that
does not."""

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch

from .feedback import shown
from .judges import op_labels

Probe = Callable[[Any, Mapping[str, Any]], dict[str, Any]]
PROBED = "differs from what the exercise asks"       # the words of a difference the probe found
RELATIVE, ABSOLUTE = 1e-5, 1e-6        # how close two numbers must be to count as the same


def data(value: Any) -> Any:
    """A tensor as comparable data: its shape and its numbers (None stays None)."""
    if isinstance(value, torch.Tensor):
        return ("tensor", tuple(value.shape), tuple(value.detach().double().flatten().tolist()))
    return value


def graph(tensor: Any) -> tuple[str, ...]:
    """The operations a result's graph records (output first); () for a
    tensor without a graph or for anything else."""
    if isinstance(tensor, torch.Tensor) and tensor.grad_fn is not None:
        return tuple(op_labels(tensor))
    return ()


def grads(*modules: torch.nn.Module) -> list[Any]:
    """Every parameter's .grad, module by module, as data."""
    return [data(p.grad) for module in modules for p in module.parameters()]


def _close(mine: float, asked: float) -> bool:
    if math.isnan(mine) or math.isnan(asked):
        return math.isnan(mine) and math.isnan(asked)
    return abs(mine - asked) <= ABSOLUTE + RELATIVE * abs(asked)


def difference(mine: Any, asked: Any) -> tuple[tuple[str, ...], Any] | None:
    """The first place where two probes' data differ, as (the keys that
    lead there, the learner's value there), or None when they agree
    (numbers within RELATIVE and ABSOLUTE)."""
    pending: list[tuple[tuple[str, ...], Any, Any]] = [((), mine, asked)]
    while pending:
        where, a, b = pending.pop(0)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            if list(a) != list(b):
                return where, a
            pending += [((*where, str(k)), a[k], b[k]) for k in a]
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            if len(a) != len(b):
                return where, a
            pending += [(where, x, y) for x, y in zip(a, b, strict=True)]
        elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
                and not isinstance(b, bool):
            if not _close(float(a), float(b)):
                return where, a
        elif type(a) is not type(b) or a != b:
            return where, a
    return None


def described(found: tuple[tuple[str, ...], Any]) -> str:
    """Feedback for a difference: where it is, and what the learner's answer gave there."""
    where, mine = found
    case, part = (where[0], " ".join(where[1:])) if len(where) > 1 else (" ".join(where), "")
    place = f"on {case}, your {part or 'result'}" if case else "your result"
    yours = f" (yours: {shown(mine[2] if _is_data(mine) else mine)})"
    return f"{place} {PROBED}{yours}: compare it with what the question says."


def _is_data(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 3 and value[0] == "tensor"
