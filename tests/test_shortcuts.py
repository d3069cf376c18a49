"""Keys pressed on a widget go to the widget (tools/build/shortcuts.py): the
notebook's single-key shortcuts in command mode are kept out of cell
outputs by jupyter/overrides.json, made from this environment's JupyterLab.
tests/test_browser.py and tests/test_notebook7.py press the keys."""

import json

from tools.build import shortcuts


def test_overrides_are_made_from_this_jupyterlab():
    stored = json.loads(shortcuts.OVERRIDES.read_text())[shortcuts.PLUGIN]["shortcuts"]
    assert stored == shortcuts.replaced(shortcuts.schemas()), "run .venv/bin/python -m tools.build.shortcuts"


def test_the_keys_a_widget_needs_are_given_back():
    entries = json.loads(shortcuts.OVERRIDES.read_text())[shortcuts.PLUGIN]["shortcuts"]
    given = {(e["command"], tuple(e["keys"])) for e in entries if "disabled" not in e}
    disabled = {(e["command"], tuple(e["keys"])) for e in entries if e.get("disabled")}
    needed = {("notebook:move-cursor-heading-above-or-collapse", ("ArrowLeft",)),   # a slider's left
              ("notebook:move-cursor-heading-below-or-expand", ("ArrowRight",)),
              ("notebook:move-cursor-down", ("ArrowDown",)),                          # a dropdown's next
              ("notebook:move-cursor-up", ("ArrowUp",)),
              ("notebook:cut-cell", ("X",)), ("notebook:delete-cell", ("D", "D")),
              ("kernelmenu:restart", ("0", "0"))}
    assert needed <= given == disabled
    for entry in entries:
        if "disabled" not in entry:
            assert entry["selector"].endswith(shortcuts.OUTSIDE_OUTPUTS)
            assert {**entry, "selector": entry["selector"].removesuffix(shortcuts.OUTSIDE_OUTPUTS),
                    "disabled": True} in entries
