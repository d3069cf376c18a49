"""Lay a DOT source out as SVG with Graphviz's `dot`, through the `graphviz`
package, and say how to get `dot` when it is missing.

Layout is bounded by size rather than by a clock: a source with more than
`LAYOUT_LIMIT` nodes is not handed to `dot` (its layout time grows much
faster than the node count), and the drawing falls back to text with a
line saying what to do. The SVG of a source already laid out is cached,
so toggling a widget back and forth does not run `dot` again.
"""

import functools
import shutil

import graphviz

INSTALL_HINT = (
    "Graphviz's dot program was not found, so this is the text drawing: install it with "
    "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) or "
    "`conda install -c conda-forge graphviz`, then restart the kernel."
)
LAYOUT_LIMIT = 1500


class DotUnavailable(RuntimeError):
    """`dot` is missing, failed, or the graph is too big to lay out; the message says which."""


def find_dot():
    """The path of the `dot` program, or None."""
    return shutil.which("dot")


def to_svg(source):
    """The SVG that `dot` makes of this DOT source."""
    nodes = source.count("[label=")
    if nodes > LAYOUT_LIMIT:
        raise DotUnavailable(f"{nodes} nodes are more than dot lays out quickly ({LAYOUT_LIMIT}), so this is "
                             f"the text drawing: pass a smaller max_nodes")
    return _laid_out(source)


@functools.lru_cache(maxsize=32)
def _laid_out(source):
    try:
        svg = graphviz.pipe("dot", "svg", source.encode(), quiet=True).decode()
    except graphviz.ExecutableNotFound:
        raise DotUnavailable(INSTALL_HINT) from None
    except graphviz.CalledProcessError as err:
        lines = (err.stderr or b"").decode(errors="replace").strip().splitlines()
        raise DotUnavailable(f"dot failed ({lines[-1] if lines else 'no message'}), "
                             "so this is the text drawing") from None
    return svg[svg.index("<svg"):]
