"""Check the arguments the helpers are given: a wrong one gets a TypeError or
ValueError saying what to pass instead, reported from the learner's own line."""

from __future__ import annotations

import functools
import sys
import sysconfig
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeAlias, TypeVar

import torch
from torch.autograd.graph import Node

from .saved_values import MAX_LABEL, one_line

# Code that is not the learner's (the helpers, Python, installed packages): frames the
# widgets and the exercise checks hide.
MACHINERY = (str(Path(__file__).resolve().parent),
             *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")))

Start: TypeAlias = torch.Tensor | Node
Root: TypeAlias = Start | Sequence[Start]
Params: TypeAlias = Mapping[str, torch.Tensor] | torch.nn.Module


# A value of notebook 07's from-scratch engine: `.inputs`, `.op`, `.data` (from_scratch.py).
ScratchValue: TypeAlias = Any


def is_scratch_value(obj: object) -> bool:
    """`.data` is asked last, never of a tensor (it would run a subclass's `__torch_function__`)."""
    return hasattr(obj, "inputs") and hasattr(obj, "op") and hasattr(obj, "data")


BadArgument = TypeVar("BadArgument", TypeError, ValueError)
Arguments = ParamSpec("Arguments")
Result = TypeVar("Result")
MARK = "bad_argument"

EXAMPLE = "for example: x = torch.tensor(2.0, requires_grad=True); y = x ** 2; draw_graph(y)"
NO_GRAPH = (
    "this tensor has no autograd graph: requires_grad is False. That happens when "
    "it was made under torch.no_grad() or torch.inference_mode(), by .detach(), only "
    "from tensors that do not require grad, or by an operation with no gradient (a "
    "comparison, argmax, a cast to an integer type). Start from an input made with "
    "requires_grad=True"
)


def wrong(error_type: type[BadArgument], message: str) -> BadArgument:
    """A TypeError or ValueError marked as a bad argument (see `learner_facing`)."""
    error = error_type(message)
    setattr(error, MARK, True)
    return error


def learner_facing(function: Callable[Arguments, Result]) -> Callable[Arguments, Result]:
    """Report a bad argument (`wrong`) with its traceback ending here, right
    under the learner's own call."""

    @functools.wraps(function)
    def checked(*args: Arguments.args, **kwargs: Arguments.kwargs) -> Result:
        try:
            return function(*args, **kwargs)
        except (TypeError, ValueError) as error:
            if not getattr(error, MARK, False):
                raise
            raise error.with_traceback(None) from None   # the message says what to pass instead

    return checked


def roots_of(root: object) -> list[Start]:
    """The tensors and `grad_fn` nodes to start walking from, as a list."""
    if isinstance(root, (torch.Tensor, Node)):
        return [_checked(root, "")]
    if isinstance(root, Sequence) and not isinstance(root, (str, bytes)):
        if len(root) == 0:
            raise wrong(ValueError, f"got an empty {type(root).__name__}: pass at least one tensor, {EXAMPLE}")
        kind = type(root).__name__
        checked = [_checked(item, f"item {i} of the {kind}: ") for i, item in enumerate(root)]
        return list({id(item): item for item in checked}.values())      # each once, in order
    raise wrong(TypeError, _wrong_type(root, ""))


def _checked(item: object, where: str) -> Start:
    if isinstance(item, Node):
        return item
    if not isinstance(item, torch.Tensor):
        raise wrong(TypeError, _wrong_type(item, where))
    if not item.requires_grad:
        raise wrong(ValueError, where + no_graph(item))
    return item


def no_graph(tensor: torch.Tensor) -> str:
    """Why this tensor, which does not require grad, has no graph, and what
    to draw instead."""
    if torch._C._functorch.is_batchedtensor(tensor):
        return ("this tensor was made inside torch.func.vmap, where a tensor stands for one sample of a "
                "batch: the graph is recorded on the whole batch underneath, which the function cannot see. "
                "Draw what vmap returns, outside the vmapped function")
    if tensor.is_inference():
        return ("this tensor was made under torch.inference_mode(), which records no graph, and an inference "
                "tensor never requires grad. Compute it outside inference_mode to draw it (torch.no_grad() "
                "where you want no graph yet)")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        return (f"this is an integer tensor ({tensor.dtype}): only floating-point and complex tensors can "
                "require grad, so nothing done to it is recorded. Indices are such tensors (argmax, or the "
                "second result of torch.max(x, 0), sort or topk): draw the values, torch.max(x, 0).values")
    return f"{NO_GRAPH}, {EXAMPLE}"


def _wrong_type(item: object, where: str) -> str:
    wanted = "a tensor that requires grad, its grad_fn, or a list of such tensors"
    if isinstance(item, torch.nn.Module):
        return f"{where}expected {wanted}; got {_module_hint(item)}"
    if item is None:
        hint = ("None. A leaf's .grad_fn is None: a tensor made with requires_grad=True, or a parameter, is a "
                "leaf and has no grad_fn, so pass the tensor itself, or an output computed from it (a function "
                "that forgot to return gives None too)")
    elif isinstance(item, Mapping):
        hint = f"a {type(item).__name__}: pass one of the tensors it holds (output['loss']), not the whole of it"
    elif isinstance(item, (int, float, complex, bool)):
        hint = f"the Python number {item!r}, which has no autograd graph"
    elif isinstance(item, str):
        hint = f"the string {item!r}: pass the tensor itself, not its name"
    else:
        hint = f"a {type(item).__name__}"
    return f"{where}expected {wanted}; got {hint}. {EXAMPLE[0].upper()}{EXAMPLE[1:]}"


def _module_hint(module: torch.nn.Module) -> str:
    inner = uncompiled(module)
    kind = type(inner).__name__ if inner is module else f"{type(inner).__name__} compiled by torch.compile"
    return (f"a module ({kind}). A module is not part of the graph, what it computes is: pass its output, "
            "model(x), not the model, and the module as params to name its parameters: draw_graph(model(x), model)")


def leaf_names(params: object) -> dict[int, str]:
    """Each named tensor's name, keyed by identity."""
    if params is None:
        return {}
    if isinstance(params, torch.nn.Module):
        params = dict(uncompiled(params).named_parameters())
    if not isinstance(params, Mapping):
        raise wrong(TypeError, "params must be a dict of name -> tensor, or an nn.Module whose "
                    f"named_parameters() name the leaves; got a {type(params).__name__}")
    for name, tensor in params.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise wrong(TypeError, f"params must map names (str) to tensors; got {name!r} -> {type(tensor).__name__}")
    if params and not any(tensor.requires_grad for tensor in params.values()):
        raise wrong(ValueError, _names_nothing(params))
    return {id(tensor): one_line(name, MAX_LABEL) for name, tensor in params.items()}


def _names_nothing(params: Mapping[str, torch.Tensor]) -> str:
    return ("params names no tensor that requires grad, so none of them can be a node of the graph "
            f"(got {', '.join(list(params)[:4])}{', ...' if len(params) > 4 else ''}). Pass the leaves "
            "themselves (tensors made with requires_grad=True), the module, or dict(model.named_parameters())")


def uncompiled(module: torch.nn.Module) -> torch.nn.Module:
    """The module a `torch.compile`d model wraps (its parameters named as the
    original names them); any other module as it is."""
    dynamo = sys.modules.get("torch._dynamo.eval_frame")      # imported by anything that compiled a model
    wrapper = getattr(dynamo, "OptimizedModule", None)
    while wrapper is not None and isinstance(module, wrapper):
        module = module._orig_mod
    return module


def check_max_nodes(max_nodes: object) -> int | None:
    """None (no limit) or a whole number of at least 1."""
    if max_nodes is None:
        return None
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int):
        raise wrong(TypeError, f"max_nodes must be a whole number such as 200, or None for no limit; got {max_nodes!r}")
    if max_nodes < 1:
        raise wrong(ValueError, f"max_nodes must be at least 1 (or None for no limit); got {max_nodes}")
    return max_nodes


def check_flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise wrong(TypeError, f"{name} must be True or False; got {value!r}")
    return value


class Default(int):
    """A default number told apart (with `is`) from the same number passed."""


MAX_NODES = Default(300)


def check_walked(kind: str, params: object, max_nodes: object, roll: bool) -> None:
    """A `Graph` or a from-scratch value is drawn whole: refuse, rather than
    ignore, the arguments that would change a walk."""
    given = [name for name, used in (("params", params is not None), ("max_nodes", max_nodes is not MAX_NODES),
                                     ("roll", roll)) if used]
    if given:
        raise wrong(ValueError, f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} not used for "
                    f"{WALKED[kind]}")


WALKED = {
    "Graph": "a Graph, which is drawn whole as trace_graph walked it: pass them to trace_graph "
             "(trace_graph(y, params, max_nodes=50)), or pass the tensor itself to draw_graph "
             "(draw_graph(y, params, max_nodes=50, roll=True))",
    "scratch": "a value of an engine written from scratch, which is drawn whole, its leaves named by their "
               ".label: leave them out (draw_graph(value)), or draw PyTorch's graph of the same computation",
}
