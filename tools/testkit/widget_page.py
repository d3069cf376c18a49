"""A registered widget (helpers/lessons/nbNN.py) in a JupyterLab page: a control changed as a learner changes it
(mouse or keyboard), the redraw timed inside the page and read back, what of it is on screen, and where the mouse
wheel over its drawing goes."""

import contextlib
from dataclasses import dataclass

from playwright.sync_api import TimeoutError as UITimeout

from helpers.lessons import of
from helpers.lessons.widget import Change, Shown, Widget
from tools.testkit.browser import NB
from tools.testkit.widget_cells import cell_index

VIEW = ".widget-html-content"            # the panel's HTML: its figure, or the error shown in its place
# What a redrawn panel shows: the figure's caption, the drawing's node texts,
# the error that replaced the drawing (helpers/widgets.py marks it role=alert).
SHOWN = """view => ({
  caption: (view.querySelector('figcaption') || {innerText: ''}).innerText,
  texts: [...view.querySelectorAll('svg g.node text')].map(t => t.textContent),
  error: (view.querySelector('[role=alert]') || {innerText: ''}).innerText})"""

# Armed on a widget's HTML view before a change: the first input event starts the clock in the
# page, the first DOM change of the view stops it (what the learner waits, without the driver's trips).
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
    return page.locator(f"{NB} .jp-CodeCell").nth(index)


def control(cell, position):
    return cell.locator(".widget-hbox").first.locator(":scope > .lm-Widget").nth(position)


def act(page, where, change: Change):
    """A key on a slider's handle, a click on the control (or its option labelled `target`), a dropdown's option."""
    if change.action == "press":
        where.locator(".noUi-handle").first.focus()
        page.keyboard.press(change.target)
    elif change.action == "click":
        options = where.locator("button, label:not(.widget-label)", has_text=change.target)
        (options if change.target else where.locator("input")).first.click()
    else:
        where.locator("select").select_option(label=change.target)


def change_and_wait(page, view, change, timeout=15.0):
    """Call `change()`; (the HTML `view` once it differs, ms from the input event to that, timed in the page)."""
    view.evaluate(ARM)
    change()
    try:
        page.wait_for_function("() => window.__redraw.ms !== null", timeout=timeout * 1000, polling=50)
    except UITimeout:
        raise AssertionError(f"the widget did not redraw within {timeout:g} s of the change") from None
    return view.inner_html(), page.evaluate("() => window.__redraw.ms")


def redraw(page, cell, widget: Widget, change: Change, timeout=15.0):
    """(what the widget in `cell` shows once redrawn after `change`, ms from the input event to the redraw)."""
    view = cell.locator(VIEW)
    where = control(cell, widget.position(change.control))
    _, ms = change_and_wait(page, view, lambda: act(page, where, change), timeout)
    shown = view.evaluate(SHOWN)
    return Shown(shown["caption"], tuple(shown["texts"]), shown["error"]), ms


# Each kind of control, operated with the keyboard alone as a learner who cannot use a mouse
# does: the element that takes the focus, the key pressed on it (and the key at the control's
# end), whether it is at its end, and what it holds; the last two read from the control's box.
# A slider's key moves it one step, a dropdown's to the next option, Space ticks a checkbox and
# picks a toggle button or a radio choice other than the one picked.
@dataclass(frozen=True)
class Keys:
    focus: str
    key: str
    back: str = ""
    at_end: str = "c => false"
    holds: str = ""


KEYS = {"Slider": Keys(".noUi-handle", "ArrowRight", "ArrowLeft",          # any kind of slider
                       "c => { const h = c.querySelector('.noUi-handle');"
                       " return h.getAttribute('aria-valuenow') === h.getAttribute('aria-valuemax'); }",
                       "c => c.querySelector('.noUi-handle').getAttribute('aria-valuenow')"),
        "Dropdown": Keys("select", "ArrowDown", "ArrowUp",
                         "c => { const s = c.querySelector('select'); return s.selectedIndex === s.length - 1; }",
                         "c => c.querySelector('select').value"),
        "Checkbox": Keys("input[type=checkbox]", "Space", holds="c => c.querySelector('input').checked"),
        "ToggleButtons": Keys("button:not(.mod-active)", "Space",
                              holds="c => c.querySelector('.mod-active').innerText"),
        "RadioButtons": Keys("input[type=radio]:not(:checked)", "Space",
                             holds="c => [...c.querySelectorAll('input')].findIndex(i => i.checked)")}


