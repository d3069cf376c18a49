"""Thin ipywidgets wiring: controls -> a view (a pure function that returns a
`Figure` or HTML) -> a redraw. The views are in `views.py`, tested without a
browser; this module only connects them to widgets.

A view that raises (a learner edited the lesson function it runs) is shown
inside the widget: the error, the learner's lines it came through, and the
control values it was for, in place of the drawing, so the controls never
stand beside a drawing made for other values."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape
from typing import Any

import ipywidgets as widgets
import torch

from .arguments import MACHINERY, learner_facing, wrong
from .draw import Figure

View = Callable[..., Figure | str]
FRAMES = 4                # at most this many of the learner's frames, nearest the error
NO_DRAWING = "No drawing for"
ERROR_COLOUR = "#c62828"


@dataclass(frozen=True)
class Failure:
    """What a panel shows when its view raised: the control values, the
    error, and the traceback's lines for the learner's frames it came through."""

    values: str
    error: str
    frames: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "\n".join([f"{NO_DRAWING} {self.values}: the view raised an error.", self.error, *self.frames])

    def html(self) -> str:
        head, *rest = str(self).split("\n", 1)
        return (f'<div role="alert" style="border-left:4px solid {ERROR_COLOUR};padding:0.3em 0.8em">'
                f'<p style="color:{ERROR_COLOUR};font-family:monospace;margin:0">{escape(head)}</p>'
                f'<pre style="margin:0.3em 0 0 0">{escape(rest[0] if rest else "")}</pre></div>')


def failure(error: BaseException, values: dict[str, Any]) -> Failure:
    """The Failure for `error`, raised by a view given `values`."""
    message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return Failure(_named(values), message, tuple(_learner_frames(error)))


def _learner_frames(error: BaseException) -> list[str]:
    """The traceback's frames in the learner's code (cells, their own files),
    not in helpers/, the standard library or installed packages."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(MACHINERY)]
    lines = []
    for frame in frames[-FRAMES:]:
        lines.append(f"  {_place(frame.filename)}, line {frame.lineno}, in {frame.name}")
        lines += [f"    {frame.line.strip()}"] if frame.line else []
    return lines


def _place(filename: str) -> str:
    """A notebook cell's name as IPython prints it ("Cell In[4]"), else the file."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        name = shell.compile.format_code_name(filename) if shell is not None else None
    except (ImportError, AttributeError):
        name = None
    return " ".join(name) if name else filename


def _named(values: dict[str, Any]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in values.items())


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PANEL_CLASS = "autograd-panel"
# What a panel's page holds besides its figure: a stylesheet for the panel's own elements.
# - The HTML view may shrink to the panel's width (a flex item otherwise stays as wide as
#   its drawing's smallest legible width, so the drawing box never scrolls, the panel
#   scrolls sideways with its controls, and a drawing that opens at its right edge shows
#   only the empty left of its picture).
# - A view with no kernel behind it (ipywidgets marks it disconnected, with a broken-link
#   glyph on each of its parts: a first open shows five or six) says once, above its
#   controls, what to do instead. That is a view shown from the notebook's stored state,
#   and a live one whose kernel stopped (shut down, restarted, or its server gone). A
#   stored view shows the lesson's own control values, not the learner's last (the save
#   hook keeps the stored drawing; saveState is off), and the line says that too.
# - The controls wrap onto more lines, and so do a toggle control's buttons, when the panel
#   is narrower than they are (JupyterLab at 200 % zoom on a 1366x768 screen leaves a
#   notebook about 315 px beside its file browser): otherwise the ones past the edge are
#   cut off and cannot be reached.
RUN_TO_USE = ("No kernel behind these controls (a saved output shows the lesson's own settings, not your last; "
              "or the kernel stopped): run the cells from the top down to this one to use them.")
STYLE = (f"<style>.{PANEL_CLASS} .widget-html-content{{min-width:0}}"
         f".{PANEL_CLASS}>.widget-hbox{{flex-wrap:wrap}}"
         f".{PANEL_CLASS} .widget-toggle-buttons>div{{display:flex;flex-wrap:wrap}}"
         f".{PANEL_CLASS} .jupyter-widgets-disconnected::before{{content:none!important;display:none!important}}"
         f".{PANEL_CLASS}.jupyter-widgets-disconnected::before{{content:\"{RUN_TO_USE}\"!important;"
         "display:block!important;font:italic var(--jp-ui-font-size1,13px) var(--jp-ui-font-family,sans-serif)"
         "!important;color:var(--jp-ui-font-color1,#333)!important;padding:0 0 0.4em 0!important}</style>")


class Panel(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no types
    """Controls on top, the view's figure below, redrawn on every change. Its
    text form (`repr`, the widget's text/plain output, which nbval compares)
    is the control values, then the figure's: its whole caption and the
    drawing's text form."""

    def __init__(self, render: View, controls: dict[str, widgets.ValueWidget]) -> None:
        self.render, self.controls = render, controls
        self.view = widgets.HTML()
        self.shown: Figure | Failure | str = ""
        super().__init__([widgets.HBox(list(controls.values())), self.view])
        self.add_class(PANEL_CLASS)
        self.redraw()
        for control in controls.values():
            control.observe(self.redraw, names="value")

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def redraw(self, _change: object = None) -> None:
        """Draw the view for the controls' values now; an error it raises is
        drawn instead (a `Failure`)."""
        values = self.values()
        shown: Figure | Failure | str
        try:
            with one_thread(), torch.enable_grad():    # a drawing even after torch.set_grad_enabled(False)
                shown = self.render(**values)
            if not isinstance(shown, (Figure, str)):
                raise TypeError(f"a panel's view must return a Figure or HTML text; got {type(shown).__name__}")
        except Exception as error:
            shown = failure(error, values)
        self.shown = shown
        self.view.value = STYLE + (shown if isinstance(shown, str) else shown.html())

    def __repr__(self) -> str:
        return f"panel({_named(self.values())})\n{self.shown}"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = super()._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)          # whole: ipywidgets cuts a widget's at 110 characters
        return bundle

    if int(widgets.__version__.split(".")[0]) < 8:
        def _ipython_display_(self, **kwargs: Any) -> None:
            """ipywidgets 7 (Colab's) shows a widget through this method, not
            _repr_mimebundle_: the same bundle, with the whole text form."""
            from IPython.display import display

            data = {"text/plain": repr(self), WIDGET_VIEW: {"version_major": 2, "version_minor": 0,
                                                             "model_id": self._model_id}}
            display(data, raw=True)  # type: ignore[no-untyped-call]
            self._handle_displayed(**kwargs)


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch's operations on one thread meanwhile: a lesson's tensors are
    tiny, and waking a second thread for them costs more than it saves, the
    more so on a busy machine (BatchNorm in train mode, with another process
    on the other core: 15 ms a redraw on two threads, 3 ms on one)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@learner_facing
def panel(render: View, **controls: widgets.ValueWidget) -> Panel:
    """A box with `controls` on top and `render(**values)` below, redrawn on
    every change. `render` takes the controls' values by name and returns a
    `Figure` (or HTML text); when it raises, the widget shows the error and
    the values it was for instead of a drawing."""
    if not callable(render):
        raise wrong(TypeError, f"panel needs a view first, a function that returns a Figure or HTML; "
                    f"got {type(render).__name__}")
    for name, control in controls.items():
        if not isinstance(control, widgets.ValueWidget):
            raise wrong(TypeError, f"{name}= must be an ipywidgets control such as widgets.IntSlider(); "
                        f"got {type(control).__name__}")
    return Panel(render, controls)
