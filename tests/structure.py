"""The notebook skeleton (docs/maintaining.md) as checks; each returns a list of problems."""

import json
import re
from pathlib import Path

from markdown_it import MarkdownIt

from helpers.torch_version import RELEASE_TAG
from tools.build.nav import INSTALL, KERNEL_ONLY, NAV, install_source
from tools.build.run_notebooks import output_text, raises
from tools.runtime import kernel

LINK = re.compile(r"\]\(([^)#\s:]+\.ipynb)[^)]*\)")      # a link to another notebook: no scheme
# a file of the repository the prose names, `helpers/lessons/nb01.py`: it must be there
REPOSITORY_FILE = re.compile(r"`((?:helpers|tools|tests|jupyter|docs)/[\w/.-]+\.(?:py|md|json|cfg|sh))`")
# The longest code line a notebook may hold: what a code cell on the site
# shows without scrolling sideways in a window 1280 pixels wide (14 px
# DejaVu Sans Mono: 684 px, 77.4 characters; tests/test_site.py checks the
# site itself). JupyterLab at 1366 x 768 shows 118.
LINE_LIMIT = 77
MARKDOWN = MarkdownIt("commonmark")
# The tag that gives the reason a cell's output is left out of nbval's comparison
# when it is not a timing: dynamo's guard text, a generated name, which change
# between torch releases. Such a cell prints that text only; the stable facts
# (counts, operation names) go in a compared cell beside it.
VARIES = "varies-with-torch"
RELEASE = RELEASE_TAG   # a cell showing what one torch release does (helpers/torch_version.py counts them)
# Exercises a lesson needs: a core notebook at least CORE_EXERCISES, of two
# kinds or more, one of them code to write or fix; an optional one (metadata
# collection.optional, tools/build/pacing.py) at least OPTIONAL_EXERCISES. The count takes
# every exercise of the notebook, those whose question is marked optional (off the core
# path, for pacing) included: the rule is about what a notebook offers, pacing about the path.
CORE_EXERCISES = 4
OPTIONAL_EXERCISES = 1


def optional(nb):
    return bool(nb.metadata.get("collection", {}).get("optional"))


def exercise_rule(optional_notebook, kinds):
    """What is wrong with a lesson's exercises of these kinds ('' if nothing)."""
    if optional_notebook:
        return "" if len(kinds) >= OPTIONAL_EXERCISES else \
            f"an optional notebook needs at least {OPTIONAL_EXERCISES} exercise; has {len(kinds)}"
    if len(kinds) < CORE_EXERCISES or len(set(kinds)) < 2 or not {"write", "fix"} & set(kinds):
        return (f"a core notebook needs at least {CORE_EXERCISES} exercises, of at least 2 kinds, one of them write "
                f"or fix (an optional one, metadata collection.optional, needs {OPTIONAL_EXERCISES}); has "
                f"{len(kinds)}: {', '.join(kinds) or 'none'}")
    return ""


def problems(nb, folder, lesson=True):
    found = _common(nb, folder)
    return found + _lesson(nb) if lesson else found


def _common(nb, folder):
    cells, found = nb.cells, []
    if not cells or cells[0].cell_type != "markdown" or not cells[0].source.startswith("# "):
        return ["the first cell must be a markdown cell starting with '# Title'"]
    if len(cells) < 3 or not cells[1].source.startswith(NAV) or not cells[-1].source.startswith(NAV):
        found.append("navigation cells must be the second and the last cell (run tools/build/nav.py)")
    code = [c for c in cells if c.cell_type == "code"]
    # run once each, in order, from a fresh kernel: the n-th code cell is run n; one without outputs
    # (an answer slot) shows no run number before the learner runs it
    runs = [position if cell.outputs else None for position, cell in enumerate(code, start=1)]
    if [cell.execution_count for cell in code] != runs:
        found.append("code cells must be executed once, in order, from a fresh kernel (make notebooks), "
                     "and a cell without outputs stores no run number")
    for cell in code:
        found += _cell_marks(cell)
    for cell in cells:
        if cell.cell_type == "markdown":
            # a bare name of the folder: it works in a learner's copy of the folder too
            found += [f"broken link to {t}" for t in LINK.findall(cell.source)
                      if "/" in t or not (Path(folder) / t).exists()]
            found += [f"the prose names {t}, which is not in the repository"
                      for t in REPOSITORY_FILE.findall(cell.source) if not (Path(folder).parent / t).exists()]
    return found + set_up(cells) + long_lines(cells) + machine_paths(cells) + recorded_kernel(nb)


SET_UP_LINES = 4


def set_up(cells):
    """The set-up cell (tools/build/nav.py): the first code cell, its code hidden in JupyterLab, Notebook 7
    (jupyter.source_hidden) and Colab (cellView form), tagged kernel-only so the site leaves it out."""
    code = [c for c in cells if c.cell_type == "code"]
    if not code or code[0].get("id") != INSTALL:
        return [f"the first code cell must be the set-up cell (id {INSTALL}; run make nav)"]
    cell, found = code[0], []
    lines = cell.source.splitlines()
    if len(lines) > SET_UP_LINES:
        found.append(f"the set-up cell has {len(lines)} lines, over {SET_UP_LINES}")
    if not lines or not re.match(r"#( @title)? [A-Z]", lines[0]):
        found.append("the set-up cell's first line must be a comment that reads as its title")
    if re.search(r"^\s*(class |try:)|subprocess", cell.source, re.M):
        found.append("the set-up cell holds no class, no try and no subprocess: they go in helpers/standalone.py")
    if not cell.metadata.get("jupyter", {}).get("source_hidden") or cell.metadata.get("cellView") != "form":
        found.append("the set-up cell's code must be hidden: metadata jupyter.source_hidden and cellView form")
    if KERNEL_ONLY not in cell.metadata.get("tags", []):
        found.append(f"the set-up cell must be tagged {KERNEL_ONLY}, which the site leaves out")
    return found


