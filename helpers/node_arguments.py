"""Check draw_graph's arguments that name nodes (`highlight`, `notes`): a name
matching no drawn node, or only a constant `constants=False` leaves out, is an
error saying what there is."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .arguments import wrong
from .saved_values import one_line

if TYPE_CHECKING:
    from .graph import Graph


def check_highlight(highlight: object, graph: Graph, constants: bool = True) -> frozenset[str]:
    """The node ids that `highlight` (labels or ids, one or several) names."""
    wanted = (highlight,) if isinstance(highlight, str) else highlight
    if not isinstance(wanted, (tuple, list, set, frozenset)) or not all(isinstance(w, str) for w in wanted):
        raise wrong(TypeError, "highlight takes a node label such as 'AddBackward0', an id such as 'n2', "
                    f"or a list of them; got {highlight!r}")
    ids: set[str] = set()
    for name in wanted:
        found = {n.id: n.kind for n in graph.nodes if name in (n.id, n.label)}
        if not found:
            raise wrong(ValueError, f"highlight {name!r} names no node of this drawing. {what_exists(graph)}")
        if not constants and set(found.values()) == {"const"}:
            raise wrong(ValueError, _left_out("highlight", name))
        ids |= found.keys()
    return frozenset(ids)


def check_notes(notes: object, graph: Graph, constants: bool = True) -> dict[str, str]:
    """None (no notes) or a dict of node ids ("n1") of this graph to short texts."""
    if notes is None:
        return {}
    if not isinstance(notes, dict):
        raise wrong(TypeError, f"notes must be a dict of node id -> text, like {{'n1': 'step 1'}}; "
                    f"got {type(notes).__name__}")
    kinds = {n.id: n.kind for n in graph.nodes}
    for key, text in notes.items():
        if not (isinstance(key, str) and re.fullmatch(r"n\d+", key) and isinstance(text, str)):
            raise wrong(ValueError, "notes maps node ids like 'n1' (see print(drawing)) to text; "
                        f"got {key!r}: {text!r}")
        if key not in kinds:
            raise wrong(ValueError, f"notes names {key!r}, which is not a node of this drawing. {what_exists(graph)}")
        if not constants and kinds[key] == "const":
            raise wrong(ValueError, _left_out("notes", key))
    return {key: one_line(text) for key, text in notes.items()}


def _left_out(argument: str, name: str) -> str:
    return (f"{argument} names {name!r}, a constant (an input that needs no gradient, drawn as None), but "
            "constants=False leaves constants out of the drawing, so it would appear nowhere: pass "
            f"constants=True to draw it, or name another node")


def what_exists(graph: Graph) -> str:
    """The sentence that says which ids and operations a graph has."""
    labels = sorted({n.label for n in graph.nodes if n.kind == "op"})
    shown = ", ".join(labels[:12]) + (", ..." if len(labels) > 12 else "")
    return f"It has the ids {id_ranges([n.id for n in graph.nodes])} and the operations {shown or '(none)'}"


def id_ranges(ids: Sequence[str], most: int = 6) -> str:
    """Node ids as runs ("n0 to n7, n100 to n103"); past `most` runs, how many
    more."""
    numbers = sorted(int(i[1:]) for i in ids if re.fullmatch(r"n\d+", i))
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    words = [f"n{a}" if a == b else f"n{a}{' and ' if b == a + 1 else ' to '}n{b}" for a, b in runs[:most]]
    rest = sum(b - a + 1 for a, b in runs[most:])
    return ", ".join(words + ([f"and {rest} more"] if rest else [])) or "(none)"
