"""The legibility budget in a browser page: every text of every Graphviz drawing (inline <svg> or <img>) as rendered,
in CSS px, against OP_PX for operation names and TEXT_PX for any text; and every state of a registered widget's
controls, reached one by one as a learner reaches them."""

from dataclasses import dataclass

from helpers.lessons.widget import Change, Widget, click, pick, press
from tools.testkit.widget_page import act, change_and_wait, control

OP_PX, TEXT_PX = 11.0, 8.0
OP_POINTS = 11.0          # an operation name's size in the DOT (helpers/dot.py)
SLACK = 0.1               # px: min-widths are rounded to whole pixels
# Per drawing shown (width > 0): the smallest operation name and the
# smallest text, in CSS px, and the first operation names to name it.
# Inline: font-size × the text's scale to the screen (getScreenCTM); an
# <img>: font-size × rendered width / viewBox width.
MEASURE = """(root, opPoints) => {
  const drawn = [];
  const sizes = (texts, scaleOf, sizeOf) => texts.map(t => ({
    size: sizeOf(t), px: sizeOf(t) * scaleOf(t), text: t.textContent}));
  const add = (kind, box, found) => {
    const ops = found.filter(t => t.size >= opPoints - 0.01);
    drawn.push({kind, width: Math.round(box.width),
      op: ops.length ? Math.min(...ops.map(t => t.px)) : null,
      text: Math.min(...found.map(t => t.px)),
      names: (ops.length ? ops : found).slice(0, 2).map(t => t.text).join(', ')});
  };
  for (const svg of root.querySelectorAll('svg')) {
    const box = svg.getBoundingClientRect();
    if (!svg.querySelector('g.node') || box.width === 0) continue;
    add('svg', box, sizes([...svg.querySelectorAll('text')],
      t => { const m = t.getScreenCTM(); return Math.hypot(m.a, m.b); },
      t => parseFloat(getComputedStyle(t).fontSize)));
  }
  for (const img of root.querySelectorAll('img')) {
    const source = decodeURIComponent(img.src), box = img.getBoundingClientRect();
    if (!source.includes('class="node"') || box.width === 0) continue;
    const svg = new DOMParser().parseFromString(source.slice(source.indexOf('<svg')), 'image/svg+xml').documentElement;
    const scale = box.width / svg.viewBox.baseVal.width;
    add('img', box, sizes([...svg.querySelectorAll('text')], () => scale,
      t => parseFloat(t.getAttribute('font-size') || '14')));
  }
  return drawn;
}"""


@dataclass(frozen=True)
class Measured:
    where: str
    names: str
    op: float | None          # the smallest operation name, px
    text: float               # the smallest text, px

    def problems(self) -> list[str]:
        found = [f"operation names {self.op:.1f} px (< {OP_PX:g})"] if self.op is not None and \
            self.op < OP_PX - SLACK else []
        found += [f"text {self.text:.1f} px (< {TEXT_PX:g})"] if self.text < TEXT_PX - SLACK else []
        return [f"{self.where}, drawing of {self.names}: {', '.join(found)}"] if found else []


def measure(locator, where: str) -> list[Measured]:
    return [Measured(f"{where} ({d['kind']} {d['width']} px wide)", d["names"], d["op"], d["text"])
            for d in locator.evaluate(MEASURE, OP_POINTS)]


def control_states(cell, widget: Widget, name: str) -> list[Change]:
    """The changes that show each state of control `name` once (options and slider ends read from the page); a
    checkbox's two clicks bring it back where it was."""
    kind, where = widget.controls[name], control(cell, widget.position(name))
    if kind == "Checkbox":
        return [click(name), click(name)]
    if kind in ("ToggleButtons", "RadioButtons"):
        labels = where.locator("button, label:not(.widget-label)").all_inner_texts()
        return [click(name, label.strip()) for label in labels]
    if kind == "Dropdown":
        return [pick(name, label.strip()) for label in where.locator("option").all_inner_texts()]
    if kind.endswith("Slider"):
        return [press(name, "Home"), press(name, "End")]
    raise ValueError(f"no states known for a {kind} control ({widget.name}.{name}); add them here")


def states(cell, widget: Widget) -> list[Change]:
    """The changes that show every combination of the states of `widget`'s controls, one control at a time."""
    return combined([control_states(cell, widget, name) for name in widget.controls])


def combined(levels: list[list[Change]]) -> list[Change]:
    """At each state of the first level, the later ones' combinations, reversed every second time (a
    boustrophedon)."""
    if not levels:
        return []
    first, rest = levels[0], levels[1:]
    walk: list[Change] = []
    for i, change in enumerate(first):
        walk += [change, *combined(rest if i % 2 == 0 else [level[::-1] for level in rest])]
    return walk


def reached(page, cell, widget: Widget, change: Change, timeout=60.0) -> bool:
    """Make `change`; True once the widget redrew, False if the control already showed that state."""
    where = control(cell, widget.position(change.control))
    if _already(where, change):
        return False
    made = where.get_by_text(change.target, exact=True).first.click if change.action == "click" and change.target \
        else lambda: act(page, where, change)           # a click on the option with exactly this label
    change_and_wait(page, cell.locator(".widget-html-content").first, made, timeout)
    return True


def _already(where, change: Change) -> bool:
    if change.action == "pick":
        return where.locator("select").evaluate("s => s.options[s.selectedIndex].text.trim()") == change.target
    if change.action == "press":
        handle = where.locator(".noUi-handle").first
        now, end = (handle.get_attribute(f"aria-value{e}") for e in
                    ("now", "min" if change.target == "Home" else "max"))
        return now is not None and float(now) == float(end)
    if change.action == "click" and change.target:
        chosen = where.locator("button.mod-active, input:checked + *, label:has(input:checked)").all_inner_texts()
        return change.target in [c.strip() for c in chosen]
    return False
