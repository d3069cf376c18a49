"""Lay a DOT source out as SVG with Graphviz's `dot`, and say how to get
`dot` when it is missing.

`dot` runs with a plugin set of its own: the SVG renderer and the dot
layout only. Graphviz otherwise loads every plugin its installation lists,
and the text-layout one (pango, with cairo and fontconfig behind it) takes
most of a small drawing's time: 16 ms a layout against 3 ms without it on a
2-core machine. Without it, dot sizes labels by its built-in font metrics
(Helvetica's), the same on every machine. When that plugin set cannot be
made (no symlinks, an unusual installation), `dot` runs as installed.

Layout is bounded by size rather than by a clock: a source with more than
`LAYOUT_LIMIT` nodes is not handed to `dot` (its layout time grows much
faster than the node count), and the drawing falls back to text with a
line saying what to do. The limit counts the boxes the source declares; the
message counts the graph's nodes, as the learner does (a leaf or operation
with many uses is one node drawn as one box beside each use). The SVG of a source already laid out is cached,
so toggling a widget back and forth does not run `dot` again.

Floor: svg, the bottom of the drawing path: it takes DOT text, not a
`Graph`, and imports no module of helpers.
"""

import atexit
import functools
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
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


def find_dot() -> str | None:
    """The path of the `dot` program, or None."""
    return shutil.which("dot")


def node_count(source: str) -> int:
    """How many nodes a DOT source declares: lines `  name [...]`, not edges
    (`a -> b [label=" out 1"]`, which a multi-output operation's later
    outputs carry) nor the `graph`, `node` and `edge` defaults."""
    return sum(1 for found in _DECLARATION.finditer(source) if found.group(1) not in ("graph", "node", "edge"))


_DECLARATION = re.compile(r"^\s*(\w+)\s*\[", re.MULTILINE)


def to_svg(source: str, nodes: Callable[[], int] | None = None, advice: str = SMALLER) -> str:
    """The SVG that `dot` makes of this DOT source. For the message of a
    source too big to lay out: `nodes` gives how many nodes the graph drawn
    has (called only then; None: the source's own count), `advice` says
    what to do."""
    boxes = node_count(source)
    if boxes > LAYOUT_LIMIT:
        raise DotUnavailable(too_big(boxes, boxes if nodes is None else nodes(), advice))
    return _laid_out(source)


def too_big(boxes: int, nodes: int, advice: str = SMALLER) -> str:
    """Why a source of `boxes` boxes, drawing a graph of `nodes` nodes, is not laid out."""
    drawn = "" if boxes == nodes else f" ({boxes:,} boxes: a leaf or operation with many uses is drawn beside each)"
    return (f"{nodes:,} nodes{drawn} are more than dot lays out quickly ({LAYOUT_LIMIT:,} boxes), "
            f"so this is the text drawing: {advice}")


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
    """(path of `dot`, environment to run it in): the environment points
    Graphviz at a private plugin directory (see the module docstring), or
    is None (the usual one) when that directory cannot be made."""
    dot = find_dot()
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
