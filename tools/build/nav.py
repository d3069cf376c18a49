"""Write what each notebook's contents decide: the navigation cells at top
and bottom (previous | contents | next) with the notebook's time under the
top one (tools/build/pacing.py), the set-up cell, the index's contents and
its environment check's words, and README's list of the notebooks
(tests/test_notebooks.py fails when any is stale)."""

import textwrap

import nbformat

from helpers.project import REPOSITORY, colab_url, git_source
from helpers.torch_version import RELEASE_TAG, TORCH_NEEDED, pinned_torch, release_cells
from tools.build.pacing import INSTALL, pace, read_after, spoken, time_line
from tools.notebooks import INDEX, NOTEBOOKS, ROOT, notebook_paths

NAV = "<!--NAVIGATION-->"
TOC = "<!--TOC-->"
ENVIRONMENT = "<!--ENVIRONMENT-->"   # the index's words over its environment check, written here
# README's list of the notebooks, between these marks: one line per notebook, from its
# metadata (collection.tour, and whether it is optional), written here, never by hand.
README = ROOT / "README.md"
LIST, END = "<!--NOTEBOOKS-->", "<!--/NOTEBOOKS-->"


# The set-up cell's metadata: its code hidden in JupyterLab and Notebook 7, a form in Colab, so a
# learner sees its first line, the title; tagged so the site leaves it out (tools/build/site.py).
# Its one line names the learner's torch, so nbval does not compare it (tests/structure.py's tags).
KERNEL_ONLY = "kernel-only"
INSTALL_TAGS = [KERNEL_ONLY, "nbval-ignore-output", "varies-with-torch"]


def install_source(repository=REPOSITORY):
    """The set-up cell: where `helpers` does not import (Colab, a notebook
    downloaded alone) it installs the collection from GitHub without its
    dependencies; then helpers/standalone.py adds what the runtime lacks and
    prints one line. Where the install failed (offline), pip's line and ours
    say so and the last line names no module: IPython's one-line UsageError,
    which stops Run All."""
    found = '__import__("importlib.util").util.find_spec("helpers")'
    return f"""\
# @title Set-up: run first
if not {found}:
    !"{{__import__("sys").executable}}" -m pip install -qqq --no-deps {git_source(repository)} || echo {OFFLINE}
%reload_ext {{"helpers.standalone" if {found} else ""}}"""


OFFLINE = "Could not install the collection: connect this runtime to the internet, then run this cell again."


def title(nb):
    """The text of the notebook's H1 title (its first cell, as tests/structure.py holds)."""
    return nb.cells[0].source.partition("\n")[0].removeprefix("# ").strip()


def nav_text(names, titles, i, colab=False):
    """The navigation cell for notebook number i (with `colab`, the link that
    opens it in Google Colab)."""
    links = []
    if i > 0:
        links.append(f"< [{titles[i - 1]}]({names[i - 1]})")
    links.append(f"[Contents]({INDEX})")
    if i + 1 < len(names):
        links.append(f"[{titles[i + 1]}]({names[i + 1]}) >")
    if colab:
        links.append(f"[Open in Colab]({colab_url(names[i])})")
    return f"{NAV}\n" + " | ".join(links)


def toc_row(number, name, title, p):
    if p.optional:
        return f"{number}. [{title}]({name}): optional{read_after(p)}; {spoken(p.whole)}"
    whole = spoken(p.whole)
    extra = f" ({whole.removeprefix('about ')} with its optional parts)" if whole != spoken(p.core) else ""
    return f"{number}. [{title}]({name}): {spoken(p.core)}{extra}"


def toc_text(names, titles, paces):
    """The index's table of contents, with the time of each notebook and of the core path."""
    rows = [toc_row(k, n, t, p) for k, (n, t, p) in enumerate(zip(names[1:], titles[1:], paces[1:], strict=True), 1)]
    core, whole = sum(p.core for p in paces), sum(p.whole for p in paces)
    lessons = [k for k, p in enumerate(paces[1:], 1) if not p.optional] or [0]
    path = (f"**The core path, {spoken(core)}:** this page and notebooks {lessons[0]} to {lessons[-1]}, "
            "without the parts marked "
            f"*Optional* where they stand (sections, exercises, and the optional notebooks). "
            f"Everything: {spoken(whole)}.")
    return f"{TOC}\n## Contents\n\n{path}\n\n" + "\n".join(rows)


