"""Run Graphviz's `dot` program, bounded in time, and say how to get it.

Starting `dot` costs about 15 ms, far more than laying out a small graph,
so one `dot -Tsvg` process is kept running and fed one graph after another
(it answers each with one SVG document). If it fails or runs out of time,
it is stopped and the next drawing starts a new one.
"""

import atexit
import functools
import os
import select
import shutil
import subprocess
import time

INSTALL_HINT = (
    "Graphviz's dot program was not found, so this is the text drawing: install it with "
    "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) or "
    "`conda install -c conda-forge graphviz`, then restart the kernel."
)
END = b"</svg>\n"
# Sent after every graph: dot answers it with a second, empty SVG, so a
# request is complete when two SVGs are back; and an unfinished graph turns
# into a syntax error at once instead of dot waiting for more input.
SENTINEL = b"\ndigraph end_of_request {}\n"


class DotUnavailable(RuntimeError):
    """`dot` is missing, failed, or ran out of time; the message says which."""


def find_dot():
    """The path of the `dot` program, or None."""
    return shutil.which("dot")


def to_svg(source, timeout=20.0):
    """The SVG that `dot` makes of this DOT source (cached per source text)."""
    if find_dot() is None:
        raise DotUnavailable(INSTALL_HINT)
    return _cached(source, timeout)


@functools.lru_cache(maxsize=32)
def _cached(source, timeout):
    # Windows cannot wait on pipes with select(): one dot process per drawing there.
    svg = one_shot(source, timeout) if os.name == "nt" else _dot_process().render(source, timeout)
    return svg[svg.index("<svg"):]


def one_shot(source, timeout):
    """Run a new `dot -Tsvg` for this one graph."""
    try:
        done = subprocess.run([find_dot(), "-Tsvg"], input=source.encode(), capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise DotUnavailable(_too_slow(timeout)) from None
    if done.returncode != 0:
        raise _failed(done.stderr)
    return done.stdout.decode()


def _too_slow(timeout):
    return f"dot did not finish within {timeout:g} s, so this is the text drawing: pass a smaller max_nodes"


@functools.cache
def _dot_process():
    process = DotProcess()
    atexit.register(process.stop)
    return process


class DotProcess:
    """A long-lived `dot -Tsvg` that lays out one graph per request."""

    def __init__(self):
        self.proc = None

    def render(self, source, timeout):
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([find_dot(), "-Tsvg"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            self.proc.stdin.write(source.encode() + SENTINEL)
            self.proc.stdin.flush()
            return self._read(timeout).decode()
        except (DotUnavailable, OSError):
            self.stop()
            raise

    def _read(self, timeout):
        out, err, deadline = b"", b"", time.monotonic() + timeout
        pipes = [self.proc.stdout.fileno(), self.proc.stderr.fileno()]
        while out.count(END) < 2:
            ready, _, _ = select.select(pipes, [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise DotUnavailable(_too_slow(timeout))
            for fd in ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise _failed(err)
                if fd == pipes[0]:
                    out += chunk
                else:
                    err += chunk
            if b"Error" in err or b"syntax error" in err:
                raise _failed(err)
        return out[: out.index(END) + len(END)]

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            pipe.close()
        self.proc = None


def _failed(stderr):
    lines = stderr.decode(errors="replace").strip().splitlines()
    return DotUnavailable(f"dot failed ({lines[-1] if lines else 'no message'}), so this is the text drawing")
