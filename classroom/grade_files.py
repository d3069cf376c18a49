"""What `make grade` reads and writes, treated as a learner's: a submitted
notebook and a sandbox's result are untrusted bytes, and every string a
learner made that reaches the teacher's report is data, never markup.

    read_notebook(path, folder)     a submission, or Unreadable(why) for that learner alone
    decode(data, what)              bounded JSON (size, nesting, items) from a sandbox
    notebooks_in(folder)            the .ipynb files below a learner's folder: bounded, iterative, no links
    md(text), csv_cell(text)        a learner's text for summary.md and grades.csv

A submission is read only when it is a regular file (no link, device, FIFO
or socket; no second name, no other owner than the learner's folder's)
inside the learner's own folder, opened one folder at a time from there
without following a link (so a folder swapped for a link while it is read
is refused too), of at most MAX_BYTES, nested at most MAX_DEPTH deep with
at most MAX_ITEMS values, and valid against nbformat's schema with every
cell's source text."""

import errno
import json
import os
import re
import stat
from pathlib import Path

import nbformat

MAX_BYTES = 32 * 2 ** 20       # a submitted notebook (the largest stored one with outputs is under 2 MB)
MAX_DEPTH = 64                 # nesting of JSON arrays and objects (a notebook needs under 20)
MAX_ITEMS = 2_000_000          # JSON values: a stored notebook holds under 4,000, a sandbox's result about 1,000,000
                               # at most (six observations of at most 50,000 numbers each, tagged)
MAX_WALK_DEPTH = 16            # folders below a learner's that are searched (the hub's layout needs 1)
MAX_WALK_ENTRIES = 100_000     # names looked at in one learner's folder
STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)      # a JSON string, escapes and all


class Unreadable(ValueError):
    """A submission that cannot be graded, with why, in a line the teacher reads."""


def past_bounds(text, depth=MAX_DEPTH, items=MAX_ITEMS):
    """Why JSON text is past the bounds (nested deeper than `depth`, more
    than `items` values), or None; checked before parsing, so that json's
    recursion never meets a deep one and a huge one costs no memory.
    Strings are taken out first (in C), so that the count and the walk see
    only brackets and commas, and the walk is made only once the count,
    which bounds it, is within bounds."""
    bare = STRING.sub('""', text)
    if bare.count(",") + bare.count("[") + bare.count("{") > items:
        return f"holds more than {items:,} values"
    level = 0
    for char in re.sub(r"[^\[\]{}]+", "", bare):
        level += 1 if char in "[{" else -1
        if level > depth:
            return f"nests deeper than {depth} levels"
    return None


def decode(data, what, cap=MAX_BYTES * 4, items=MAX_ITEMS):
    """JSON from bytes or text that an untrusted process wrote, bounded in
    size, nesting and number of values before it is parsed (so that parsing
    costs at most a few hundred MB); raises Unreadable saying which bound it broke."""
    if len(data) > cap:
        raise Unreadable(f"{what} is larger than {cap // 2 ** 20} MB")
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    broken = past_bounds(text, MAX_DEPTH, items)
    if broken:
        raise Unreadable(f"{what} {broken}")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise Unreadable(f"{what} is not JSON ({str(error)[:120]})") from None


def notebooks_in(folder, depth=MAX_WALK_DEPTH, entries=MAX_WALK_ENTRIES):
    """(the .ipynb files below `folder`, sorted; what was left unsearched, in
    words): a walk with a stack of its own, not recursion, so that no depth
    of folders can exhaust Python's; never through a link; at most `depth`
    folders down and `entries` names looked at, so that no tree costs more
    than that."""
    found, unsearched, seen, stack = [], [], 0, [(Path(folder), 0)]
    while stack:
        here, level = stack.pop()
        try:
            with os.scandir(here) as listing:
                names = list(listing)
        except OSError as error:
            unsearched.append(f"{here} ({error.strerror})")
            continue
        for entry in names:
            seen += 1
            if seen > entries:
                return sorted(found), [*unsearched, f"{folder}: past {entries:,} names, the rest"]
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_folder and level < depth:
                stack.append((Path(entry.path), level + 1))
            elif is_folder:
                unsearched.append(f"{entry.path} (deeper than {depth} folders)")
            elif entry.name.endswith(".ipynb"):
                found.append(Path(entry.path))
    return sorted(found), unsearched