def keyboard_problems(page, notebook, folder, timeout=15.0) -> list[str]:
    """One key on each control's focused element, in every widget of `notebook` ('01-dynamic-control-flow'), its
    cells found in `folder`; what did not work: a control out of the Tab order, one the key left as it was (the
    notebook took the key), or whose change drew nothing new."""
    found = []
    for widget in of(notebook):
        cell = widget_cell(page, cell_index(notebook, widget.tag, folder))
        for name, kind in widget.controls.items():
            keys = KEYS.get("Slider" if kind.endswith("Slider") else kind)
            if keys is None:
                raise ValueError(f"{widget.name}'s {name} is a {kind}: say in tools/testkit/widget_page.py's KEYS "
                                 "which key a learner presses on it")
            box = control(cell, widget.position(name))
            before = box.evaluate(keys.holds)
            pressed = keys.back if box.evaluate(keys.at_end) else keys.key
            target = box.locator(keys.focus).first
            order = target.evaluate("e => e.disabled ? -1 : e.tabIndex")
            if order < 0:       # focused here from the script, but a learner reaches it with Tab
                found.append(f"{widget.name}: its {name} ({kind}) is not in the Tab order (tabIndex {order})")

            def change(target=target, pressed=pressed):
                target.focus()
                page.keyboard.press(pressed)

            what = f"{widget.name}: {pressed} on its focused {name} ({kind})"
            try:
                change_and_wait(page, cell.locator(VIEW), change, timeout)
            except AssertionError as error:
                found.append(f"{what}: {error}")
                continue
            if box.evaluate(keys.holds) == before:
                found.append(f"{what} left it at {before!r}")
    return found


# The nearest element around a cell that scrolls up and down: the page's scroller.
SCROLLER = """const SCROLLER = cell => {
  let page = cell.parentElement;
  while (page && !(['auto', 'scroll'].includes(getComputedStyle(page).overflowY)
                   && page.scrollHeight > page.clientHeight)) page = page.parentElement;
  return page;
};
"""
# What of a widget a learner sees, the page scrolled so that its controls sit at the top
# of the notebook's view: each part's visible rectangle is its own clipped by every
# ancestor that clips (overflow other than visible) and by the window.
# - labels: the drawing's node texts whose centre lies in the drawing box's visible part;
# - controls: each control of the row, whole inside its visible part;
# - sideways: the scroll containers around the controls (up to the page) that scroll
#   sideways, so that scrolling them takes the controls off screen.
ON_SCREEN = SCROLLER + """cell => {
  const visible = el => {
    const r = el.getBoundingClientRect();
    let [left, top, right, bottom] = [r.left, r.top, r.right, r.bottom];
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {   // the window clips the body
      const s = getComputedStyle(a);
      if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
      const q = a.getBoundingClientRect();
      [left, top, right, bottom] = [Math.max(left, q.left), Math.max(top, q.top),
                                    Math.min(right, q.right), Math.min(bottom, q.bottom)];
    }
    return {left: Math.max(left, 0), top: Math.max(top, 0),
            right: Math.min(right, innerWidth), bottom: Math.min(bottom, innerHeight)};
  };
  const row = cell.querySelector('.widget-hbox');
  const page = SCROLLER(cell);      // the notebook's (scrollIntoView would also move JupyterLab's unscrollable frame)
  if (page) page.scrollTop += row.getBoundingClientRect().top - page.getBoundingClientRect().top - 8;
  const box = cell.querySelector('.widget-html-content .autograd-drawing');
  const texts = box ? [...box.querySelectorAll('svg g.node text')] : [];
  const seen = box ? visible(box) : null;
  const labels = texts.filter(t => {
    const b = t.getBoundingClientRect(), x = (b.left + b.right) / 2, y = (b.top + b.bottom) / 2;
    return x >= seen.left && x <= seen.right && y >= seen.top && y <= seen.bottom;
  });
  const controls = [...row.querySelectorAll(':scope > .lm-Widget')].map(c => {
    const b = c.getBoundingClientRect(), v = visible(c);
    return {text: c.innerText.trim().slice(0, 40) || c.className.slice(0, 40),
            shown: b.width > 0 && v.left <= b.left + 1 && v.right >= b.right - 1
              && v.top <= b.top + 1 && v.bottom >= b.bottom - 1};
  });
  const sideways = [];
  for (let a = row.parentElement; a && a !== document.documentElement; a = a.parentElement) {
    const x = getComputedStyle(a).overflowX;
    if ((x === 'auto' || x === 'scroll') && a.scrollWidth > a.clientWidth + 1)
      sideways.push(`${a.className.split(' ').slice(-2).join('.')} (${a.scrollWidth} px in ${a.clientWidth})`);
  }
  return {drawing: !!box, labels: texts.length, seen: labels.length, controls, sideways,
          box: seen && [Math.round(seen.left), Math.round(seen.top), Math.round(seen.right), Math.round(seen.bottom)]};
}"""
SEEN_LABELS = 3           # at least this many of the drawing's labels in view (or all, if fewer)


