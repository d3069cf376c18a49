"""Every widget's benchmark changes (`Widget.bench`) made in JupyterLab in
headless Chromium, each timed inside the page from the input event to the
redraw (`widget_page.ARM`). Run alone, with notebook names or none, for the
table without the rest of the bench."""

import statistics
import sys
import tempfile
from pathlib import Path

from helpers.lessons import of, widgets
from helpers.lessons.widget import CHANGES
from tools.testkit.browser import CHROMIUM, CHROMIUM_ARGS, run_all, start_lab, stop
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import redraw, widget_cell

ROOT = Path(__file__).resolve().parents[2]
SETTLE_MS = 1000          # after Run All, before the first change
NOTEBOOKS = tuple(dict.fromkeys(widget.notebook for widget in widgets()))


def measure(browser, base, token, notebook):
    """[(widget: run, [ms per change])] for one notebook."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        run_all(page, base, token, f"notebooks/{notebook}.ipynb")
        page.wait_for_timeout(SETTLE_MS)        # a learner reads before touching a widget
        results = []
        for widget in of(notebook):
            cell = widget_cell(page, cell_index(notebook, widget.tag))
            for run, changes in widget.bench.items():
                times = []
                for change in changes:
                    times.append(redraw(page, cell, widget, change)[1])
                    page.wait_for_timeout(150)          # let the echo of the change settle
                results.append((f"{widget.name}: {run}", times))
                print(f"{notebook} {widget.name}: {run}: " + ", ".join(f"{t:.0f}" for t in times) + " ms",
                      file=sys.stderr, flush=True)
        return results
    finally:
        page.close()


def in_page_rows(notebooks=NOTEBOOKS):
    """Per widget, the first change and the median and slowest of CHANGES; a
    notebook whose Run All or changes failed gets a line saying so."""
    if not Path(CHROMIUM).exists():
        return ["(in-page redraw times need Debian's chromium: sudo apt-get install chromium)"]
    from playwright.sync_api import sync_playwright

    rows = [f"| widget (in JupyterLab, Chromium) | first change | median of {CHANGES} | slowest |",
            "|---|---:|---:|---:|"]
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        proc, base, token = start_lab(Path(tmp), ROOT / "notebooks")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                for notebook in notebooks:
                    try:
                        rows += [f"| {notebook[:2]} {name} | {times[0]:.0f} ms | {statistics.median(times):.0f} ms "
                                 f"| {max(times):.0f} ms |" for name, times in measure(browser, base, token, notebook)]
                    except Exception as error:          # one notebook's failure leaves the others' figures
                        failed.append(f"{notebook}: not measured ({type(error).__name__}: {str(error)[:200]})")
                browser.close()
        finally:
            stop(proc)
    return rows + [""] * bool(failed) + failed


if __name__ == "__main__":
    print("\n".join(in_page_rows(sys.argv[1:] or NOTEBOOKS)))
