"""What a notebook shows on first open, before anything runs: its stored Graphviz drawings (as an <img>, in HTML,
in a widget's stored HTML) and widget views, counted in the file (`stored`) and in the page (`rendered`); plain
text where the file holds a richer form is what JupyterLab shows of an untrusted notebook."""

import copy
from dataclasses import dataclass

from nbconvert.preprocessors import CoalesceStreamsPreprocessor

from tools.build.site import widget_drawing
from tools.notebooks import WIDGET_VIEW, widget_state

GRAPHVIZ = 'class="node"'          # every Graphviz drawing has node groups


@dataclass(frozen=True)
class Shown:
    drawings: int      # Graphviz SVGs drawn (inline, as an image, or inside a widget)
    widget_views: int  # widget views drawn
    plain_text: int    # outputs shown as text/plain


def graphviz_svgs(html):
    return sum(GRAPHVIZ in part.split("</svg>")[0] for part in html.split("<svg")[1:])


def stored(nb):
    state = widget_state(nb)
    drawings = views = plain = 0
    for output in (o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs):
        data = output.get("data", {})
        if WIDGET_VIEW in data and data[WIDGET_VIEW]["model_id"] in state:
            views += 1
            drawings += graphviz_svgs(widget_drawing(nb, data[WIDGET_VIEW]["model_id"]))
        elif "image/svg+xml" in data:
            drawings += GRAPHVIZ in data["image/svg+xml"]
        elif "text/html" in data:
            drawings += graphviz_svgs(data["text/html"])
        plain += set(data) == {"text/plain"}
    return Shown(drawings, views, plain)


# Counted in the page's active notebook: an image drawing counts once it has
# loaded, a widget view once its root widget is in its output.
RENDERED = """panel => {
  const outputs = [...panel.querySelectorAll('.jp-OutputArea-output')];
  const inline = [...panel.querySelectorAll('svg')].filter(s => s.querySelector('g.node')).length;
  const images = [...panel.querySelectorAll('.jp-RenderedSVG img')].filter(i => i.complete && i.naturalWidth > 0
    && decodeURIComponent(i.src).includes('class="node"')).length;
  return {drawings: inline + images,
          widget_views: outputs.filter(o => o.querySelector(':scope > .jupyter-widgets')).length,
          plain_text: outputs.filter(o => o.dataset.mimeType === 'text/plain').length,
          outputs: outputs.length,
          unknown: outputs.filter(o => !o.dataset.mimeType && !o.querySelector(':scope > .jupyter-widgets'))
            .map(o => o.textContent.trim().slice(0, 120))};
}"""


def rendered(panel):
    """(Shown, outputs in the page, the text of each output neither a rendered MIME type nor a widget view)."""
    counts = panel.evaluate(RENDERED)
    shown = Shown(counts["drawings"], counts["widget_views"], counts["plain_text"])
    return shown, counts["outputs"], counts["unknown"]


def output_count(nb):
    """The outputs the page holds for `nb`: two streams of one name in a row show as one."""
    nb, _ = CoalesceStreamsPreprocessor().preprocess(copy.deepcopy(nb), {})
    return sum(len(c.outputs) for c in nb.cells if c.cell_type == "code")


# What looks broken in the page's active notebook: an image that loaded nothing (its data
# missing or its address unreachable), and a widget view's icon glyph drawn in place of its
# content (ipywidgets marks each part of a view with no kernel "disconnected", a
# broken-link glyph before it: a character of a private use area of an icon font).
BROKEN = """panel => {
  const images = [...panel.querySelectorAll('img')].filter(i => i.complete && i.naturalWidth === 0)
    .map(i => `image ${(i.getAttribute('src') || '(no src)').slice(0, 80)}`);
  const glyphs = [...panel.querySelectorAll('.jupyter-widgets-disconnected')].filter(e => {
    const content = getComputedStyle(e, '::before').content;
    return /^"[\\ue000-\\uf8ff]"$/.test(content);
  }).map(e => `broken-link glyph on a disconnected ${e.className.split(' ').filter(c => c.startsWith('widget-'))
    .join('.') || e.className.slice(0, 60)}`);
  return [...images, ...glyphs];
}"""
# What each widget view shown from stored state says on its first line (its ::before; "none" for no line).
NOTICES = """panel => [...panel.querySelectorAll('.jp-OutputArea-output > .jupyter-widgets')].map(
  e => getComputedStyle(e, '::before').content)"""

