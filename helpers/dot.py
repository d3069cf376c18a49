"""Run Graphviz's `dot` program, bounded in time, and say how to get it."""

import functools
import shutil
import subprocess

INSTALL_HINT = (
    "Graphviz's dot program was not found, so this is the text drawing: install it with "
    "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) or "
    "`conda install -c conda-forge graphviz`, then restart the kernel."
)


class DotUnavailable(RuntimeError):
    """`dot` is missing, failed, or ran out of time; the message says which."""


def find_dot():
    """The path of the `dot` program, or None."""
    return shutil.which("dot")


def to_svg(source, timeout=20.0):
    """The SVG that `dot` makes of this DOT source (cached per source text)."""
    if find_dot() is None:
        raise DotUnavailable(INSTALL_HINT)
    return _run(source, timeout)


@functools.lru_cache(maxsize=32)
def _run(source, timeout):
    try:
        done = subprocess.run(
            [find_dot(), "-Tsvg"], input=source.encode(), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise DotUnavailable(
            f"dot did not finish within {timeout:g} s, so this is the text drawing: "
            "pass a smaller max_nodes to draw_graph"
        ) from None
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        raise DotUnavailable(f"dot failed ({reason[0]}), so this is the text drawing")
    svg = done.stdout.decode()
    return svg[svg.index("<svg"):]
