"""Thin ipywidgets wiring: controls -> a pure function that returns HTML ->
a redraw. The pure functions are the views in `views.py`, tested without
a browser; this module only connects them to widgets."""

import ipywidgets as widgets


def panel(render, **controls):
    """A box with `controls` on top and `render(**values)` below, redrawn on
    every change. `render` takes the controls' values by name and returns HTML."""
    if not callable(render):
        raise TypeError(f"panel needs a function that returns HTML first; got {type(render).__name__}")
    for name, control in controls.items():
        if not isinstance(control, widgets.ValueWidget):
            raise TypeError(f"{name}= must be an ipywidgets control such as widgets.IntSlider(); "
                            f"got {type(control).__name__}")
    view = widgets.HTML(render(**_values(controls)))

    def redraw(_change):
        view.value = render(**_values(controls))

    for control in controls.values():
        control.observe(redraw, names="value")
    return widgets.VBox([widgets.HBox(list(controls.values())), view])


def _values(controls):
    return {name: control.value for name, control in controls.items()}
