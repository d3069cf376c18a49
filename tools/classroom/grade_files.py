"""What `make grade` reads and writes, treated as a learner's: a submitted
notebook and a sandbox's result are untrusted bytes, and every string a
learner made that reaches the teacher's report is data, never markup.

    read_notebook(path, folder)     a submission, or Unreadable(why) for that learner alone
    decode(data, what)              bounded JSON (size, nesting) from a sandbox
    md(text), csv_cell(text)        a learner's text for summary.md and grades.csv

A submission is read only when it is a regular file (no link, device, FIFO
or socket) inside the learner's own folder with no link on the way, of at
most MAX_BYTES, nested at most MAX_DEPTH deep, and valid against nbformat's
schema with every cell's source text."""

import json
import os
import re
import stat
from pathlib import Path

import nbformat

MAX_BYTES = 32 * 2 ** 20       # a submitted notebook (the largest stored one with outputs is under 2 MB)
MAX_DEPTH = 64                 # nesting of JSON arrays and objects (a notebook needs under 20)


class Unreadable(ValueError):
    """A submission that cannot be graded, with why, in a line the teacher reads."""


def too_deep(data, limit=MAX_DEPTH):
    """Whether JSON text nests arrays and objects deeper than `limit` (checked
    before parsing, so that json's recursion never meets it)."""
    depth, in_string, escaped = 0, False, False
    for char in data:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def decode(data, what, cap=MAX_BYTES * 4):
    """JSON from bytes or text that an untrusted process wrote, bounded in
    size and nesting; raises Unreadable saying which bound it broke."""
    if len(data) > cap:
        raise Unreadable(f"{what} is larger than {cap // 2 ** 20} MB")
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    if too_deep(text):
        raise Unreadable(f"{what} nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise Unreadable(f"{what} is not JSON ({str(error)[:120]})") from None


def _inside(path, folder):
    """The path's parts below `folder`, after checking that none of them is a link."""
    folder = Path(os.path.realpath(folder))
    relative = Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(folder)))
    here = folder
    for part in relative.parts[:-1]:
        here = here / part
        if here.is_symlink() or not here.is_dir():
            raise Unreadable(f"{relative} is reached through a link ({part}); only the learner's own files are graded")
    return here / relative.name, relative


def read_bytes(path, folder, cap=MAX_BYTES):
    """The bytes of a regular file inside `folder`, read without following
    a link or blocking on a FIFO, at most `cap` of them."""
    target, relative = _inside(path, folder)
    try:
        handle = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        kind = "a link" if target.is_symlink() else error.strerror
        raise Unreadable(f"{relative} is {kind}; only the learner's own regular files are graded") from None
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            raise Unreadable(f"{relative} is not a regular file ({_kind(mode)})")
        chunks, size = [], 0
        while size <= cap:
            chunk = os.read(handle, min(2 ** 20, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:
            raise Unreadable(f"{relative} is larger than {cap // 2 ** 20} MB")
        return b"".join(chunks)
    finally:
        os.close(handle)


def _kind(mode):
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"


def read_notebook(path, folder):
    """A learner's notebook as nbformat's NotebookNode (v4), checked as
    untrusted input; raises Unreadable with the reason."""
    data = decode(read_bytes(path, folder), "the notebook")
    if not isinstance(data, dict):
        raise Unreadable("the notebook is not a JSON object")
    try:
        nb = nbformat.reads(json.dumps(data), as_version=4)
        nbformat.validate(nb)
    except Exception as error:      # noqa: BLE001 (nbformat raises many kinds for a malformed file)
        raise Unreadable(f"the notebook does not follow nbformat's schema ({type(error).__name__}: "
                         f"{one_line(str(error))[:150]})") from None
    for cell in nb.cells:
        if not isinstance(cell.get("source"), str) or not isinstance(cell.get("metadata", {}).get("tags", []), list):
            raise Unreadable("the notebook does not follow nbformat's schema (a cell's source or tags are not text)")
    return nb


def one_line(text):
    return re.sub(r"[\x00-\x1f\x7f\u2028\u2029\u0085]+", " ", str(text)).strip()


MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#!|~])")


def md(text, limit=300):
    """A learner's text for one line of summary.md: no line breaks or control
    characters, every Markdown and HTML character escaped, at most `limit` long."""
    flat = one_line(text)
    flat = flat[:limit] + ("..." if len(flat) > limit else "")
    return MARKDOWN.sub(r"\\\1", flat)


def csv_cell(text):
    """A learner's text for grades.csv: one that a spreadsheet would take for
    a formula (= + - @, a tab or a carriage return first) starts with a quote."""
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
