"""What an answer cell's code reaches past the lesson, read by the grader
from the source the learner submitted (tools/classroom/grade.py), in its
own process: the kernel runs that code, but nothing it does can change what
this finds. The probe in the kernel (grade_probe.py) sees what a cell
changed; code that shares the kernel's process could also change what the
probe reports, and to do so it must reach the kernel's machinery, which
this names.

    reaches(source, lesson_bindings) -> ["uses get_ipython", "imports sys", ...]

Flagged: importing any module but torch's and a few of Python's own that
compute (ALLOWED); using a name that reaches the kernel, the interpreter or
the file system (the builtins exec, eval, open, getattr and their kind; the
set-up cell's sys, os, subprocess, importlib, inspect; get_ipython; the
exercise set `ex`, whose checks hold the reference answers), a dunder name
or attribute (`__class__`, `__globals__`, `__builtins__`), an attribute that
leads to a module or a frame (`torch.sys`, `f_back`), a private attribute of
something the collection made (`ex._set`); `global` and `nonlocal`;
setting or deleting an attribute of a module (`torch.allclose = ...`); what
loads or compiles code the source does not show (`torch.load` and
`numpy.load` of a pickle, C++ and Fortran extensions, `ctypes`, attribute
paths in text: `attrgetter`, `get_type_hints`, a string naming a dunder or
a frame); a private name imported (`from torch import _C`); and IPython's
magics and shell escapes, which run through get_ipython. None of
the collection's solutions and right answers uses any of these
(tests/test_grade_source.py holds that), so a flag is a cell for the
teacher to read, never a verdict."""

import ast
import re
import warnings

from IPython.core.inputtransformer2 import TransformerManager

ALLOWED = ("torch", "math", "cmath", "fractions", "decimal", "numbers", "itertools", "functools", "operator",
           "collections", "numpy", "typing", "dataclasses", "random", "statistics", "copy", "string", "re",
           "enum", "abc", "time")
REACHING = {"exec", "eval", "compile", "open", "__import__", "globals", "locals", "vars", "getattr", "setattr",
            "delattr", "breakpoint", "input", "help", "exit", "quit", "memoryview", "get_ipython", "display",
            "sys", "os", "subprocess", "importlib", "inspect", "shutil", "logging", "warnings", "ex", "In", "Out"}
ATTRIBUTES = {"sys", "os", "modules", "builtins", "f_back", "f_globals", "f_locals", "f_builtins", "f_code",
              "gi_frame", "cr_frame", "ag_frame", "tb_frame", "tb_next", "shell", "kernel", "display_pub",
              "displayhook", "excepthook", "user_ns", "session", "iopub_socket", "subprocess", "importlib",
              # what loads or compiles code the source does not show: pickles, C++, Fortran, packages
              "load", "loads", "load_inline", "load_library", "cpp_extension", "package", "hub", "ctypes",
              "ctypeslib", "f2py", "multiprocessing", "attrgetter", "methodcaller", "get_type_hints"}
# Text that names a way in: a dunder anywhere (`"{0.__globals__}"`), or the machinery's own names
NAMING = re.compile(r"__[A-Za-z0-9]\w*__|\b(get_ipython|f_back|f_globals|gi_frame|tb_frame|display_pub|user_ns|"
                    r"sys\.modules)\b")
DUNDERS_ALLOWED = {"__init__", "__name__", "__doc__", "__len__", "__getitem__", "__iter__", "__repr__"}


def _ipython(source):
    """The cell as IPython runs it: magics and shell escapes become calls through get_ipython."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TransformerManager().transform_cell(source)


def _dunder(name):
    return re.fullmatch(r"__[A-Za-z0-9]\w*__", name) is not None and name not in DUNDERS_ALLOWED


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _modules(tree):
    """Names a piece of code binds to modules (import x, import x.y as z)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def lesson_bindings(sources):
    """The names the stored notebook's own cells bind to modules (its set-up
    cell's os, sys, torch...) and to the collection's objects (what it
    imports from helpers, the exercise set)."""
    modules, ours = set(), set()
    trees = []
    for source in sources:
        try:
            trees.append(ast.parse(_ipython(source)))
        except (SyntaxError, ValueError):
            continue
    for tree in trees:
        modules |= _modules(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "helpers":
                ours |= {a.asname or a.name for a in node.names}
    for tree in trees:               # what the collection's own functions made: `ex = exercises("01", globals())`
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _root(node.value) in ours:
                ours |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return modules | ours


def reaches(source, lesson_bindings=frozenset()):
    """What `source` (an answer cell, as submitted) reaches past the lesson,
    each once, in the order found; [] for code that reaches nothing.
    `lesson_bindings` are the names the stored notebook binds to modules and to
    the collection's own objects."""
    if not isinstance(source, str):
        return ["the cell's source is not text"]
    try:
        tree = ast.parse(_ipython(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []               # the kernel cannot run it either: it raises there, and is judged wrong
    modules = _modules(tree) | set(lesson_bindings) | {"torch", "helpers"}
    found = []

    def flag(text):
        if text not in found:
            found.append(text)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ALLOWED:
                    flag(f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level or (node.module or "").split(".")[0] not in ALLOWED:
                flag(f"imports from {'.' * node.level}{node.module or ''}")
            for alias in node.names:
                if _dunder(alias.name) or alias.name in REACHING | ATTRIBUTES or alias.name.startswith("_"):
                    flag(f"imports {alias.name}")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            flag(f"declares {'global' if isinstance(node, ast.Global) else 'nonlocal'} {', '.join(node.names)}")
        elif isinstance(node, ast.Name):
            if node.id in REACHING or _dunder(node.id):
                flag(f"uses {node.id}")
        elif isinstance(node, ast.Attribute):
            root = _root(node)
            if _dunder(node.attr) or node.attr in ATTRIBUTES:
                flag(f"uses .{node.attr}")
            elif node.attr.startswith("_") and root in lesson_bindings:
                flag(f"uses {root}'s private .{node.attr}")
            if isinstance(node.ctx, (ast.Store, ast.Del)) and root in modules:
                flag(f"{'sets' if isinstance(node.ctx, ast.Store) else 'deletes'} {ast.unparse(node)[:80]}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = [m.group(0) for m in NAMING.finditer(node.value) if m.group(0) not in DUNDERS_ALLOWED]
            if named:
                flag(f"names {named[0][:40]} in a string")
    return found
