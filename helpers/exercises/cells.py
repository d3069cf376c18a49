"""Which cell last set each answer, and whether it raised: an IPython hook (`watch`) records each
run of a cell that sets, or meant to set, an answer's name, so a check need not judge a stale value."""

import ast
import dis
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import CodeType
from typing import Any

from ..errors import current_shell as _shell  # None outside IPython
from .feedback import error_line

MISSING = object()          # a name the namespace does not hold
# A line that defines or assigns a name, in a cell that does not compile: `def mul(`, `answer_4 = `.
TARGET = re.compile(r"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)"
                    r"|^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)


@dataclass(frozen=True)
class Run:
    """The latest run of a cell that set, or meant to set, an answer's name."""

    cell: int | None
    error: str | None
    set: bool
    bare: str | None = None


_WATCHED: set[str] = set()
_BEFORE: dict[str, Any] = {}
_RUNS: dict[tuple[int, str], Run] = {}


def watch(names: Iterable[str], namespace: Mapping[str, Any] | None) -> None:
    """Record the cell runs that set `names`, when `namespace` is the IPython shell's own."""
    shell = _shell()
    if shell is None or namespace is None or namespace is not getattr(shell, "user_ns", None):
        return
    _WATCHED.update(names)
    for event, hook in (("pre_run_cell", before_cell), ("post_run_cell", after_cell)):
        if hook not in shell.events.callbacks.get(event, []):
            shell.events.register(event, hook)


def latest(namespace: Mapping[str, Any], name: str) -> Run | None:
    """The latest recorded run of a cell that set, or meant to set, `name`; None when none."""
    return _RUNS.get((id(namespace), name))


def before_cell(info: Any = None) -> None:
    """IPython's pre_run_cell: the watched names' values as the cell starts."""
    _BEFORE.clear()
    try:
        shell = _shell()
        if shell is not None:
            _BEFORE.update((name, shell.user_ns.get(name, MISSING)) for name in _WATCHED)
    except Exception:       # never in the learner's way: without a record the answer is judged as given
        _BEFORE.clear()


def after_cell(result: Any = None) -> None:
    """IPython's post_run_cell: a Run for each watched name the cell set or meant to set."""
    before = dict(_BEFORE)
    _BEFORE.clear()
    try:
        shell = _shell()
        if shell is None or result is None or not _WATCHED:
            return
        namespace = shell.user_ns
        info = getattr(result, "info", None)
        source = getattr(info, "transformed_cell", None) or getattr(info, "raw_cell", None) or ""
        error = getattr(result, "error_before_exec", None) or getattr(result, "error_in_exec", None)
        changed = {name for name in _WATCHED if name in before and namespace.get(name, MISSING) is not before[name]}
        mentioned = {name for name in _WATCHED if name in source}
        meant = assigned(source) & mentioned if mentioned - changed else set()
        count = getattr(result, "execution_count", None)
        for name in changed | meant:
            _RUNS[(id(namespace), name)] = Run(count if isinstance(count, int) else None,
                                               None if error is None else error_line(error),
                                               name in changed or error is None, _bare(source, name))
    except Exception:       # as in before_cell
        return


def assigned(source: str) -> set[str]:
    """The names a cell's code binds at its top level (lines like `name = ...` if it does not compile)."""
    try:
        code = compile(source, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError):
        return {a or b for a, b in TARGET.findall(source)}
    return _stored(code, top=True)


def _stored(code: CodeType, top: bool) -> set[str]:
    ops = ("STORE_NAME", "DELETE_NAME", "STORE_GLOBAL", "DELETE_GLOBAL") if top else ("STORE_GLOBAL", "DELETE_GLOBAL")
    names = {str(i.argval) for i in dis.get_instructions(code) if i.opname in ops}
    for inner in code.co_consts:
        if isinstance(inner, CodeType):
            names |= _stored(inner, top=False)
    return names


def _bare(source: str, name: str) -> str | None:
    """'d' when the cell is `name = d`, a bare name, and nothing else."""
    try:
        [node] = ast.parse(source).body         # ValueError unless one statement
    except (SyntaxError, ValueError, OverflowError):
        return None
    match node:
        case ast.Assign(targets=[ast.Name(id=target)], value=ast.Name(id=bare)) if target == name:
            return bare
    return None
