"""Every widget of the notebooks changed several times in JupyterLab, in
headless Chromium, each change timed inside the page: from the input event
to the DOM change that brings the new drawing (`widget_page.ARM`). The
widgets and their changes are the registry's (`Widget.bench`). The page's
websocket traffic is logged too, which splits one change into

  before send       input event -> the widget's update message leaves the page
  to the kernel     -> the kernel's "busy" status (the server relays it; the
                    kernel's messages carry its clock's time, the same
                    machine's clock as the page's time origin)
  kernel            -> the kernel's message with the new HTML (the Python
                    callback: the model run, the walk, the layout)
  back to the page  -> that message arrives in the page
  DOM update        -> the new drawing in the DOM

`make bench` prints the table (`in_page_rows`); run this file alone for the
table without the rest of the bench."""

import re
import statistics
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from helpers.lessons import of, widgets
from helpers.lessons.widget import CHANGES
from tools.testkit.browser import CHROMIUM, CHROMIUM_ARGS, run_all, start_lab, stop
from tools.testkit.widget_cells import cell_index
from tools.testkit.widget_page import redraw, widget_cell

ROOT = Path(__file__).resolve().parents[2]
SETTLE_MS = 1000          # after Run All, before the first change
PARTS = ("before send", "to the kernel", "kernel", "back to the page", "DOM update")
NOTEBOOKS = tuple(dict.fromkeys(widget.notebook for widget in widgets()))

# Logs each websocket message's time and first characters (its header), once
# window.__wsOn is set; JupyterLab's kernel connection is a WebSocket.
LOG_WEBSOCKETS = """(() => {
  const Native = window.WebSocket;
  window.__ws = [];
  window.__wsOn = false;
  const decoder = new TextDecoder();
  const note = (dir, data) => {
    if (!window.__wsOn) return;
    const t = performance.now();
    const bytes = typeof data === "string" ? null : ArrayBuffer.isView(data) ? data : new Uint8Array(data);
    const text = bytes === null ? data : decoder.decode(bytes);
    window.__ws.push({dir, t, head: text.slice(0, 1500)});
  };
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); this.addEventListener("message", e => note("in", e.data)); }
    send(data) { note("out", data); return super.send(data); }
  };
})();"""


def _kernel_time(message):
    found = re.search(r'"date":\s*"([^"]+)"', message["head"])
    return datetime.fromisoformat(found.group(1).replace("Z", "+00:00")).timestamp() * 1000 if found else None


def breakdown(log, start, total, origin):
    """One change's parts in ms (see the module docstring), from the
    websocket log, the in-page start time and total, and the page's time
    origin (epoch ms: the kernel's dates are on the same machine's clock);
    None when the log does not show them all."""
    out = [m for m in log if m["dir"] == "out" and m["t"] >= start and '"comm_msg"' in m["head"]]
    if not out:
        return None
    sent = out[0]["t"]
    came = [m for m in log if m["dir"] == "in" and sent <= m["t"] <= start + total]
    busy = next((m for m in came if '"execution_state":"busy"' in m["head"].replace(" ", "")), None)
    html = [m for m in came if '"comm_msg"' in m["head"]]
    if busy is None or not html or None in (_kernel_time(busy), _kernel_time(html[-1])):
        return None
    began, ended = _kernel_time(busy) - origin, _kernel_time(html[-1]) - origin
    return {"before send": sent - start, "to the kernel": began - sent, "kernel": ended - began,
            "back to the page": html[-1]["t"] - ended, "DOM update": start + total - html[-1]["t"]}


def measure(browser, base, token, notebook):
    """[(widget, [ms per change], [breakdown per change])] for one notebook."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.add_init_script(LOG_WEBSOCKETS)
    try:
        run_all(page, base, token, f"notebooks/{notebook}.ipynb")
        page.wait_for_timeout(SETTLE_MS)        # a learner reads before touching a widget
        origin = page.evaluate("() => performance.timeOrigin")
        results = []
        for widget in of(notebook):
            cell = widget_cell(page, cell_index(notebook, widget.tag))
            for run, changes in widget.bench.items():
                times, parts = [], []
                for change in changes:
                    page.evaluate("() => { window.__ws = []; window.__wsOn = true; }")
                    _, ms = redraw(page, cell, widget, change)
                    start = page.evaluate("() => window.__redraw.start")
                    log = page.evaluate("() => { window.__wsOn = false; return window.__ws; }")
                    times.append(ms)
                    parts.append(breakdown(log, start, ms, origin))
                    page.wait_for_timeout(150)          # let the echo of the change settle
                name = f"{widget.name}: {run}"
                results.append((name, times, parts))
                print(f"{notebook} {name}: " + ", ".join(f"{t:.0f}" for t in times) + " ms", file=sys.stderr,
                      flush=True)
        return results
    finally:
        page.close()


def in_page_rows(notebooks=NOTEBOOKS):
    """The bench table: per widget, the first change and the median and
    slowest of CHANGES, and the breakdown; a notebook whose Run All or
    changes failed gets a line saying so, the others their rows."""
    if not Path(CHROMIUM).exists():
        return ["(in-page redraw times need Debian's chromium: sudo apt-get install chromium)"]
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        proc, base, token = start_lab(Path(tmp), ROOT / "notebooks")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                results, failed = [], []
                for notebook in notebooks:
                    try:
                        results += [(notebook, *r) for r in measure(browser, base, token, notebook)]
                    except Exception as error:          # one notebook's failure leaves the others' figures
                        failed.append(f"{notebook}: not measured ({type(error).__name__}: {str(error)[:200]})")
                browser.close()
        finally:
            stop(proc)
    return (table(results) if results else []) + [""] * bool(failed) + failed


def table(results):
    """Per widget: the first change, the median and slowest of its changes,
    and the median of each part of a change (where the log shows them all);
    then the slowest widget's first change, part by part."""
    rows = [f"| widget (in JupyterLab, Chromium) | first change | median of {CHANGES} | slowest | "
            + " | ".join(f"{part} (median)" for part in PARTS) + " |",
            "|---|---:|---:|---:|" + "---:|" * len(PARTS)]
    for notebook, name, times, parts in results:
        rows.append(f"| {notebook[:2]} {name} | {times[0]:.0f} ms | {statistics.median(times):.0f} ms "
                    f"| {max(times):.0f} ms | " + " | ".join(median_parts(parts)) + " |")
    notebook, name, times, parts = max(results, key=lambda r: statistics.median(r[2]))
    rows += ["", f"Slowest widget by median, {notebook[:2]} {name}, its first change in ms:", "",
             "| | " + " | ".join(PARTS) + " | total |", "|---" + "|---:" * (len(PARTS) + 1) + "|"]
    if parts[0]:
        rows.append("| first change | " + " | ".join(f"{parts[0][k]:.1f}" for k in PARTS) + f" | {times[0]:.1f} |")
    return rows


def median_parts(parts):
    """The median of each part, in ms, over the changes whose log shows them ("-" where none does)."""
    known = [p for p in parts if p]
    return [f"{statistics.median(p[k] for p in known):.1f}" if known else "-" for k in PARTS]


if __name__ == "__main__":
    print("\n".join(in_page_rows(sys.argv[1:] or NOTEBOOKS)))
