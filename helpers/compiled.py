"""What `torch.compile` makes of a lesson function, observed: the FX graphs
dynamo captures and which each call runs, the guards that failed, graph
breaks, and AOTAutograd's forward and backward graphs. Only the `eager` and
`aot_eager` backends (no C++ compiler). Each capture starts from
`torch._dynamo.reset()`, so its counts are exact."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import functorch.compile as aot  # type: ignore[import-untyped]  # functorch has no py.typed
import torch
import torch._dynamo
import torch.fx
from torch.utils._pytree import tree_leaves, tree_map_only

from .arguments import learner_facing, wrong
from .fx import operations


@dataclass(frozen=True)
class Call:
    """One call of a compiled function: the graphs it ran (from 1; none when
    eager), whether it compiled one, and the guards whose failure made it compile
    (dynamo reports them only when it compiles again)."""

    ran: tuple[int, ...]
    compiled: bool
    failed: tuple[str, ...] = ()


@dataclass
class Captured:
    """The graphs dynamo captured, in order, and what each call did."""

    graphs: list[torch.fx.GraphModule] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)

    @property
    def recompiles(self) -> int:
        """Graphs compiled after the first call's."""
        return sum(call.compiled for call in self.calls[1:])

    def operations(self) -> list[list[str]]:
        return [operations(graph) for graph in self.graphs]


@learner_facing
def compile_calls(function: Callable[..., Any], calls: Sequence[Sequence[Any]],
                  dynamic: bool | None = None) -> Captured:
    """Compile `function` after `torch._dynamo.reset()` and call it with each
    tuple of arguments in `calls`; `dynamic` as torch.compile takes it."""
    if isinstance(calls, (str, bytes)) or not all(isinstance(c, (tuple, list)) for c in calls):
        raise wrong(TypeError, "calls is a list of argument tuples, one per call, such as [(x, True), (x, False)]")
    captured, ran, failed = Captured(), [], []

    def backend(graph: torch.fx.GraphModule, _example_inputs: object) -> Callable[..., Any]:
        """Keep each graph, and note which graph each call runs."""
        number = len(captured.graphs) + 1
        captured.graphs.append(graph)

        def run(*args: Any) -> Any:
            ran.append(number)
            return graph.forward(*args)

        return run

    def guard_failed(failure: Any) -> None:
        """Keep the guard's own test: "flag == True" from "0/0: flag == True  # if flag: ..."."""
        first = (str(getattr(failure, "reason", "")).splitlines() or [""])[0]
        failed.append(first.split(": ", 1)[-1].split("#", 1)[0].strip())

    torch._dynamo.reset()
    compiled = torch._dynamo.optimize(backend, guard_fail_fn=guard_failed, dynamic=dynamic)(function)
    for args in calls:
        graphs, runs, failures = len(captured.graphs), len(ran), len(failed)
        compiled(*args)
        captured.calls.append(Call(tuple(ran[runs:]), len(captured.graphs) > graphs, tuple(failed[failures:])))
    return captured


@dataclass(frozen=True)
class Breaks:
    """What `torch._dynamo.explain` found: each graph's operations, the number
    of breaks and their reasons."""

    graphs: list[list[str]]
    count: int
    reasons: list[str]


@learner_facing
def graph_breaks(function: Callable[..., Any], *args: Any) -> Breaks:
    """`torch._dynamo.explain` on `function` with `args`."""
    found = torch._dynamo.explain(function)(*args)
    return Breaks([operations(graph) for graph in found.graphs], found.graph_break_count,
                  [str(b.reason).splitlines()[0] for b in found.break_reasons])


@dataclass(frozen=True)
class Split:
    """AOTAutograd's forward and backward graphs, and how many graphs were
    handed over before backward first ran. The forward graph returns the output,
    then what it saves for backward."""

    forward: torch.fx.GraphModule
    backward: torch.fx.GraphModule
    before_backward: int          # graphs handed to the compilers before backward ran

    def saved_count(self) -> int:
        """How many values the forward graph saves for the backward graph."""
        node = next(n for n in self.forward.graph.nodes if n.op == "output")
        results = node.args[0]
        return len(results) - 1 if isinstance(results, (tuple, list)) else 0


@learner_facing
def aot_split(function: Callable[..., Any], *args: Any, recompute: bool = False) -> Split:
    """The forward and backward graphs AOTAutograd makes of `function` (a
    function of tensors or an `nn.Module`) for `args` (tensors, or dicts, lists
    and tuples of them), backward run once with ones; `recompute`: min-cut
    rematerialisation. The tensors are traced as detached copies and gradients
    taken with `torch.autograd.grad`: no `.grad` of the learner's is written."""
    if type(function).__name__ == "OptimizedModule" or hasattr(function, "_torchdynamo_orig_callable"):
        raise wrong(TypeError, "aot_split compiles what it is given, so give it what torch.compile was given: "
                    "aot_split(f, x) for compiled = torch.compile(f), aot_split(model._orig_mod, x) for a "
                    "compiled model")
    kept: list[torch.fx.GraphModule] = []

    def keep(graph: torch.fx.GraphModule, _example_inputs: object) -> Callable[..., Any]:
        kept.append(graph)
        boxed: Callable[..., Any] = aot.make_boxed_func(graph.forward)
        return boxed

    partition = aot.min_cut_rematerialization_partition if recompute else aot.default_partition
    copies = tree_map_only(torch.Tensor, lambda t: t.detach().requires_grad_(t.requires_grad), args)  # in dicts too
    wants = [a for a in tree_leaves(copies) if isinstance(a, torch.Tensor) and a.requires_grad]
    if isinstance(function, torch.nn.Module):
        wants += [p for p in function.parameters() if p.requires_grad]
        compiled = aot.aot_module(function, fw_compiler=keep, bw_compiler=keep, partition_fn=partition)
    else:
        compiled = aot.aot_function(function, fw_compiler=keep, bw_compiler=keep, partition_fn=partition)
    outputs = _traced(compiled, copies)
    if not wants or not outputs:
        raise wrong(ValueError, "aot_split needs an output computed from an input that requires grad, "
                    "such as x = torch.randn(3, requires_grad=True)")
    before = len(kept)
    torch.autograd.grad(outputs, wants, [torch.ones_like(o) for o in outputs], allow_unused=True)
    return Split(kept[0], kept[1], before)


def _traced(compiled: Callable[..., Any], args: tuple[Any, ...]) -> list[torch.Tensor]:
    """Run the AOT-compiled function; its outputs that have a graph."""
    try:
        result = compiled(*args)
    except AssertionError as error:          # fake tensors met a tensor that was not an argument
        if "FakeTensor" not in str(error):
            raise
        raise wrong(TypeError, "aot_split traces a function of its arguments only; this one uses a tensor "
                    "it was not given (a module's parameters or buffers, read inside a lambda). Pass the module "
                    "itself, aot_split(model, x), or its tensors as an argument: aot_split(lambda state, x: "
                    "torch.func.functional_call(model, state, (x,)), {**dict(model.named_parameters()), "
                    "**dict(model.named_buffers())}, x)") from None
    leaves = tree_leaves(result)
    return [t for t in leaves if isinstance(t, torch.Tensor) and t.grad_fn is not None]
