"""What an answer does on a check's inputs: as plain data that compares (a probe's result), and
with a parameter (`ParameterWatch`) and the graphs it keeps (`KeptGraphs`)."""

import math
import weakref
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..saved_memory import SavedTensors
from .feedback import shown
from .judges import op_labels

Probe = Callable[[Any, Mapping[str, Any]], dict[str, Any]]
PROBED = "differs from what the exercise asks"       # the words of a difference the probe found
RELATIVE, ABSOLUTE = 1e-5, 1e-6        # how close two numbers must be to count as the same


def data(value: Any) -> Any:
    """A tensor as comparable data: its shape and its numbers."""
    is_tensor = isinstance(value, torch.Tensor)
    return ("tensor", tuple(value.shape), tuple(value.detach().double().flatten().tolist())) if is_tensor else value


def graph(tensor: Any) -> tuple[str, ...]:
    """The operations a result's graph records (output first); () without a graph."""
    return tuple(op_labels(tensor)) if isinstance(tensor, torch.Tensor) and tensor.grad_fn is not None else ()


def grads(*modules: torch.nn.Module) -> list[Any]:
    """Every parameter's .grad, module by module, as data."""
    return [data(p.grad) for module in modules for p in module.parameters()]


def on_leaf(function: Callable[[torch.Tensor], Any], start: Any) -> tuple[Any, Any]:
    """(result, x.grad) of `function` on a fresh leaf x = start; x.grad after backward of the result's sum."""
    x = torch.tensor(start, requires_grad=True)
    result = function(x)
    if isinstance(result, torch.Tensor) and result.grad_fn is not None:
        result.sum().backward()
    return result, x.grad


def difference(mine: Any, asked: Any) -> tuple[tuple[str, ...], Any] | None:
    """The first place where two probes' data differ, as (keys, the learner's value); None if none."""
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
            x, y = float(a), float(b)       # close: within ABSOLUTE + RELATIVE, or both NaN
            if math.isnan(x) != math.isnan(y) or not (math.isnan(x) or abs(x - y) <= ABSOLUTE + RELATIVE * abs(y)):
                return where, a
        elif type(a) is not type(b) or a != b:
            return where, a
    return None


def described(found: tuple[tuple[str, ...], Any]) -> str:
    """Feedback for a difference: where it is, and what the learner's answer gave there."""
    where, mine = found
    case, part = (where[0], " ".join(where[1:])) if len(where) > 1 else (" ".join(where), "")
    place = f"on {case}, your {part or 'result'}" if case else "your result"
    tensor = isinstance(mine, tuple) and len(mine) == 3 and mine[0] == "tensor"     # as `data` gives it
    yours = f" (yours: {shown(mine[2] if tensor else mine)})"
    return f"{place} {PROBED}{yours}: compare it with what the question says."



class ParameterWatch(TorchFunctionMode):  # type: ignore[misc]
    """`uses`: graph nodes that read the parameter; `walks`: backward passes that reached it."""

    def __init__(self, parameter: torch.Tensor) -> None:
        super().__init__()
        self.parameter, self.uses, self.walks = parameter, 0, 0
        self._leaf: Any = None
        self._seen: set[Any] = set()
        self._handle: Any = None

    def __enter__(self) -> "ParameterWatch":
        self._leaf = torch.autograd.graph.get_gradient_edge(self.parameter).node
        self._handle = self.parameter.register_hook(self._walked)
        super().__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        super().__exit__(kind, error, traceback)
        self._handle.remove()
        self._leaf, self._seen = None, set()        # the graphs may go now

    def _walked(self, _grad: torch.Tensor) -> None:
        self.walks += 1

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: tuple[Any, ...] = (),
                           kwargs: Mapping[str, Any] | None = None) -> Any:
        result = func(*args, **(kwargs or {}))
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        for node in _walk([t.grad_fn for t in outputs if isinstance(t, torch.Tensor)], self._seen):
            self.uses += sum(child is self._leaf for child, _ in node.next_functions)
        return result


class KeptGraphs(TorchFunctionMode):  # type: ignore[misc]  # torch.overrides is untyped
    """The most autograd nodes kept reachable at once, whether backward retained its graph, the functions called."""

    def __init__(self) -> None:
        super().__init__()
        self.made: list[weakref.ref[torch.Tensor]] = []
        self.called: set[str] = set()
        self.peak, self.retained = 0, False

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        self.called.add(getattr(func, "__name__", ""))
        if func is torch.Tensor.backward and (kwargs.get("retain_graph") or (len(args) > 2 and args[2])):
            self.retained = True
        result = func(*args, **kwargs)
        if isinstance(result, torch.Tensor) and result.grad_fn is not None:
            self.made.append(weakref.ref(result))
        self.made = [ref for ref in self.made if ref() is not None]
        roots = [tensor.grad_fn for ref in self.made if (tensor := ref()) is not None]
        self.peak = max(self.peak, sum(1 for _ in _walk(roots, set())))
        return result


def _walk(roots: list[Any], seen: set[Any]) -> Iterator[Any]:
    """Each autograd node the roots reach that is not in `seen` yet (it is added), once."""
    queue = list(roots)
    while queue:
        node = queue.pop()
        if node is not None and node not in seen:
            seen.add(node)
            yield node
            queue += [child for child, _ in node.next_functions]


def watched(run: Callable[..., Any], *args: Any) -> tuple[Any, int, KeptGraphs]:
    """`run(*args)`'s result, the peak bytes of saved tensors, and its KeptGraphs."""
    with SavedTensors() as saved, KeptGraphs() as kept:
        result = run(*args)
    return result, saved.peak_bytes, kept
