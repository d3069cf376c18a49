"""A registered widget (helpers/lessons/nbNN.py) in a JupyterLab page: its
cell found by position (from its tag, `widget_cells.cell_index`), a change
made to one of its controls as a learner makes it, the redraw timed inside
the page, and what the redrawn widget shows read back (`Shown`). Used by
the browser tests and the bench."""

from helpers.lessons.widget import Change, Shown, Widget
from tools.testkit.browser import NB

VIEW = ".widget-html-content"            # the panel's HTML: its figure, or the error shown in its place
# What a redrawn panel shows: the figure's caption, the drawing's node texts,
# the error that replaced the drawing (helpers/widgets.py marks it role=alert).
SHOWN = """view => ({
  caption: (view.querySelector('figcaption') || {innerText: ''}).innerText,
  texts: [...view.querySelectorAll('svg g.node text')].map(t => t.textContent),
  error: (view.querySelector('[role=alert]') || {innerText: ''}).innerText})"""

# Armed on a widget's HTML view before a change: the first input event
# (pointer, key, change) starts the clock in the page, and the first DOM
# mutation that changes the view stops it. Both are read with
# performance.now(), so the figure is what the learner waits, without the
# test driver's own round trips.
ARM = """view => {
  const state = {start: null, ms: null};
  const types = ["pointerdown", "keydown", "input", "change"];
  const mark = () => { if (state.start === null) state.start = performance.now(); };
  types.forEach(t => document.addEventListener(t, mark, {capture: true}));
  const before = view.innerHTML;
  const observer = new MutationObserver(() => {
    if (state.start !== null && state.ms === null && view.innerHTML !== before) {
      state.ms = performance.now() - state.start;
      observer.disconnect();
      types.forEach(t => document.removeEventListener(t, mark, {capture: true}));
    }
  });
  observer.observe(view, {childList: true, subtree: true, characterData: true});
  window.__redraw = state;
}"""


def widget_cell(page, index):
    """The code cell at `index` among the active notebook's code cells."""
    return page.locator(f"{NB} .jp-CodeCell").nth(index)


def control(cell, position):
    """The control at `position` (0 first) in a panel's row of controls."""
    return cell.locator(".widget-hbox").first.locator(":scope > .lm-Widget").nth(position)


def act(page, where, change: Change):
    """Make `change` to the control `where` as a learner would: a key on its
    slider's handle, a click on it (or on its option labelled `target`), a
    dropdown option picked by its label."""
    if change.action == "press":
        where.locator(".noUi-handle").first.focus()
        page.keyboard.press(change.target)
    elif change.action == "click":
        options = where.locator("button, label:not(.widget-label)", has_text=change.target)
        (options if change.target else where.locator("input")).first.click()
    elif change.action == "pick":
        where.locator("select").select_option(label=change.target)
    else:
        raise ValueError(f"a change's action is press, click or pick; got {change.action!r}")


def change_and_wait(page, view, change, timeout=15.0):
    """Apply `change()`, then wait until the widget's HTML `view` differs;
    return (new HTML, milliseconds from the input event to the DOM change,
    timed inside the page)."""
    view.evaluate(ARM)
    change()
    try:
        page.wait_for_function("() => window.__redraw.ms !== null", timeout=timeout * 1000, polling=50)
    except Exception as error:
        if type(error).__name__ != "TimeoutError":
            raise
        raise AssertionError(f"the widget did not redraw within {timeout:g} s of the change") from None
    return view.inner_html(), page.evaluate("() => window.__redraw.ms")


def redraw(page, cell, widget: Widget, change: Change, timeout=15.0):
    """Make `change` to the widget in `cell`, wait for the redraw; return
    (what the widget shows now, ms from the input event to the redraw)."""
    view = cell.locator(VIEW)
    where = control(cell, widget.position(change.control))
    _, ms = change_and_wait(page, view, lambda: act(page, where, change), timeout)
    shown = view.evaluate(SHOWN)
    return Shown(shown["caption"], tuple(shown["texts"]), shown["error"]), ms
