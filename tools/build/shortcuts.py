"""Keys pressed on a widget go to the widget: jupyter/overrides.json's
keyboard shortcuts, the notebook's single-key shortcuts disabled and defined
again outside cell outputs, made from this environment's JupyterLab and
Notebook 7 (why: jupyter/README.md; tests/test_shortcuts.py holds the file).

    python -m tools.build.shortcuts          # rewrite jupyter/overrides.json's shortcuts
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = ROOT / "jupyter" / "overrides.json"
PLUGIN = "@jupyterlab/shortcuts-extension:shortcuts"
OUTSIDE_OUTPUTS = ":not(.jp-OutputArea-output *)"
FOCUS = " :focus"          # a descendant that has the focus: a cell's own focus is `.jp-Cell:focus`


def schemas(prefix=Path(sys.prefix)):
    return sorted((prefix / "share/jupyter/lab/schemas").glob("**/*.json"))


def replaced(paths):
    """The default shortcuts (in `paths`' schemas) whose selector matches a focused element inside a cell's output:
    each one disabled, and again with its selector outside cell outputs, sorted."""
    found = set()
    for path in paths:
        schema = json.loads(path.read_text(encoding="utf-8"))
        for shortcut in schema.get("jupyter.lab.shortcuts", []) if isinstance(schema, dict) else []:
            selector, keys = shortcut["selector"], shortcut.get("keys") or []
            if FOCUS in selector and any(keys) and not shortcut.get("disabled"):
                found.add((shortcut["command"], tuple(keys), selector))
    return [entry for command, keys, selector in sorted(found) for entry in (
        {"command": command, "keys": list(keys), "selector": selector, "disabled": True},
        {"command": command, "keys": list(keys), "selector": selector + OUTSIDE_OUTPUTS})]


def text(settings):
    """The file's text: JSON indented as usual, but each shortcut on a line of its own
    (a diff after an upgrade then shows one line per shortcut that changed)."""
    lines = ",\n".join(f"      {json.dumps(entry)}" for entry in settings[PLUGIN]["shortcuts"])
    shortcuts = f'  {json.dumps(PLUGIN)}: {{\n    "shortcuts": [\n{lines}\n    ]\n  }}'
    others = [f"  {json.dumps(key)}: {json.dumps(value, indent=2)}".replace("\n", "\n  ")
              for key, value in settings.items() if key != PLUGIN]
    return "{\n" + ",\n".join([*others, shortcuts]) + "\n}\n"


def main():
    found = replaced(schemas())
    if not found:
        print(f"no JupyterLab schemas under {Path(sys.prefix) / 'share/jupyter/lab/schemas'}: run this with the "
              "project's .venv/bin/python", file=sys.stderr)
        return 2
    OVERRIDES.write_text(text({**json.loads(OVERRIDES.read_text(encoding="utf-8")), PLUGIN: {"shortcuts": found}}),
                         encoding="utf-8")
    print(f"{OVERRIDES.relative_to(ROOT)}: {len(found) // 2} shortcuts kept out of cell outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
