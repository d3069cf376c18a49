"""What `make grade` reads and writes, treated as a learner's: a submission is read
only when it is a regular file owned by the learner folder's owner, opened one
folder at a time without following a link, at most MAX_BYTES, valid for
nbformat; a sandbox's result is bounded before it is parsed; learner-made text
in the report is data (`md`, `csv_cell`)."""

import errno
import json
import os
import re
import stat
import unicodedata
from pathlib import Path

import nbformat

MAX_BYTES = 32 * 2 ** 20       # a submitted notebook (the largest stored one with outputs is under 2 MB)
MAX_DEPTH = 64                 # nesting of JSON arrays and objects (a notebook needs under 20)
MAX_ITEMS = 2_000_000          # JSON values (a stored notebook holds under 4,000)
MAX_WALK_DEPTH = 16            # folders below a learner's that are searched (the hub's layout needs 1)
MAX_WALK_ENTRIES = 100_000     # names looked at in one learner's folder
STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)      # a JSON string, escapes and all


class Unreadable(ValueError):
    """A submission that cannot be graded, with why, in a line the teacher reads."""


def decode(data, what, cap=MAX_BYTES * 4, items=MAX_ITEMS):
    """JSON an untrusted process wrote, bounded (size, values, nesting) before it is parsed; raises Unreadable."""
    if len(data) > cap:
        raise Unreadable(f"{what} is larger than {cap // 2 ** 20} MB")
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    bare = STRING.sub('""', text)
    if bare.count(",") + bare.count("[") + bare.count("{") > items:
        raise Unreadable(f"{what} holds more than {items:,} values")
    level = 0
    for char in re.sub(r"[^\[\]{}]+", "", bare):
        level += 1 if char in "[{" else -1
        if level > MAX_DEPTH:
            raise Unreadable(f"{what} nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise Unreadable(f"{what} is not JSON ({str(error)[:120]})") from None


def notebooks_in(folder, depth=MAX_WALK_DEPTH, entries=MAX_WALK_ENTRIES):
    """(the .ipynb files below `folder`, what was left unsearched): iterative, never
    through a link, at most `depth` folders down and `entries` names."""
    found, unsearched, seen, stack = [], [], 0, [(Path(folder), 0)]
    while stack:
        here, level = stack.pop()
        try:
            with os.scandir(here) as listing:
                for entry in listing:
                    seen += 1
                    if seen > entries:
                        return sorted(found), [*unsearched, f"{folder}: past {entries:,} names, the rest"]
                    if entry.is_dir(follow_symlinks=False):
                        stack += [(Path(entry.path), level + 1)] if level < depth else []
                        unsearched += [] if level < depth else [f"{entry.path} (deeper than {depth} folders)"]
                    elif entry.name.endswith(".ipynb"):
                        found.append(Path(entry.path))
        except OSError as error:
            unsearched.append(f"{here} ({error.strerror})")
    return sorted(found), unsearched


FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _open_inside(path, folder):
    """(descriptor, path below `folder`, the folder's owner's uid), opened one folder
    at a time, never through a link."""
    try:
        relative = Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(folder)))
    except ValueError:
        raise Unreadable(f"{path} is not inside the learner's folder {folder}") from None
    here = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        owner = os.fstat(here).st_uid
        for part in relative.parts[:-1]:
            try:
                below = os.open(part, FOLDER, dir_fd=here)
            except OSError:
                raise Unreadable(f"{relative} is reached through {'a link' if _link(part, here) else 'a file'} "
                                 f"({part}); only the learner's own files are graded") from None
            os.close(here)
            here = below
        try:
            return os.open(relative.name, FILE, dir_fd=here), relative, owner
        except OSError as error:
            kind = "a link" if _link(relative.name, here) or error.errno == errno.ELOOP else error.strerror
            raise Unreadable(f"{relative} is {kind}; only the learner's own regular files are graded") from None
    finally:
        os.close(here)


def _link(name, folder):
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_bytes(path, folder, cap=MAX_BYTES):
    """At most `cap` bytes of a regular file inside `folder`, owned by the folder's owner
    (a hard link to the solutions or a classmate's notebook is refused for its maker alone)."""
    handle, relative, owner = _open_inside(path, folder)
    try:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise Unreadable(f"{relative} is not a regular file ({_kind(found.st_mode)})")
        if found.st_uid != owner:
            raise Unreadable(f"{relative} belongs to uid {found.st_uid}, not to uid {owner}, who owns the "
                             "learner's folder; only the learner's own files are graded")
        with os.fdopen(os.dup(handle), "rb") as file:
            data = file.read(cap + 1)
        if len(data) > cap:
            raise Unreadable(f"{relative} is larger than {cap // 2 ** 20} MB")
        return data
    finally:
        os.close(handle)


def _kind(mode):
    kinds = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device", stat.S_IFSOCK: "a socket"}
    return kinds.get(stat.S_IFMT(mode), "not a file")


def read_notebook(path, folder):
    """A learner's notebook as nbformat's NotebookNode (v4); raises Unreadable with why."""
    data = decode(read_bytes(path, folder), "the notebook")
    if not isinstance(data, dict):
        raise Unreadable("the notebook is not a JSON object")
    try:
        nb = nbformat.reads(json.dumps(data), as_version=4)
        nbformat.validate(nb)
    except Exception as error:      # noqa: BLE001 (nbformat raises many kinds for a malformed file)
        raise Unreadable(f"the notebook does not follow nbformat's schema ({type(error).__name__}: "
                         f"{one_line(str(error))[:150]})") from None
    return nb


def one_line(text):
    """A learner's text on one line, invisible format characters (Cf) shown as their code."""
    flat = re.sub(r"[\x00-\x1f\x7f\u2028\u2029\u0085]+", " ", str(text)).strip()
    return "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) == "Cf" else c for c in flat)


def md(text, limit=300, table=False):
    """A learner's text as one code span of summary.md (never Markdown or HTML), at
    most `limit` long; in a table, its | escaped."""
    flat = one_line(text)
    flat = flat[:limit] + ("..." if len(flat) > limit else "")
    fence = "`" * (max(map(len, re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat[:1] == "`" or flat[-1:] == "`" or not flat.strip() else ""
    span = f"{fence}{pad}{flat}{pad}{fence}"
    return span.replace("|", "\\|") if table else span


def csv_cell(text):
    """A learner's text for grades.csv, a quote before what a spreadsheet takes for a formula."""
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
