"""The text form of a drawing's `Plan`: one line per node, then one per
edge; what `print(drawing)` shows, nbval compares and a screen reader reads.
Floor: the text form, beside `dot.py` under `draw.py`; imports `plan.py`."""

import textwrap

from .plan import CUT_MARK, Face, Marks, Plan

HIGHLIGHT_MARK = "[highlighted]"
# No line of the text form is longer: a node's line goes on, indented by CONTINUED, on the next.
LINE_LIMIT = 120
CONTINUED = "    "


def to_text(plan: Plan) -> str:
    """The structure as text: one line per node (marks after it, a note after
    "#"), then one per edge, then the notices."""
    lines = [f"{plan.counts} (an arrow goes from an input to the node that used it)"]
    for node, face in zip(plan.nodes, plan.faces, strict=True):
        marks = plan.marks.get(node.id)
        lines += _bounded([node.id, *_rest(face), *(_marked(marks) if marks is not None else [])])
    lines += [f"{e.src} -> {e.dst} [input {e.slot}" + (f", output {e.output_nr}]" if e.output_nr else "]")
              for _, _, e, _ in plan.wires]
    lines += [notice.text for notice in plan.notices]
    # a longer line (a notice) is broken between words
    return "\n".join(line if len(line) <= LINE_LIMIT else "\n".join(
        textwrap.wrap(line, LINE_LIMIT, subsequent_indent=CONTINUED, break_on_hyphens=False)) for line in lines)


def _rest(face: Face) -> list[str]:
    return [f"{face.kind}:", face.label + (f", {face.detail}" if face.detail else ""),
            *(f"| {s.name}: {s.text}" for s in face.saved)]


def _marked(marks: Marks) -> list[str]:
    return ([HIGHLIGHT_MARK] if marks.lit else []) + ([CUT_MARK] if marks.cut else []) + \
        ([f"# {marks.note}"] if marks.note is not None else [])


def _bounded(parts: list[str]) -> list[str]:
    """A node's parts joined into lines of at most LINE_LIMIT characters,
    continued lines indented; a part too long for a line is split."""
    lines = [""]
    for part in parts:
        room = LINE_LIMIT - len(lines[-1]) - 1
        if lines[-1] and len(part) <= room:
            lines[-1] += " " + part
            continue
        if lines[-1]:
            lines.append(CONTINUED)
        width = LINE_LIMIT - len(lines[-1])
        pieces = [part[i:i + width] for i in range(0, len(part), width)] or [""]
        lines[-1] += pieces[0]
        lines += [CONTINUED + piece for piece in pieces[1:]]
    return lines
