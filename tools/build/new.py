"""`make new NB=10-name [TITLE="..."] [READ_AFTER=NN-name]`: a new optional
notebook that passes `make test` as made (one drawing, one widget, one
exercise to write the lesson over), its helpers/lessons/nbNN.py and its
tests/answers/nbNN_answers.py. It refuses a name taken or malformed.

    python -m tools.build.new NN-name [--title "..."] [--read-after NN-name]   (the three files only)
"""

import argparse
import re
import sys

import nbformat
from nbformat.v4 import new_code_cell as code
from nbformat.v4 import new_markdown_cell as md

from tools.build.nav import KERNEL_ONLY
from tools.notebooks import CHECK, NOTEBOOKS, ROOT, SLOT, notebook_paths
from tools.runtime import kernel

NAME = re.compile(r"(\d\d)-([a-z][a-z0-9]*(?:-[a-z0-9]+)*)")


def problem(name, folder=NOTEBOOKS, root=ROOT):
    """What is wrong with `name` for a new notebook ('' when nothing is)."""
    found = NAME.fullmatch(name)
    if not found:
        return (f"{name!r} is not a notebook name: two digits, a hyphen, then lower-case words joined by hyphens, "
                "as in 10-hooks-and-the-graph")
    number = found.group(1)
    if number == "00":
        return "00 is the index; a lesson takes the next free number"
    taken = [p.name for p in notebook_paths(folder) if p.name.startswith(f"{number}-")]
    if taken:
        return f"notebook {number} exists already ({taken[0]}); take the next free number"
    for path in (root / "helpers" / "lessons" / f"nb{number}.py",
                 root / "tests" / "answers" / f"nb{number}_answers.py"):
        if path.exists():
            return f"{path.relative_to(root)} exists already; remove it or take another number"
    return ""


def notebook(number, slug, title, read_after=None):
    """The skeleton: title, goals, imports, one drawing, one widget, one
    exercise, summary, score (make nav adds the navigation and set-up cells)."""
    collection = {"optional": True, "tour": f"{title.lower()} (a new notebook: replace this line).",
                  **({"read_after": read_after} if read_after else {})}
    # the kernel's metadata: what executing it records (tools/runtime/kernel.py)
    return nbformat.v4.new_notebook(metadata={**kernel.recorded(), "collection": collection}, cells=[
        md(f"# {title}\n\nWhat this notebook shows, in two or three sentences: replace this paragraph with the "
           "lesson's own.", id="title"),
        md("## Learning goals\n\n"
           "- Draw the graph a loop records and count its nodes.\n"
           "- Move a slider and watch the graph follow the loop.\n"
           "- Predict a graph's size from the code that builds it."),
        code("from functools import partial\n\n"
             "import ipywidgets as widgets\n"
             "import torch\n\n"
             "from helpers import draw_graph, panel\n"
             "from helpers.exercises import ____, exercises\n"
             f"from helpers.lessons.nb{number} import repeat_view\n\n"
             'torch.manual_seed(0)  # the same "random" numbers on every run\n'
             f'ex = exercises("{number}", globals())  # checks your answers at the end'),
        md("## 1. A loop, drawn\n\nThe graph records one multiplication per round of the loop:"),
        code("def repeat(x, n):\n"
             "    y = x\n"
             "    for _ in range(n):\n"
             "        y = y * 2\n"
             "    return y\n\n\n"
             "x = torch.tensor(1.5, requires_grad=True)\n"
             'draw_graph(repeat(x, 3), {"x": x})'),
        md("Move the slider: each round adds one `MulBackward0`, and the leaf keeps its one "
           "`AccumulateGrad` node.", metadata={"tags": [KERNEL_ONLY]}),
        code("panel(\n"
             "    partial(repeat_view, repeat),\n"
             '    n=widgets.IntSlider(value=3, min=1, max=4, description="n"),\n'
             ")", metadata={"tags": [f"widget-{slug}-loop"]}),
        md("## Exercises\n\nAnswer each exercise in its cell, then run the check under it; "
           "[the index](00-index.ipynb) says how the checks, hints and score work."),
        md("### 1. Predict: nodes of seven rounds\n\n"
           "How many autograd nodes does `repeat(x, 7)` record, the leaf's `AccumulateGrad` included?"),
        code("answer_1 = ____   # a whole number", metadata={"tags": [SLOT]}),
        code("ex.q1.check(answer_1)", metadata={"tags": [CHECK]}),
        md("## Summary\n\n- A loop's graph has one node per operation it ran, and one `AccumulateGrad` per "
           "leaf."),
        md("## Your score\n\nRun this after the exercises: it counts the latest check of each one.",
           metadata={"tags": [KERNEL_ONLY]}),
        code("ex.score()", metadata={"tags": [KERNEL_ONLY]}),
    ])


