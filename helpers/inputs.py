"""Check what the helpers are given; a wrong input gets an error that says
what to pass instead, before anything deep inside the helpers runs."""

import re
from collections.abc import Mapping, Sequence

import torch

EXAMPLE = "for example: x = torch.tensor(2.0, requires_grad=True); y = x ** 2; draw_graph(y)"
NO_GRAPH = (
    "this tensor has no autograd graph: requires_grad is False. That happens when "
    "it was made under torch.no_grad(), by .detach(), or only from tensors that do "
    "not require grad. Start from an input made with requires_grad=True"
)


def roots_of(root):
    """The tensors and `grad_fn` nodes to start walking from, as a list."""
    if isinstance(root, (torch.Tensor, torch.autograd.graph.Node)):
        return [_checked(root, "")]
    if isinstance(root, Sequence) and not isinstance(root, (str, bytes)):
        if len(root) == 0:
            raise ValueError(f"got an empty {type(root).__name__}: pass at least one tensor, {EXAMPLE}")
        return _unique([_checked(item, f"item {i} of the {type(root).__name__}: ") for i, item in enumerate(root)])
    raise TypeError(_wrong_type(root, ""))


def _checked(item, where):
    if isinstance(item, torch.autograd.graph.Node):
        return item
    if not isinstance(item, torch.Tensor):
        raise TypeError(_wrong_type(item, where))
    if not item.requires_grad:
        raise ValueError(f"{where}{NO_GRAPH}, {EXAMPLE}")
    return item


def _wrong_type(item, where):
    wanted = "a tensor that requires grad, its grad_fn, or a list of such tensors"
    if item is None:
        hint = "None (did the function that made it forget to return?)"
    elif isinstance(item, (int, float, complex, bool)):
        hint = f"the Python number {item!r}, which has no autograd graph"
    elif isinstance(item, str):
        hint = f"the string {item!r}: pass the tensor itself, not its name"
    else:
        hint = f"a {type(item).__name__}"
    return f"{where}expected {wanted}; got {hint}. {EXAMPLE[0].upper()}{EXAMPLE[1:]}"


def _unique(items):
    kept = []
    for item in items:
        if not any(item is seen for seen in kept):
            kept.append(item)
    return kept


def leaf_names(params):
    """Map each named tensor to its name (keyed by identity, for lookup only)."""
    if params is None:
        return {}
    if isinstance(params, torch.nn.Module):
        params = dict(params.named_parameters())
    if not isinstance(params, Mapping):
        raise TypeError(
            "params must be a dict of name -> tensor, or an nn.Module whose "
            f"named_parameters() name the leaves; got a {type(params).__name__}"
        )
    for name, tensor in params.items():
        if not isinstance(name, str) or not isinstance(tensor, torch.Tensor):
            raise TypeError(f"params must map names (str) to tensors; got {name!r} -> {type(tensor).__name__}")
    return {id(tensor): name for name, tensor in params.items()}


def check_notes(notes):
    """None (no notes) or a dict of node ids ("n1") to short texts."""
    if notes is None:
        return {}
    if not isinstance(notes, dict):
        raise TypeError(f"notes must be a dict of node id -> text, like {{'n1': 'step 1'}}; got {type(notes).__name__}")
    for key, text in notes.items():
        if not (isinstance(key, str) and re.fullmatch(r"n\d+", key) and isinstance(text, str)):
            raise ValueError(f"notes maps node ids like 'n1' (see print(drawing)) to text; got {key!r}: {text!r}")
    return notes


def check_max_nodes(max_nodes):
    """None (no limit) or a whole number of at least 1."""
    if max_nodes is None:
        return None
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int):
        raise TypeError(f"max_nodes must be a whole number such as 200, or None for no limit; got {max_nodes!r}")
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be at least 1 (or None for no limit); got {max_nodes}")
    return max_nodes
