"""Errors in the short form: the message, then the learner's own frames
(cells, functions defined in them or in the learner's files), then one line
counting the frames of torch, the helpers or other libraries left out (`%tb`
prints them all).

`short_tracebacks()` (every set-up cell, through `helpers.standalone`)
installs `show_short` as IPython's custom handler for `Exception`. The handler
shows the traceback itself (`shell._showtraceback`: the usual `error` output,
with ename and evalue as nbval compares them) and sets `sys.last_*`, so `%tb`
and `%debug` work. Syntax errors, exception groups and errors that render
their own traceback go to IPython's own code; the errors a handler installed
before took (Colab's ImportError) still go to it. Imports neither torch nor
ipywidgets."""

from __future__ import annotations

import builtins
import linecache
import os
import sys
import sysconfig
import traceback
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

# Code that is not the learner's: the helpers, Python's own files, installed packages.
HELPERS = str(Path(__file__).resolve().parent)
STDLIB = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")})
PACKAGES = ("site-packages", "dist-packages")
SHELL = {"IPython", "ipykernel"}   # what runs a cell: its frames come before the cell's, never counted
REPEATS = 3                        # a frame repeated more often (recursion) is shown this many times
MARK = "_graph_notebooks_short_tracebacks"
# the one colour: the error's name in red and bold (IPython's cyan and green are faint on light themes)
RED, RESET = "\x1b[1;31m", "\x1b[0m"
FULL = "%tb prints the full traceback"
# A name not defined is most often a cell above not run yet in this kernel.
NOT_RUN = ("(a cell above not run in this kernel? After a restart or on coming back to a notebook, run the "
           "cells from the top down to here: Run > Run All Above Selected Cell)")


def owner(filename: str) -> str | None:
    """Whose code `filename` is ("torch", "the helpers", "Python"), or None
    when it is the learner's."""
    if filename.startswith("<"):
        return None if filename.startswith("<ipython-input-") else (
            "Python" if filename.startswith("<frozen") else "generated code")
    path = os.path.realpath(filename)
    if path.startswith(HELPERS + os.sep):
        return "the helpers"
    parts = Path(path).parts
    for k, part in enumerate(parts[:-1]):
        if part in PACKAGES:
            return parts[k + 1].removesuffix(".py")
    return "Python" if path.startswith(STDLIB) else None


class Form:
    """How the short form names places and paints the error's name, for one
    shell."""

    def __init__(self, shell: Any = None, colour: bool = True) -> None:
        self.shell, self.colour = shell, colour

    def paint(self, text: str, colour: str) -> str:
        return f"{colour}{text}{RESET}" if self.colour else text

    def cell(self, filename: str) -> str | None:
        """IPython's name of the cell that `filename` is ("Cell In[4]"), or None."""
        named = getattr(getattr(self.shell, "compile", None), "format_code_name", None)
        found = named(filename) if named is not None else None
        return " ".join(found) if found else None

    def place(self, filename: str, lineno: int | None, name: str) -> str:
        cell = self.cell(filename)
        where = cell or f"File {_shown_path(filename)}"
        inside = "" if name == "<module>" else f", in {name}"
        return f"  {where}, line {lineno}{inside}"

    def learners(self, filename: str) -> bool:
        return owner(filename) is None or self.cell(filename) is not None


def _shown_path(filename: str) -> str:
    """A learner's file as from the notebook's folder when inside it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:                  # on another drive (Windows)
        return filename
    return filename if relative.startswith("..") else relative


def short_form(error: BaseException, form: Form | None = None) -> list[str]:
    """The short form's lines: for `error` and each exception it was chained
    from, the message and the learner's frames; last, what was left out."""
    form, lines, hidden = form or Form(colour=False), [], Counter[str]()
    for current, heading in _chain(error):
        lines += _message(current, heading, form)
        lines += _frames(current.__traceback__, hidden, form)
    if hidden:
        total = sum(hidden.values())
        where = " and ".join(hidden)
        lines.append(f"({total} frame{'s' if total > 1 else ''} inside {where} not shown: {FULL})")
    if type(error) is NameError:
        right = spelled(error.name)
        lines.append(f"(Python spells it {right}, with a capital letter)" if right else NOT_RUN)
    return lines


def spelled(name: str | None) -> str | None:
    """How Python spells a constant the learner wrote otherwise (`true`: True), else None."""
    right = {"true": "True", "false": "False", "none": "None", "null": "None"}.get((name or "").lower())
    return right if right != name else None


