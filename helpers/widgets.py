"""ipywidgets wiring: controls -> a view (a pure function returning a `Figure`
or HTML, tested without a browser) -> a redraw. A view that raises shows the
error, the learner's lines it came through and the control values in place of
the drawing."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from html import escape
from typing import Any

import ipywidgets as widgets
import torch

from .arguments import MACHINERY, learner_facing, wrong
from .draw import Figure
from .errors import Form, current_shell

View = Callable[..., Figure | str]
FRAMES = 4                # at most this many of the learner's frames, nearest the error
NO_DRAWING = "No drawing for"
ERROR_COLOUR = "#c62828"


class Failure:
    """What a panel shows for a view that raised: the values, the error, the learner's frames."""

    def __init__(self, error: BaseException, values: dict[str, Any]) -> None:
        message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        self.text = "\n".join([f"{NO_DRAWING} {_named(values)}: the view raised an error.", message,
                               *_learner_frames(error)])

    def __str__(self) -> str:
        return self.text

    def html(self) -> str:
        head, *rest = self.text.split("\n", 1)
        return (f'<div role="alert" style="border-left:4px solid {ERROR_COLOUR};padding:0.3em 0.8em">'
                f'<p style="color:{ERROR_COLOUR};font-family:monospace;margin:0">{escape(head)}</p>'
                f'<pre style="margin:0.3em 0 0 0">{escape(rest[0] if rest else "")}</pre></div>')


def _learner_frames(error: BaseException) -> list[str]:
    """The traceback's frames in the learner's code (not MACHINERY's), a cell
    named as IPython names it ("Cell In[4]")."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(MACHINERY)]
    form, lines = Form(current_shell()), []
    for frame in frames[-FRAMES:]:
        lines.append(f"  {form.cell(frame.filename) or frame.filename}, line {frame.lineno}, in {frame.name}")
        lines += [f"    {frame.line.strip()}"] if frame.line else []
    return lines


def _named(values: dict[str, Any]) -> str:
    return ", ".join(f"{name}={value!r}" for name, value in values.items())


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PANEL_CLASS = "autograd-panel"
# The panel's stylesheet: the HTML view may shrink to the panel's width (so the drawing box,
# not the panel, scrolls); a view without a kernel (stored, or its kernel stopped) says once,
# instead of ipywidgets' broken-link glyph on each part, what to do; controls and a toggle's
# buttons wrap on a narrow panel (200 % zoom) rather than go past its edge.
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
    text form (what nbval compares) is the control values, then the figure's."""

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
        """Draw the view for the controls' values; an error is drawn instead."""
        values, threads = self.values(), torch.get_num_threads()
        shown: Figure | Failure | str
        # on one thread meanwhile: a lesson's tensors are tiny, and a second thread costs more than it saves
        # (15 ms a redraw, 3 ms on one)
        torch.set_num_threads(1)
        try:
            with torch.enable_grad():    # a drawing even after torch.set_grad_enabled(False)
                shown = self.render(**values)
            if not isinstance(shown, (Figure, str)):
                raise TypeError(f"a panel's view must return a Figure or HTML text; got {type(shown).__name__}")
        except Exception as error:
            shown = Failure(error, values)
        finally:
            torch.set_num_threads(threads)
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
            """ipywidgets 7 (Colab's) shows a widget through this: the same bundle."""
            from IPython.display import display

            data = {"text/plain": repr(self), WIDGET_VIEW: {"version_major": 2, "version_minor": 0,
                                                             "model_id": self._model_id}}
            display(data, raw=True)  # type: ignore[no-untyped-call]
            self._handle_displayed(**kwargs)


@learner_facing
def panel(render: View, **controls: widgets.ValueWidget) -> Panel:
    """A box with `controls` on top and `render(**values)` (a `Figure` or HTML)
    below, redrawn on every change; an error shows with the values it was for."""
    if not callable(render):
        raise wrong(TypeError, f"panel needs a view first, a function that returns a Figure or HTML; "
                    f"got {type(render).__name__}")
    for name, control in controls.items():
        if not isinstance(control, widgets.ValueWidget):
            raise wrong(TypeError, f"{name}= must be an ipywidgets control such as widgets.IntSlider(); "
                        f"got {type(control).__name__}")
    return Panel(render, controls)