def recorded_kernel(nb):
    """What the collection's kernel reports (tools/runtime/kernel.py: Python's major version, not the release that
    ran it): JupyterLab writes a connecting kernel's into the notebook and marks it changed unless equal."""
    return [f"metadata {key} is {nb.metadata.get(key)}, the collection's kernel reports {value} "
            "(execute it with make notebooks)"
            for key, value in kernel.recorded().items() if nb.metadata.get(key) != value]


# a file path of whoever ran the notebook: a virtual environment's or a home folder's
MACHINE_PATH = re.compile(r"(/[\w.+-]+)+/(site-packages|dist-packages|\.venv)/|/(root|home/[\w.-]+)/")


def machine_paths(cells):
    """(tools/build/run_notebooks.py writes tracebacks relative to site-packages/ and the repository.)"""
    return [f"cell {number}: a stored output names a path of the machine that ran it: {found[0][:60]}"
            for number, cell in enumerate(cells, start=1) if cell.cell_type == "code"
            for found in [MACHINE_PATH.search(json.dumps(cell.outputs))] if found]


def long_lines(cells):
    """In code cells and in markdown's code blocks, which the site shows the same way."""
    found = []
    for number, cell in enumerate(cells, start=1):
        if cell.get("id") == INSTALL:       # hidden (source_hidden, a form in Colab), left off the site
            continue
        lines = cell.source.splitlines() if cell.cell_type == "code" else fenced(cell.source)
        found += [f"cell {number}: a code line of {len(line)} characters, over the {LINE_LIMIT} that show "
                  f"without scrolling sideways: {line.strip()[:40]}" for line in lines if len(line) > LINE_LIMIT]
    return found


def fenced(markdown):
    return [line for token in MARKDOWN.parse(markdown) if token.type == "fence" for line in token.content.splitlines()]


def _cell_marks(cell):
    first = cell.source.splitlines()[0] if cell.source else ""
    raised = any(o.output_type == "error" for o in cell.outputs)
    found = []
    if ("pip install" in cell.source or '"pip", "install"' in cell.source) and (
            cell.get("id") != INSTALL or cell.source != install_source()):
        found.append(f"no pip install in cells but the set-up cell tools/build/nav.py writes: {first}")
    tags = cell.metadata.get("tags", [])
    if "NBVAL_" in cell.source:
        found.append(f"test marks belong in cell tags, not in the code the learner reads: {first}")
    if "nbval-skip" in tags:
        found.append(f"skipped cell hides what it does: {first}")
    if raised != raises(cell):
        found.append(f"an error output and the raises-exception tag must go together: {first}")
    if "nbval-ignore-output" in tags and "time.perf_counter()" not in cell.source and VARIES not in tags:
        found.append(f"nbval-ignore-output is only for cells that print measured times, or whose output varies "
                     f"between torch releases (then tagged {VARIES} too): {first}")
    if RELEASE in tags and "nbval-ignore-output" in tags:
        found.append(f"{RELEASE} marks what this torch release does, compared so an upgrade that changes it fails: "
                     f"never with nbval-ignore-output: {first}")
    if VARIES in tags and "nbval-ignore-output" not in tags:
        found.append(f"{VARIES} says why a cell's output is not compared: it goes with nbval-ignore-output: {first}")
    return found


def _lesson(nb):
    found = []
    code = [c.source for c in nb.cells if c.cell_type == "code" and c.get("id") != INSTALL]
    if not code or "from helpers import" not in code[0] or "torch.manual_seed(0)" not in code[0]:
        found.append("the first code cell after the set-up cell must import from helpers and call "
                     "torch.manual_seed(0)")
    return found + _exercises(nb)


def _exercises(nb):
    """Answer slots, each followed by its check; nothing gives an answer away."""
    cells, found = nb.cells, []
    slots = [i for i, c in enumerate(cells) if "answer-slot" in c.metadata.get("tags", [])]
    for number, i in enumerate(slots, start=1):
        check = cells[i + 1] if i + 1 < len(cells) else None
        if "____" not in cells[i].source:
            found.append(f"answer slot {number} must hold the placeholder ____ in the stored notebook")
        if check is None or not re.match(rf"ex\.q{number}\.check\(", check.source):
            found.append(f"answer slot {number} must be followed by its check, ex.q{number}.check(...)")
        elif "answer-check" not in check.metadata.get("tags", []):
            found.append(f"the check of exercise {number} must carry the cell tag answer-check (the teacher's copy "
                         "finds checks by it)")
        elif not output_text(check).startswith("Not answered yet"):
            found.append(f"the stored check of exercise {number} must say 'Not answered yet'")
    code = [c for c in cells if c.cell_type == "code"]
    if any(re.search(r"\.(hint|solution)\(\)", c.source) for c in code):
        found.append("hint() and solution() are the learner's to call: no cell calls them")
    if any("<details>" in c.source for c in cells if c.cell_type == "markdown"):
        found.append("no answers in sight: an exercise gets a slot and a check, not a <details> answer")
    if not code or code[-1].source.strip() != "ex.score()" or not output_text(code[-1]).startswith("Your score"):
        found.append("the last code cell must be ex.score(), showing this session's score")
    return found

