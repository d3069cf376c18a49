"""Notebook 09's compile widget: which graph dynamo runs for a call of
`forward(x, use_extra_layer)` after earlier calls, and why, beside the eager
autograd graph. Each Figure is kept per lesson function (held weakly) and
control values: a combination compiles once, later visits come from memory."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence

import torch

from .arguments import wrong
from .compiled import Captured, compile_calls
from .draw import Figure, draw_graph
from .fx import fx_graph, joined, operations
from .graph import trace_graph

# The flags the compiled function was called with before the checkbox's call.
EARLIER = {"no call": (), "True": (True,), "False": (False,), "True, False": (True, False)}

Forward = Callable[[torch.Tensor, bool], torch.Tensor]

# Figures made so far, per lesson function, by (use_extra_layer, earlier).
_SHOWN: weakref.WeakKeyDictionary[Forward, dict[tuple[bool, str], Figure]] = weakref.WeakKeyDictionary()


def compile_view(forward: Forward, use_extra_layer: bool, earlier: str) -> Figure:
    """Compile `forward` anew, call it with the `earlier` flags, then with
    `use_extra_layer`: what decided the last call, how many graphs there are, and
    the graph that ran beside the eager one."""
    if earlier not in EARLIER:
        raise wrong(ValueError, f"earlier is one of {list(EARLIER)}; got {earlier!r}")
    key = (bool(use_extra_layer), earlier)
    shown = _SHOWN.setdefault(forward, {})
    if key not in shown:
        shown[key] = _compiled_figure(forward, (*EARLIER[earlier], key[0]), earlier)
    return shown[key]


def _compiled_figure(forward: Forward, flags: Sequence[bool], earlier: str) -> Figure:
    captured = compile_calls(forward, [(torch.tensor(3.0, requires_grad=True), flag) for flag in flags])
    if not captured.calls[-1].ran:
        raise wrong(ValueError, "this call ran no compiled graph: dynamo captures tensor operations, and the "
                    "function has none left to capture (give it one, such as y = x * 2)")
    number = captured.calls[-1].ran[-1]
    leaf = torch.tensor(3.0, requires_grad=True)
    eager = trace_graph(forward(leaf, flags[-1]), {"x": leaf})
    ran = fx_graph(captured.graphs[number - 1])
    graph = joined([(f"compiled graph {number}", ran), ("eager autograd graph", eager)])
    count = len(captured.graphs)
    caption = (f"use_extra_layer={flags[-1]} after {earlier}: {_decided(captured, flags)}; "
               f"{count} graph{'s' * (count != 1)} compiled; graph {number} ran: "
               f"{', '.join(operations(captured.graphs[number - 1]))}")
    return Figure(caption, draw_graph(graph))


def _decided(captured: Captured, flags: Sequence[bool]) -> str:
    call = captured.calls[-1]
    number = call.ran[-1]
    if call.failed and call.compiled:
        return f"guard {call.failed[0]} failed, so dynamo compiled graph {number}"
    if call.failed:
        return f"guard {call.failed[0]} failed, but dynamo compiled no new graph for this call; graph {number} ran"
    if call.compiled:
        return f"no graph yet, so dynamo captured graph {number}"
    made = next(flag for flag, c in zip(flags, captured.calls, strict=True) if c.compiled and c.ran[-1] == number)
    return f"the guards of graph {number} (made for use_extra_layer={made}) held: no recompile"