def lesson_module(number, slug, title):
    return f'''"""Notebook {number} ({title}): its widgets' views, WIDGETS and EXERCISES."""

from collections.abc import Callable

import torch

from ..draw import Figure, draw_graph
from ..exercises.exercise import Lesson, predict
from ..exercises.judges import value
from ..graph import autograd_nodes
from .widget import Check, Widget, press


def repeat_view(forward: Callable[[torch.Tensor, int], torch.Tensor], n: int) -> Figure:
    """The graph of `forward(x, n)`, a loop of `n` rounds, with its node count."""
    x = torch.tensor(1.5, requires_grad=True)
    y = forward(x, n)
    return Figure(f"n = {{n}}: {{len(autograd_nodes(y))}} autograd nodes", draw_graph(y, {{"x": x}}))


WIDGETS = (
    Widget("{slug}-loop", {{"n": "IntSlider"}},
           (Check(press("n"), "n = 4: 5 autograd nodes", {{"MulBackward0": 4}}),)),
)


def _nodes_of_seven_rounds(lesson: Lesson) -> int:
    return len(autograd_nodes(lesson["repeat"](torch.tensor(1.5, requires_grad=True), 7)))


EXERCISES = (
    predict(1, "nodes of seven rounds", "a whole number",
            value(_nodes_of_seven_rounds, "seven rounds record seven MulBackward0 nodes, and the leaf x has one "
                  "AccumulateGrad node: 7 + 1.",
                  hints=((7, "the leaf x has a node too: its AccumulateGrad, where backward ends."),),
                  otherwise="count one MulBackward0 per round, then one node for the leaf."),
            hint="One round records one node; the leaf adds one more.",
            answer="8", needs=("repeat",)),
)
'''


def answers_module(number):
    return f'''"""Notebook {number}'s exercises as learners may answer them (see tests/answers/__init__.py)."""

WRONG = {{
    1: (("answer_1 = 7", "AccumulateGrad"), ("answer_1 = 9", "one MulBackward0 per round")),
}}
'''


def make(name, title=None, root=ROOT, read_after=None):
    """Write the three files of notebook `name` ('10-hooks'); return their paths.
    `read_after` names the notebook it follows ('05-interview-relevance')."""
    why = problem(name, root / "notebooks", root)
    if why:
        raise ValueError(why)
    read_after = read_after.removesuffix(".ipynb") if read_after else None
    if read_after and not (root / "notebooks" / f"{read_after}.ipynb").exists():
        raise ValueError(f"READ_AFTER={read_after}: no notebooks/{read_after}.ipynb; name a notebook as its file "
                         "is named, as in 05-interview-relevance")
    number, slug = NAME.fullmatch(name).groups()
    title = title or slug.replace("-", " ").capitalize()
    paths = (root / "notebooks" / f"{name}.ipynb", root / "helpers" / "lessons" / f"nb{number}.py",
             root / "tests" / "answers" / f"nb{number}_answers.py")
    nbformat.write(notebook(number, slug, title, read_after), paths[0])
    paths[1].write_text(lesson_module(number, slug, title), encoding="utf-8")
    paths[2].write_text(answers_module(number), encoding="utf-8")
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.build.new", description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="NN-words, e.g. 10-hooks-and-the-graph")
    parser.add_argument("--title", help="the notebook's H1 title (default: from its name)")
    parser.add_argument("--read-after", help="the notebook it is read after, as 05-interview-relevance")
    args = parser.parse_args(argv)
    try:
        paths = make(args.name, args.title or None, read_after=args.read_after or None)
    except ValueError as error:
        print(f"make new: {error}", file=sys.stderr)
        return 2
    for path in paths:
        print(f"made {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
