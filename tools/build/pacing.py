"""How long a notebook takes a learner, whole and core (optional parts left
out), from its words, code lines, cells, outputs and exercises, at the rates
below (their sources and calibration: docs/maintaining.md, "A learner's time
and the core path"); `make nav` writes them."""

import re
from dataclasses import dataclass

from tools.notebooks import WIDGET_VIEW

WORDS_PER_MINUTE = 200
CODE_LINE_SECONDS = 8.0
CELL_SECONDS = 5.0
OUTPUT_LINE_SECONDS = 1.5
OUTPUT_LINES_READ = 20
FIGURE_SECONDS = 20.0
ERROR_SECONDS = 10.0
WIDGET_SECONDS = 60.0
EXERCISE_MINUTES = {"predict": 2.25, "choose": 2.25, "fix": 6.0, "write": 7.5}
RUN_SECONDS_A_CELL = 1.0

GENERATED = "<!--"                  # navigation and contents cells, written by tools/build/nav.py
INSTALL = "install"                 # the set-up cell's id (tools/build/nav.py): it runs, nobody needs to read it
FIGURES = ("image/svg+xml", "image/png", "text/html")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1", re.M | re.S)
HEADING = re.compile(r"^### \d+\. (\w+):", re.M)


@dataclass(frozen=True)
class Pace:
    """A notebook's expected minutes: `whole`, and `core` without its optional parts."""

    core: float
    whole: float
    optional: bool = False
    read_after: str | None = None


def code_lines(source):
    """The lines of code a reader reads: not blank, not only a comment."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def prose_seconds(markdown):
    """Reading a markdown cell: its words at WORDS_PER_MINUTE, its code blocks by the line."""
    code = sum(code_lines(block[0]) - 2 for block in FENCE.finditer(markdown))
    return len(FENCE.sub(" ", markdown).split()) * 60 / WORDS_PER_MINUTE + code * CODE_LINE_SECONDS


def output_seconds(cell):
    seconds, lines = 0.0, 0
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output.output_type == "error":
            seconds += ERROR_SECONDS
        elif WIDGET_VIEW in data:
            seconds += WIDGET_SECONDS
        elif any(kind in data for kind in FIGURES) or output.output_type == "display_data":
            seconds += FIGURE_SECONDS
        else:
            lines += len((output.get("text") or data.get("text/plain", "")).splitlines())
    return seconds + min(lines, OUTPUT_LINES_READ) * OUTPUT_LINE_SECONDS


def exercise_kind(markdown):
    """`predict`, `write`, ... for an exercise's question cell, else None."""
    found = HEADING.match(markdown)
    return found[1].lower() if found else None


def marked_optional(markdown):
    """Whether a markdown cell marks itself (and the code cells under it)
    optional: it starts with *Optional, or, for an exercise, a line does."""
    return markdown.startswith("*Optional") or exercise_kind(markdown) is not None and any(
        line.startswith("*Optional") for line in markdown.splitlines())


def parts(nb):
    """(seconds, optional) for each thing a reader does in order: a cell
    read or run, or a whole exercise (its question, slot and check)."""
    section_optional = block_optional = in_exercise = False
    for cell in nb.cells:
        if cell.source.startswith(GENERATED) or cell.get("id") == INSTALL:
            continue
        if cell.cell_type == "markdown":
            if cell.source.startswith("## "):
                section_optional = "Optional" in cell.source.splitlines()[0]
            kind = exercise_kind(cell.source)
            in_exercise, block_optional = kind is not None, marked_optional(cell.source)
            seconds = EXERCISE_MINUTES[kind] * 60 if in_exercise else prose_seconds(cell.source)
        elif in_exercise:
            continue
        else:
            seconds = code_lines(cell.source) * CODE_LINE_SECONDS + CELL_SECONDS + output_seconds(cell)
        yield seconds, section_optional or block_optional


def pace(nb):
    collection = nb.metadata.get("collection", {})
    optional = bool(collection.get("optional", False))
    run = RUN_SECONDS_A_CELL * sum(c.cell_type == "code" for c in nb.cells)
    found = list(parts(nb))
    whole = (sum(s for s, _ in found) + run) / 60
    core = 0.0 if optional else (sum(s for s, o in found if not o) + run) / 60
    return Pace(core, whole, optional, collection.get("read_after"))


def minutes(value):
    """A time as a reader plans it: to the nearest 5 minutes, at least 5."""
    return max(5, 5 * round(value / 5))


def spoken(value):
    """'about 45 minutes', 'about 1 hour 20 minutes'."""
    total = minutes(value)
    hours, rest = divmod(total, 60)
    words = ([f"{hours} hour" + ("s" if hours > 1 else "")] if hours else []) + ([f"{rest} minutes"] if rest else [])
    return "about " + " ".join(words)


def read_after(p):
    """', best read after notebook 05' for an optional notebook that names one, else ''."""
    return f", best read after notebook {p.read_after[:2]}" if p.read_after else ""


def time_line(p):
    if p.optional:
        return f"*Optional, not on the core path{read_after(p)}: {spoken(p.whole)}.*"
    if minutes(p.core) == minutes(p.whole):
        return f"*Time: {spoken(p.whole)}.*"
    return f"*Time: {spoken(p.core)} on the core path; {spoken(p.whole)} with the optional parts.*"

