"""Watching what an answer does with one parameter, in ways the answer
cannot step around: the recorded operations that read it (however they
reached it: a module call, `.forward`, `F.linear`, the weight itself) and
the backward passes that compute its gradient (`backward()` with any
arguments, `torch.autograd.grad`); and the graphs an answer keeps reachable
(`KeptGraphs`, `watched`)."""

import weakref
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from ..saved_memory import SavedTensors


class ParameterWatch(TorchFunctionMode):  # type: ignore[misc]
    """In the `with` block: `uses` counts the graph nodes that take the
    parameter as an input (one per forward pass that read it), `walks` the
    backward passes that computed its gradient. Every torch function's
    result is scanned for new nodes that point at the parameter's
    AccumulateGrad node, which the watch holds, so that every graph made
    meanwhile points at that one node."""

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
        for tensor in result if isinstance(result, (tuple, list)) else (result,):
            if isinstance(tensor, torch.Tensor) and tensor.grad_fn is not None:
                self._scan(tensor.grad_fn)
        return result

    def _scan(self, root: Any) -> None:
        """Count the new nodes behind `root` that use the parameter."""
        queue = [root]
        while queue:
            node = queue.pop()
            if node is None or node in self._seen:
                continue
            self._seen.add(node)
            children = [child for child, _ in node.next_functions]
            self.uses += sum(child is self._leaf for child in children)
            queue += children


class KeptGraphs(TorchFunctionMode):  # type: ignore[misc]  # torch.overrides is untyped
    """Inside it: the most autograd nodes that the tensors made there kept
    reachable at once, whether a backward() was asked to retain its graph,
    and the names of the torch functions called."""

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
        self.peak = max(self.peak, reachable([ref() for ref in self.made]))
        return result


def reachable(tensors: list[Any]) -> int:
    """How many autograd nodes the tensors' grad_fn reach, each counted once."""
    seen, queue = set(), [t.grad_fn for t in tensors if t is not None]
    while queue:
        node = queue.pop()
        if node is not None and node not in seen:
            seen.add(node)
            queue.extend(child for child, _ in node.next_functions)
    return len(seen)


def watched(run: Callable[..., Any], *args: Any) -> tuple[Any, int, KeptGraphs]:
    """Run `run(*args)`; return its result, the most bytes of saved tensors
    that graphs held at once, and the graphs its tensors kept (KeptGraphs)."""
    with SavedTensors() as saved, KeptGraphs() as kept:
        result = run(*args)
    return result, saved.peak_bytes, kept