def on_screen_problems(cell, where: str, labels=True) -> list[str]:
    """What a learner misses of the widget in `cell` scrolled to put its controls at the top of the view: a control
    not wholly on screen, a scroll container taking them sideways, and (`labels`) too few of the drawing's labels in
    the visible part of its box."""
    seen = cell.evaluate(ON_SCREEN)
    found = [f"{where}: {seen['seen']} of the drawing's {seen['labels']} labels in the visible part of its box "
             f"{seen['box']} (left, top, right, bottom px)"] \
        if labels and seen["drawing"] and seen["seen"] < min(SEEN_LABELS, seen["labels"]) else []
    found += [f"{where}: control {c['text']!r} not wholly on screen" for c in seen["controls"] if not c["shown"]]
    return found + [f"{where}: {s} scrolls sideways, taking the controls with it" for s in seen["sideways"]]


# Before a wheel turn over the drawing: the page's scroller (the nearest one around the
# cell that scrolls up and down) and the scroll positions of everything from the drawing
# box up to the cell; and a point over the drawing's visible part, if it has room to go.
WHEEL_BEFORE = SCROLLER + """cell => {
  const box = cell.querySelector('.widget-html-content .autograd-drawing');
  if (!box) return null;
  const page = SCROLLER(cell) || document.scrollingElement;
  const inner = [];
  for (let a = box; a && a !== cell; a = a.parentElement) inner.push(a);
  const r = box.getBoundingClientRect(), q = page.getBoundingClientRect();
  const [top, bottom] = [Math.max(r.top, q.top, 0), Math.min(r.bottom, q.bottom, innerHeight)];
  const [left, right] = [Math.max(r.left, q.left, 0), Math.min(r.right, q.right, innerWidth)];
  window.__wheel = {page, inner, tops: inner.map(a => a.scrollTop), pageTop: page.scrollTop};
  const room = page.scrollHeight - page.clientHeight - page.scrollTop;
  return bottom - top > 20 && right - left > 20 ? {x: (left + right) / 2, y: (top + bottom) / 2, room} : null;
}"""
WHEEL_AFTER = """() => ({page: window.__wheel.page.scrollTop - window.__wheel.pageTop,
  inner: window.__wheel.inner.filter((a, i) => a.scrollTop !== window.__wheel.tops[i])
    .map(a => `${a.tagName.toLowerCase()}.${a.className.split(' ').slice(-1)[0]}`)})"""
WHEEL_PX = 120


def wheel_problems(page, cell, where: str) -> list[str] | None:
    """One wheel turn down over the drawing (as `on_screen_problems` left it) must scroll the page, nothing inside
    the widget; None (nothing checked) without a drawing in view or room to scroll down."""
    point = cell.evaluate(WHEEL_BEFORE)
    if point is None or point["room"] < WHEEL_PX:
        return None
    page.mouse.move(point["x"], point["y"])
    page.mouse.wheel(0, WHEEL_PX)
    with contextlib.suppress(UITimeout):
        page.wait_for_function("() => window.__wheel.page.scrollTop !== window.__wheel.pageTop", timeout=2000,
                               polling=50)
    moved = page.evaluate(WHEEL_AFTER)
    found = [] if moved["page"] > 0 else [f"{where}: the mouse wheel over the drawing did not scroll the page"]
    if moved["inner"]:
        found.append(f"{where}: the mouse wheel over the drawing scrolled {', '.join(moved['inner'])} instead")
    return found
