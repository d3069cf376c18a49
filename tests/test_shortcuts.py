"""Keys pressed on a widget go to the widget (tools/build/shortcuts.py): the
notebook's single-key shortcuts in command mode are kept out of cell
outputs by jupyter/overrides.json, made from this environment's JupyterLab.
tests/test_browser.py and tests/test_notebook7.py press the keys."""

import json

import pytest

from tools.build import shortcuts


def test_overrides_are_made_from_this_jupyterlab():
    assert shortcuts.main(["--check"]) == 0, "run .venv/bin/python -m tools.build.shortcuts and review the diff"


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


def test_a_stale_file_is_told(tmp_path, monkeypatch, capsys):
    """The check fails when JupyterLab's shortcuts and the file part ways (one
    shortcut dropped from the file, as after an upgrade that added one)."""
    settings = json.loads(shortcuts.OVERRIDES.read_text())
    settings[shortcuts.PLUGIN]["shortcuts"] = settings[shortcuts.PLUGIN]["shortcuts"][2:]
    stale = tmp_path / "overrides.json"
    stale.write_text(json.dumps(settings))
    monkeypatch.setattr(shortcuts, "OVERRIDES", stale)
    assert shortcuts.main(["--check"]) == 1
    assert "python -m tools.build.shortcuts" in capsys.readouterr().err


def test_other_settings_are_kept(tmp_path):
    schema = tmp_path / "tracker.json"
    schema.write_text(json.dumps({"jupyter.lab.shortcuts": [
        {"command": "a", "keys": ["A"], "selector": ".jp-Notebook :focus"},
        {"command": "b", "keys": ["B"], "selector": ".jp-Notebook .jp-Cell:focus"},     # a cell's own focus
        {"command": "c", "keys": [""], "selector": ".jp-Notebook :focus"}]}))           # no key here
    made = shortcuts.written([schema], {"x": {"y": 1}})
    assert made["x"] == {"y": 1}
    assert made[shortcuts.PLUGIN]["shortcuts"] == [
        {"command": "a", "keys": ["A"], "selector": ".jp-Notebook :focus", "disabled": True},
        {"command": "a", "keys": ["A"], "selector": ".jp-Notebook :focus:not(.jp-OutputArea-output *)"}]


@pytest.mark.parametrize("text", ["[]", "{\"jupyter.lab.shortcuts\": []}"])
def test_schemas_without_shortcuts(tmp_path, text):
    (tmp_path / "plugin.json").write_text(text)
    assert shortcuts.replaced([tmp_path / "plugin.json"]) == []