def _chain(error: BaseException) -> Iterator[tuple[BaseException, str]]:
    """`error`, then each exception it was chained from (once each), with the heading that introduces it."""
    current: BaseException | None = error
    heading, seen = "", set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current, heading
        if current.__cause__ is not None:
            current, heading = current.__cause__, "Caused by: "
        else:
            current, heading = None if current.__suppress_context__ else current.__context__, "While handling: "


def _message(error: BaseException, heading: str, form: Form) -> list[str]:
    """The error's type (in red) and message as Python words them, notes after."""
    kind = type(error)
    module = "" if kind.__module__ in ("builtins", "__main__") else f"{kind.__module__}."
    name = module + kind.__qualname__
    text = "".join(traceback.format_exception_only(kind, error)).rstrip("\n").splitlines() or [name]
    first = text[0]
    painted = form.paint(name, RED) + first[len(name):] if first.startswith(name) else first
    return [heading + painted, *text[1:]]


def _frames(tb: TracebackType | None, hidden: Counter[str], form: Form) -> list[str]:
    """The learner's frames of `tb` (recursion shown `REPEATS` times), the
    others counted into `hidden` by owner (not the shell's before the cell's)."""
    lines: list[str] = []
    started, last, run = False, None, 0
    for frame, lineno in traceback.walk_tb(tb):
        code = frame.f_code
        if not form.learners(code.co_filename):
            who = owner(code.co_filename) or "generated code"
            if started or who not in SHELL:
                hidden[who] += 1
            continue
        started, key = True, (code.co_filename, lineno, code.co_name)
        run, last = (run + 1 if key == last else 1), key
        if run > REPEATS:
            if run > REPEATS + 1:
                lines.pop()
            lines.append(f"  [the frame above repeated {run - REPEATS} more time{'s' if run > REPEATS + 1 else ''}]")
            continue
        lines.append(form.place(code.co_filename, lineno, getattr(code, "co_qualname", code.co_name)))
        line = linecache.getline(code.co_filename, lineno or 0, frame.f_globals).strip()
        lines += [f"    {line}"] if line else []
    return lines


def _shown_by_ipython(error: BaseException) -> bool:
    """Whether IPython's own code shows `error` (a syntax error, an exception
    group, a `_render_traceback_`, or chained to one)."""
    group = getattr(builtins, "BaseExceptionGroup", ())       # Python 3.11 and later
    return isinstance(error, SyntaxError) or any(
        hasattr(current, "_render_traceback_") or isinstance(current, group) for current, _ in _chain(error))


def show_short(shell: Any, etype: type[BaseException], value: BaseException, tb: TracebackType | None,
               tb_offset: int | None = None) -> list[str] | None:
    """IPython's custom exception handler (see the module's docstring); an
    error the handler before took, or IPython shows, goes there."""
    _, kinds, before = getattr(shell, MARK, (None, (), None))
    if kinds and isinstance(value, kinds) and before is not None:
        before(etype, value, tb, tb_offset=tb_offset)
        return None
    if _shown_by_ipython(value):
        if isinstance(value, SyntaxError):
            ran = any(Form(shell).learners(f.f_code.co_filename) for f, _ in traceback.walk_tb(tb))
            if isinstance(value, IndentationError) and not ran:
                shell.showindentationerror()        # as IPython shows a cell that does not parse
            else:
                shell.showsyntaxerror(running_compiled_code=ran)
        else:
            shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
        return None
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb     # where %tb, %debug and pdb.pm() look
    if sys.version_info >= (3, 12):
        sys.last_exc = value
    colour = str(getattr(shell, "colors", "")).lower() != "nocolor"
    lines = short_form(value, Form(shell, colour))
    shell._showtraceback(etype, value, lines)
    if getattr(shell, "call_pdb", False):
        shell.debugger(force=True)
    return lines


def current_shell() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def in_force(shell: Any = None) -> bool:
    """Whether the short form is the shell's custom exception handler."""
    shell = shell or current_shell()
    mark = getattr(shell, MARK, None)
    return shell is not None and mark is not None and mark[0] is getattr(shell, "CustomTB", None)


def short_tracebacks(shell: Any = None) -> None:
    """Show errors in this IPython shell (the running one by default) in the
    short form from now on; outside IPython nothing changes."""
    shell = shell or current_shell()
    if shell is None or in_force(shell):
        return
    before = (tuple(shell.custom_exceptions), shell.CustomTB)
    shell.set_custom_exc((Exception,), show_short)
    setattr(shell, MARK, (shell.CustomTB, *before))


def full_tracebacks(shell: Any = None) -> None:
    """Show errors as before `short_tracebacks` again."""
    shell = shell or current_shell()
    if in_force(shell):
        _, shell.custom_exceptions, shell.CustomTB = getattr(shell, MARK)
        delattr(shell, MARK)
