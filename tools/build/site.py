"""Build the static website from the stored notebooks (nothing executed):
staged copies under build/, then Sphinx with myst-nb and the book theme.
The staging leaves out what only a kernel can use (cells tagged kernel-only,
the checks' stored outputs, the navigation lines), shows each widget's stored
drawing with a line saying where its controls work, and folds each exercise's
hint and solution after its check. Every address names SITE_REPOSITORY
(a fork's workflow sets it), else helpers.project.REPOSITORY.

    python -m tools.build.site      (into build/site)
"""

import os
import re
import shutil
import subprocess
import sys
from html import escape
from pathlib import Path

import nbformat

from helpers.draw import fitted
from helpers.exercises import declared
from helpers.project import REPOSITORY, binder_url, colab_url
from tools.build.nav import KERNEL_ONLY, NAV
from tools.notebooks import CHECK, WIDGET_VIEW, closure, notebook_paths, widget_state

ROOT = Path(__file__).resolve().parents[2]
STAGING = ROOT / "build" / "site-source"
HOME = ('<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=00-index.html">'
        '<title>Computational graphs in PyTorch</title></head>'
        '<body><a href="00-index.html">Computational graphs in PyTorch: start here</a></body></html>\n')


def widget_drawing(nb, model_id):
    """The HTML of a stored widget without its kernel: its HTML widgets (its
    drawing) and, for a multiple choice, its choices listed (a page cannot
    pick one, but the learner can read them)."""
    models = (closure(model_id, widget_state(nb)) or {}).values()
    choices = ["".join(f"<li>{escape(label)}</li>" for label in m["state"].get("_options_labels", []))
               for m in models if m.get("model_name") == "RadioButtonsModel"]
    return "".join([m["state"].get("value", "") for m in models if m.get("model_name") == "HTMLModel"]
                   + [f'<ol class="quiz-choices" type="A">{items}</ol>' for items in choices])


def site_repository():
    return os.environ.get("SITE_REPOSITORY") or REPOSITORY


def retargeted(text, repository):
    """`text` with the addresses helpers.project gives for REPOSITORY (the
    repository, a notebook in Colab or on Binder) naming `repository`."""
    for prefix in ("github.com/", "colab.research.google.com/github/", "mybinder.org/v2/gh/"):
        text = re.sub(rf"\b{re.escape(prefix + REPOSITORY)}(?=[/?#)\s\"'\]]|$)", prefix + repository, text)
    return text


def staged_output(nb, output, name, repository):
    data = output.get("data", {})
    if WIDGET_VIEW in data:
        html = (widget_drawing(nb, data[WIDGET_VIEW]["model_id"])     # and under it, where its controls work
                + f'<p class="kernel-note"><em>The stored drawing: to move its controls, open the notebook '
                  f'<a href="{binder_url(name, repository)}">on Binder</a> or '
                  f'<a href="{colab_url(name, repository)}">in Colab</a>.</em></p>')
        plain = data.get("text/plain", "")
        return nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": plain})
    if "image/svg+xml" in data:
        svg = data["image/svg+xml"]
        # in a box that scrolls rather than shrink the text below the legibility budget
        html = f'<div class="graph">{fitted(svg)}</div>'
        output["data"] = {"text/html": html, "text/plain": data.get("text/plain", "")}
    return output


def staged(path, names, repository):
    nb = nbformat.read(path, as_version=4)
    exercises = iter(() if path.name.startswith("00") else declared(path.name[:2]))
    cells = []
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if KERNEL_ONLY in tags:
            continue
        if cell.cell_type == "code":
            cell.outputs = [] if CHECK in tags else [staged_output(nb, o, path.name, repository) for o in cell.outputs]
        elif cell.source.startswith(NAV):
            cell.source = "\n".join(line for line in cell.source.split("\n\n")[1:] if line.strip())
            if not cell.source:
                continue
        elif cell.cell_type == "markdown":
            cell.source = retargeted(cell.source, repository)
        cells.append(cell)
        if CHECK in tags:           # exercise N's check is the N-th cell so tagged: its hint and solution, folded
            exercise = next(exercises)
            cells.append(nbformat.v4.new_markdown_cell(
                f"<details><summary>Hint for exercise {exercise.number}</summary>\n\n{escape(exercise.hint)}\n\n"
                f"</details>\n<details><summary>A solution to exercise {exercise.number}</summary>\n\n"
                f"<pre>{escape(exercise.solution.strip())}</pre>\n\n</details>"))
    if path.name.startswith("00"):
        toc = "\n".join(n.removesuffix(".ipynb") for n in names[1:])
        cells.append(nbformat.v4.new_markdown_cell(f"```{{toctree}}\n:hidden:\n:maxdepth: 1\n\n{toc}\n```"))
    nb.cells = cells
    nb.metadata.pop("widgets", None)
    return nb


def build(out, source=STAGING):
    """Stage every notebook in `source` (emptied first) and run Sphinx; return the output folder."""
    repository, source = site_repository(), Path(source)
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    paths = notebook_paths()
    names = [p.name for p in paths]
    for path in paths:
        nbformat.write(staged(path, names, repository), source / path.name)
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", str(ROOT / "site"), str(source),
                    str(out)], check=True, env={**os.environ, "SITE_REPOSITORY": repository})
    (Path(out) / "index.html").write_text(HOME)
    for path in paths:          # the download button gives the notebook itself, not the staged copy
        shutil.copyfile(path, Path(out) / "_sources" / path.name)
    return out


if __name__ == "__main__":
    out = build(ROOT / "build" / "site")
    print(f"site written to {out}: open {out / '00-index.html'}")