def environment_text():
    """The index's words over its environment check, naming the torch
    requirements.txt pins and the count of cells tagged RELEASE_TAG."""
    pinned, tagged = pinned_torch(), release_cells()
    cells = f"the {tagged} cell{'' if tagged == 1 else 's'} that show{'s' if tagged == 1 else ''}"
    return (f"{ENVIRONMENT}\n## Check your environment\n\n"
            "The drawings need Graphviz's `dot` program, and the interactive lessons need the\n"
            f"JupyterLab widgets extension. The collection was checked against torch {pinned}, the\n"
            "version `requirements.txt` pins: the outputs stored in these notebooks are what it\n"
            f"printed. Any torch from {TORCH_NEEDED} on runs them; on another release, {cells} what one\n"
            f"release does (tagged `{RELEASE_TAG}`; the text beside each names the release) may\n"
            "print something else. This cell checks what the notebooks need, names your torch, and\n"
            "says what to do if something is missing.")


def updated(nb, nav, toc, time, top):
    """Put the navigation cells (the top one `top`, with `time`), the set-up
    cell under the top one, the TOC and the environment words in place."""
    cells = nb.cells
    if len(cells) < 2 or not cells[1].source.startswith(NAV):
        cells.insert(1, nbformat.v4.new_markdown_cell(nav, id="nav-top"))
    if not cells[-1].source.startswith(NAV):
        cells.append(nbformat.v4.new_markdown_cell(nav, id="nav-bottom"))
    cells[1].source = f"{top}\n\n{time}"
    cells[-1].source = nav
    found = [k for k, cell in enumerate(cells) if cell.get("id") == INSTALL]
    install = cells.pop(found[0]) if found else nbformat.v4.new_code_cell("", id=INSTALL)
    install.source = install_source()
    install.metadata["jupyter"] = {**install.metadata.get("jupyter", {}), "source_hidden": True}
    install.metadata["cellView"] = "form"
    tags = install.metadata.get("tags", [])
    install.metadata["tags"] = tags + [t for t in INSTALL_TAGS if t not in tags]
    cells.insert(2, install)                 # right under the top navigation: run first
    for cell in cells:
        if cell.cell_type == "markdown" and cell.source.startswith(TOC):
            cell.source = toc
        elif cell.cell_type == "markdown" and cell.source.startswith(ENVIRONMENT):
            cell.source = environment_text()
    return nb


def rewritten(books):
    """(name, text) of each notebook in `books` (name -> notebook, in
    reading order) whose navigation, time or contents are out of date."""
    names, notebooks = list(books), list(books.values())
    titles, paces = [title(nb) for nb in notebooks], [pace(nb) for nb in notebooks]
    toc, found = toc_text(names, titles, paces), []
    for i, (name, nb) in enumerate(books.items()):
        before = nbformat.writes(nb)
        top = nav_text(names, titles, i, colab=True)
        after = nbformat.writes(updated(nb, nav_text(names, titles, i), toc, time_line(paces[i]), top))
        if after != before:
            found.append((name, after))
    return found


def tour_line(name, nb):
    meta = nb.metadata.get("collection", {})
    if not meta.get("tour"):
        raise ValueError(f"{name} has no metadata collection.tour: the one line README's list of the notebooks "
                         "says about it (make new writes one to replace)")
    after = f", after `{meta['read_after'][:2]}`" if meta.get("read_after") else ""
    optional = f" (optional{after})" if meta.get("optional") else ""
    return textwrap.fill(f"- `{name.removesuffix('.ipynb')}`{optional}: {meta['tour']}", width=90,
                         subsequent_indent="  ", break_on_hyphens=False, break_long_words=False)


def readme_text(books, text):
    """README's `text` with its list of the notebooks written from `books`."""
    if LIST not in text or END not in text:
        raise ValueError(f"README.md needs the marks {LIST} and {END} around its list of the notebooks")
    head, rest = text.split(LIST, 1)
    lines = "\n".join(tour_line(name, nb) for name, nb in books.items())
    return f"{head}{LIST}\n{lines}\n{END}{rest.split(END, 1)[1]}"


def stale(write):
    """Notebooks (and README.md) whose navigation or list of the notebooks
    is out of date; rewritten when `write`."""
    books = {p.name: nbformat.read(p, as_version=4) for p in notebook_paths()}
    found = rewritten(books)
    before = README.read_text(encoding="utf-8")
    after = readme_text(books, before)
    if write:
        for name, text in found:
            (NOTEBOOKS / name).write_text(text + "\n", encoding="utf-8")
        if after != before:
            README.write_text(after, encoding="utf-8")
    return [name for name, _ in found] + ([README.name] if after != before else [])


if __name__ == "__main__":
    for name in stale(write=True):
        print("updated: " + name)
