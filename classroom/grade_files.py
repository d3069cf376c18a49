"""What `make grade` reads and writes, treated as a learner's (docs/teaching.md, "Every file is
a learner's"): submissions and a sandbox's result bounded; learner-made text in the report as data."""

import errno
import json
import os
import re
import stat
import unicodedata
from pathlib import Path

import nbformat

MAX_BYTES = 32 * 2 ** 20       # a submitted notebook (the largest stored one with outputs is under 2 MB)
MAX_ITEMS = 2_000_000          # JSON values (a stored notebook holds under 4,000)
MAX_WALK_DEPTH = 16            # folders below a learner's that are searched (the hub's layout needs 1)
MAX_WALK_ENTRIES = 100_000     # names looked at in one learner's folder
STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)      # a JSON string, escapes and all


class Unreadable(ValueError):
    """A submission that cannot be graded, with why, in a line the teacher reads."""


def decode(data, what):
    """JSON an untrusted process wrote, read with a size cap, its values counted before it is parsed (their
    memory; json's own recursion limit bounds nesting); raises Unreadable."""
    text = data.decode("utf-8", errors="replace")
    bare = STRING.sub('""', text)
    if bare.count(",") + bare.count("[") + bare.count("{") > MAX_ITEMS:
        raise Unreadable(f"{what} holds more than {MAX_ITEMS:,} values")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise Unreadable(f"{what} is not JSON ({str(error)[:120]})") from None


def notebooks_in(folder):
    """(the .ipynb files below `folder`, what was left unsearched): iterative, never through a link,
    at most MAX_WALK_DEPTH folders down and MAX_WALK_ENTRIES names, counted as they are listed."""
    found, unsearched, seen, stack = [], [], 0, [(Path(folder), 0)]
    while stack:
        here, level = stack.pop()
        try:
            with os.scandir(here) as listing:
                for entry in listing:
                    seen += 1
                    if seen > MAX_WALK_ENTRIES:
                        return sorted(found), [*unsearched, f"{folder}: past {MAX_WALK_ENTRIES:,} names, the rest"]
                    if entry.is_dir(follow_symlinks=False):       # a folder named *.ipynb is searched, not read
                        if level < MAX_WALK_DEPTH:
                            stack.append((Path(entry.path), level + 1))
                        else:
                            unsearched.append(f"{entry.path} (deeper than {MAX_WALK_DEPTH} folders)")
                    elif entry.name.endswith(".ipynb"):            # a link among them: refused when read
                        found.append(Path(entry.path))
        except OSError as error:
            unsearched.append(f"{here} ({error.strerror})")
    return sorted(found), unsearched


FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def read_bytes(path, folder):
    """At most MAX_BYTES of a regular file below `folder`, opened one folder at a time, never through a link,
    owned by the folder's owner (a hard link to the solutions or a classmate's notebook is refused for its
    maker alone)."""
    relative = Path(path).relative_to(folder)
    here = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        owner = os.fstat(here).st_uid
        for part in relative.parts[:-1]:
            try:
                below = os.open(part, FOLDER, dir_fd=here)
            except OSError:
                raise Unreadable(f"{relative} is reached through {part}, a link or not a folder; only the "
                                 "learner's own files are graded") from None
            os.close(here)
            here = below
        try:
            handle = os.open(relative.name, FILE, dir_fd=here)
        except OSError as error:
            kind = "a link" if error.errno == errno.ELOOP else error.strerror      # O_NOFOLLOW's refusal
            raise Unreadable(f"{relative} is {kind}; only the learner's own regular files are graded") from None
    finally:
        os.close(here)
    try:        # before os.fdopen, which refuses a folder with an error of its own
        found = os.fstat(handle)
        if not stat.S_ISREG(found.st_mode):
            raise Unreadable(f"{relative} is not a regular file")
        if found.st_uid != owner:
            raise Unreadable(f"{relative} belongs to uid {found.st_uid}, not to uid {owner}, who owns the "
                             "learner's folder; only the learner's own files are graded")
    except Unreadable:
        os.close(handle)
        raise
    with os.fdopen(handle, "rb") as file:
        data = file.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise Unreadable(f"{relative} is larger than {MAX_BYTES // 2 ** 20} MB")
    return data


def read_notebook(path, folder):
    """A learner's notebook as nbformat's NotebookNode (v4); raises Unreadable with why."""
    data = decode(read_bytes(path, folder), "the notebook")
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
