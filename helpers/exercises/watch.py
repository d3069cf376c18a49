"""Watching what an answer does with one parameter, in ways the answer
cannot step around: the recorded operations that read it (however they
reached it: a module call, `.forward`, `F.linear`, the weight itself) and
the backward passes that compute its gradient (`backward()` with any
arguments, `torch.autograd.grad`)."""

from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode


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
