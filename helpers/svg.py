"""Lay DOT out as SVG with Graphviz's `dot`, and say how to get it when
it is missing.

`dot` runs with only the SVG renderer and dot layout plugins (the pango text
plugin took most of a small drawing's time; without it labels are sized by
built-in Helvetica metrics, the same everywhere), or as installed when that
set cannot be made. A source of more than `LAYOUT_LIMIT` boxes is not laid
out: the drawing falls back to text saying what to do. Layouts are cached,
so toggling a widget back does not run `dot` again.
Floor: svg, the bottom of the drawing path; imports no module of helpers."""

import atexit
import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

INSTALL_HINT = (
    "Graphviz's dot program was not found, so this is the text drawing: install it with "
    "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) or "
    "`conda install -c conda-forge graphviz`, then restart the kernel."
)
LAYOUT_LIMIT = 1500
PLUGINS = ("libgvplugin_core", "libgvplugin_dot_layout")
TIMEOUT = 120
SMALLER = "pass a smaller max_nodes"


class DotUnavailable(RuntimeError):
    """`dot` is missing, failed, or the graph is too big to lay out; the message says which."""


def node_count(source: str) -> int:
    """How many nodes a DOT source declares (`  name [...]` lines; not edges
    nor the `graph`, `node` and `edge` defaults)."""
    return sum(1 for found in _DECLARATION.finditer(source) if found.group(1) not in ("graph", "node", "edge"))


_DECLARATION = re.compile(r"^\s*(\w+)\s*\[", re.MULTILINE)


def to_svg(source: str, nodes: int | None = None, advice: str = SMALLER) -> str:
    """The SVG `dot` makes of `source`. Too big to lay out: DotUnavailable,
    counting `nodes` nodes (the graph's; None: the source's) and saying `advice`."""
    boxes = node_count(source)
    if boxes > LAYOUT_LIMIT:
        count = boxes if nodes is None else nodes
        drawn = "" if boxes == count else f" ({boxes:,} boxes: a leaf or operation with many uses is drawn beside each)"
        raise DotUnavailable(f"{count:,} nodes{drawn} are more than dot lays out quickly ({LAYOUT_LIMIT:,} boxes), "
                             f"so this is the text drawing: {advice}")
    return _laid_out(source)


@functools.lru_cache(maxsize=32)
def _laid_out(source: str) -> str:
    dot, env = dot_command()
    try:
        done = subprocess.run([dot, "-Tsvg"], input=source.encode(), capture_output=True, env=env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise DotUnavailable(f"dot took more than {TIMEOUT} s, so this is the text drawing: {SMALLER}") from None
    if done.returncode:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        raise DotUnavailable(f"dot failed ({lines[-1] if lines else 'no message'}), so this is the text drawing")
    svg = done.stdout.decode()
    return svg[svg.index("<svg"):]


def dot_command() -> tuple[str, dict[str, str] | None]:
    """(path of `dot`, the environment for the lean plugin set, or None for
    the usual one)."""
    dot = shutil.which("dot")
    if dot is None:
        raise DotUnavailable(INSTALL_HINT)
    plugins = _plugin_directory(dot)
    return dot, None if plugins is None else {**os.environ, "GVBINDIR": plugins}


@functools.cache
def _plugin_directory(dot: str) -> str | None:
    try:
        return _lean_plugins(dot)
    except (OSError, subprocess.SubprocessError, LookupError):
        return None


def _lean_plugins(dot: str) -> str:
    found = subprocess.run([dot, "-v", "-Tsvg"], input=b"digraph {}", capture_output=True, timeout=30)
    libdir = re.search(r'libdir = "([^"]+)"', found.stderr.decode(errors="replace"))
    if libdir is None:
        raise LookupError("dot -v names no plugin directory")
    lean = Path(tempfile.mkdtemp(prefix="helpers-dot-plugins-"))
    atexit.register(shutil.rmtree, lean, True)
    for library in Path(libdir.group(1)).iterdir():
        if library.name.startswith(PLUGINS):
            (lean / library.name).symlink_to(library)
    env = {**os.environ, "GVBINDIR": str(lean)}
    subprocess.run([dot, "-c"], env=env, capture_output=True, timeout=30, check=True)
    probe = subprocess.run([dot, "-Tsvg"], input=b"digraph { a -> b }", env=env, capture_output=True, timeout=30)
    if probe.returncode or b"</svg>" not in probe.stdout:
        raise LookupError("dot does not draw with the lean plugin set")
    return str(lean)