def _flags(*names):
    return os.O_RDONLY | sum(getattr(os, name, 0) for name in names)     # (names Windows lacks count 0)


FOLDER = _flags("O_DIRECTORY", "O_NOFOLLOW", "O_CLOEXEC")
FILE = _flags("O_NOFOLLOW", "O_NONBLOCK", "O_NOCTTY", "O_CLOEXEC")


def _relative(path, folder):
    try:
        return Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(folder)))
    except ValueError:
        raise Unreadable(f"{path} is not inside the learner's folder {folder}") from None


def _open_inside(path, folder):
    """(descriptor, path below `folder`, the folder's owner's uid) of the
    file at `path`: each folder on the way opened from the one before it,
    never through a link, and the file itself likewise, so that no folder
    swapped for a link between a check and an open leads elsewhere."""
    relative = _relative(path, folder)
    here = os.open(folder, _flags("O_DIRECTORY", "O_CLOEXEC"))
    try:
        owner = os.fstat(here).st_uid
        for part in relative.parts[:-1]:
            try:
                below = os.open(part, FOLDER, dir_fd=here)
            except OSError as error:
                raise Unreadable(_refused(relative, part, here, error, folder=True)) from None
            os.close(here)
            here = below
        try:
            return os.open(relative.name, FILE, dir_fd=here), relative, owner
        except OSError as error:
            raise Unreadable(_refused(relative, relative.name, here, error, folder=False)) from None
    finally:
        os.close(here)


def _refused(relative, part, parent, error, folder):
    """Why opening `part` (in the folder open as `parent`) was refused, in the teacher's words."""
    try:
        link = stat.S_ISLNK(os.stat(part, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        link = False
    if folder:
        why = f"reached through a link ({part})" if link else f"reached through {part}, which is not a folder"
        return f"{relative} is {why}; only the learner's own files are graded"
    kind = "a link" if link or error.errno == errno.ELOOP else error.strerror
    return f"{relative} is {kind}; only the learner's own regular files are graded"


def read_bytes(path, folder, cap=MAX_BYTES):
    """The bytes of a regular file inside `folder`, read without following
    a link or blocking on a FIFO, at most `cap` of them. A file with a
    second name (a hard link: the other may be a classmate's or the
    solutions') or owned by someone else than the learner's folder is refused."""
    handle, relative, owner = _open_inside(path, folder)
    try:
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise Unreadable(f"{relative} is not a regular file ({_kind(found.st_mode)})")
        if found.st_nlink > 1:
            raise Unreadable(f"{relative} is a hard link (one of {found.st_nlink} names of one file); only the "
                             "learner's own files are graded")
        if found.st_uid != owner:
            raise Unreadable(f"{relative} belongs to uid {found.st_uid}, not to uid {owner}, who owns the "
                             "learner's folder; only the learner's own files are graded")
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


def md(text, limit=300, table=False):
    """A learner's text for one line of summary.md: no line breaks or control
    characters, at most `limit` long, as a code span (shown as written, never
    Markdown or HTML, with no escapes to read); in a table, its | escaped."""
    flat = one_line(text)
    flat = flat[:limit] + ("..." if len(flat) > limit else "")
    fence = "`" * (max(map(len, re.findall("`+", flat)), default=0) + 1)
    pad = " " if flat[:1] == "`" or flat[-1:] == "`" or not flat.strip() else ""
    span = f"{fence}{pad}{flat}{pad}{fence}"
    return span.replace("|", "\\|") if table else span


def csv_cell(text):
    """A learner's text for grades.csv: one that a spreadsheet would take for
    a formula (= + - @, a tab or a carriage return first) starts with a quote."""
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
