"""Shared fixtures: the note's examples, built fresh for every test; the
--regen-golden flag that rewrites the golden drawings in tests/golden/; and
--layers, which picks what `make test`, `make test-integration` and `make quick` run."""

import os
from pathlib import Path

import pytest
import torch
from figures import Figures, figure_lines
from one_execution import add_items, keep_nbvals_messages

from helpers.torch_version import RELEASE_TAG

ROOT = Path(__file__).resolve().parent.parent
UNCOMPARED = "uncompared"
# The layers `make test` leaves to `make test-integration` (docs/testing.md, "Tests, in
# layers"): what needs a browser, a class of Unix users, another environment, or minutes of
# processes run to their limits. CI (.ci/run) and the workflow run both; `make test` runs every
# other file, in under 4 minutes from a fresh clone.
INTEGRATION = {
    "browser": ("test_browser.py", "test_lab.py", "test_notebook7.py", "test_site.py",
                "test_saved_widgets.py"),
    "set-up elsewhere": ("test_standalone.py", "test_pins.py"),
    "re-execution": ("test_reexecution.py", "test_teacher_copies.py"),
    "limits and depth": ("test_check_limits.py", "test_deep_free.py"),
}
# What `make quick` also leaves out: the tests that execute whole notebooks (nbval over
# notebooks/ among them) or draw real models. The rest of `make test` (lint, types, unit
# tests, structure and exercises) runs in 90 s.
EXECUTING = ("test_nbval_checks.py", "test_real_models.py")
LAYERS = ("all", "test", "integration", "quick")


def pytest_addoption(parser):
    parser.addoption("--regen-golden", action="store_true",
                     help="rewrite tests/golden/ from the current helpers instead of comparing")
    parser.addoption("--other-torch", action="store_true",
                     help="another torch than the pinned one runs the suite (tools/testkit/other_torch.py): "
                          "cells tagged torch-release-behaviour are run, not compared, and listed")
    parser.addoption("--also", action="append", default=[], metavar="NODEID",
                     help="a test of another layer to run with this one (make test-torch: the CUDA build's own)")
    parser.addoption("--notebook", metavar="NN",
                     help="only what concerns notebook NN (make check NB=NN): its nbval cells, and the tests "
                          "whose id names it (nbNN, its file name, its widgets' tags)")
    parser.addoption("--layers", choices=LAYERS, default="all",
                     help="test: what make test runs; integration: what it leaves out (make test-integration); "
                          "quick: make test without the notebook executions (make quick); all (default): everything")


INTEGRATION_FILES = frozenset(name for names in INTEGRATION.values() for name in names)


def selected(path, layers):
    if layers == "all":
        return True
    if path.suffix == ".ipynb":                   # nbval: make test runs it, make quick does not
        return layers == "test"
    integration = path.name in INTEGRATION_FILES
    if layers == "integration":
        return integration
    return not integration and not (layers == "quick" and path.name in EXECUTING)


def pytest_ignore_collect(collection_path, config):
    """Test files the layers leave out are not even imported."""
    if collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        also = {node.split("::")[0].rsplit("/", 1)[-1] for node in config.getoption("--also")}
        return None if selected(collection_path, config.getoption("--layers")) or collection_path.name in also \
            else True
    return None


# The longest files first, so that under `--dist loadfile --no-loadscope-reorder` (the Makefile) the two workers
# take them at the start and end together, instead of one waiting on the other's last long file.
FIRST = ("test_browser.py", "test_pins.py", "test_check_limits.py", "test_exercises.py", "test_deep_free.py",
         "test_exercise_checks.py", "test_lab.py", "test_real_models.py", "test_standalone.py",
         "test_grade_hostile.py", "test_hub.py", "test_reexecution.py",
         "test_saved_widgets.py", "test_teacher_copies.py")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """What --layers and --notebook select, FIRST first, in the same order on every worker (xdist requires it); after
    all selection, each notebook's nbval items end with its byte-for-byte item, except on another torch."""
    layers, also = config.getoption("--layers"), tuple(config.getoption("--also"))
    kept = {item: selected(item.path, layers) or item.nodeid.startswith(also) for item in items}   # () matches none
    if config.getoption("--notebook"):
        names = about(config.getoption("--notebook"))
        kept = {item: keep and any(name in item.nodeid for name in names) for item, keep in kept.items()}
    if not all(kept.values()):
        config.hook.pytest_deselected(items=[item for item in items if not kept[item]])
        items[:] = [item for item in items if kept[item]]
    if config.getoption("--other-torch"):
        for item in items:
            if RELEASE_TAG in getattr(getattr(item, "cell", None), "metadata", {}).get("tags", ()):
                item.options["check"] = False            # nbval still fails it if it raises
                item.user_properties.append((UNCOMPARED, f"{item.path.name} cell {item.cell_num}"))
    rank = {name: index for index, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))
    yield
    if not config.getoption("--other-torch"):
        add_items(items)


keep_nbvals_messages()


def about(number):
    """What names notebook `number` ('02' or '2') in a test's id: its file name, `nbNN` and its widgets' tags."""
    from helpers import lessons
    from tools.notebooks import notebook_paths

    number = f"{int(number):02d}"
    paths = [p for p in notebook_paths() if p.name.startswith(f"{number}-")]
    if not paths:
        raise pytest.UsageError(f"--notebook {number}: no notebooks/{number}-*.ipynb")
    tags = [w.tag + "]" for w in lessons.of(paths[0].stem)]          # "widget-x]", not "widget-x-other]"
    return (paths[0].name, f"nb{number}-", f"nb{number}]", *tags)


@pytest.fixture
def golden(request):
    """compare(name, text): text must equal tests/golden/<name> (--regen-golden rewrites it)."""
    folder = ROOT / "tests" / "golden"

    def compare(name, text):
        path = folder / name
        if request.config.getoption("--regen-golden"):
            folder.mkdir(exist_ok=True)
            path.write_text(text)
        assert path.exists(), f"no golden file {path.name}: run pytest --regen-golden once"
        assert text == path.read_text(), f"{path.name} changed: check the drawing, then pytest --regen-golden"

    return compare


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for a test file; skipped without it, except under CI=true."""
    from tools.testkit.browser import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(
            "browser tests need Debian's chromium: sudo apt-get install chromium (make test installs it when it can)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def timings(request):
    return Figures(request.node)


def pytest_terminal_summary(terminalreporter, config):
    reports = [r for kind in ("passed", "failed") for r in terminalreporter.stats.get(kind, []) if r.when == "call"]
    figure_lines(terminalreporter)
    uncompared = sorted(line for r in reports for name, line in r.user_properties if name == UNCOMPARED)
    if uncompared:
        terminalreporter.section(f"run, not compared: tagged {RELEASE_TAG} (what torch {torch.__version__} does)")
        for line in uncompared:
            terminalreporter.write_line(line)


@pytest.fixture
def note_example():
    """The note's 'Inspecting the Graph' example: x = 2, y = x ** 2, z = y * 3."""
    x = torch.tensor(2.0, requires_grad=True)
    y = x**2
    z = y * 3
    return x, y, z
