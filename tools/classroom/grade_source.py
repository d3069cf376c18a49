"""What an answer cell's code reaches past the lesson, read by the grader
from the source the learner submitted (tools/classroom/grade.py), in its
own process: the kernel runs that code, but nothing it does can change what
this finds. The probe in the kernel (grade_probe.py) sees what a cell
changed; code that shares the kernel's process could also change what the
probe reports, and to do so it must reach the kernel's machinery, which
this names.

    reaches(source, lesson_bindings) -> ["uses get_ipython", "imports sys", ...]
    rebinds(earlier_sources, source, allowed) -> ["check", ...]

`rebinds` names what the probe's "rebound" and "deleted" name, from the
source: the notebook's names that an answer cell binds again or deletes,
read with the compiler's own scope analysis (symtable). A cell can change
a name in no other way than these bindings, or through a way in that
`reaches` flags (globals(), a frame, the kernel's namespace), so what the
probe would say of the notebook's names is known here without it.

Flagged: importing any module but torch's and a few of Python's own that
compute (ALLOWED); using a name that reaches the kernel, the interpreter or
the file system (the builtins exec, eval, open, getattr and their kind; the
modules sys, os, subprocess, importlib, inspect; get_ipython; the
exercise set `ex`, whose checks hold the reference answers), a dunder name
or attribute (`__class__`, `__globals__`, `__builtins__`), an attribute that
leads to a module or a frame (`torch.sys`, `f_back`), a private attribute of
something the collection made (`ex._set`); `global` and `nonlocal`;
setting or deleting an attribute of a module (`torch.allclose = ...`); what
loads or compiles code the source does not show (`torch.load` and
`numpy.load` of a pickle, numpy.lib.format's readers and anything given
`allow_pickle`, C++ and Fortran extensions, `ctypes`, attribute paths in
text: `attrgetter`, `get_type_hints`, a string naming a dunder or a frame,
an annotation written as a string, which functools.singledispatch
evaluates in the notebook's namespace); enum's `global_enum`, which
writes a class's members into the notebook's namespace;
a method with a dunder name defined (`__eq__`, `__torch_function__`: what
Python or torch calls unseen); a private name imported (`from torch import
_C`); and IPython's magics and shell escapes, which run through
get_ipython. None of
the collection's solutions and right answers uses any of these
(tests/test_grade_source.py holds that), so a flag is a cell for the
teacher to read, never a verdict."""

import ast
import copy
import functools
import re
import symtable
import sys
import types
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
              "ctypeslib", "f2py", "multiprocessing", "attrgetter", "methodcaller", "get_type_hints",
              "allow_pickle", "read_array", "open_memmap", "NpzFile",       # numpy's pickles (numpy.lib.format)
              # what turns text into an attribute or code, or sets attributes for you
              "get_field", "Formatter", "ForwardRef", "update_wrapper", "wraps", "getattr_static",
              # what writes into the namespace of the module a class was defined in: the notebook's
              "global_enum"}
# Modules that reach the interpreter, the kernel or the machine: any attribute of an allowed
# module (or torch's, numpy's, the collection's) bound to one of them is a way in by its name,
# whatever it is called there (`enum.bltns`, `torch.cuda.graphs.gc`, `random._os`)
DANGEROUS = {"sys", "os", "posix", "gc", "builtins", "inspect", "pickle", "_pickle", "copyreg", "marshal", "traceback",
             "importlib", "ctypes", "subprocess", "threading", "_thread", "signal", "socket", "shutil", "types",
             "code", "codeop", "runpy", "pdb", "faulthandler", "resource", "io", "_io", "IPython", "ipykernel",
             "zmq", "linecache", "tracemalloc"}
WALKED = ("torch", "numpy", "ipywidgets", "helpers", "IPython")
PRIVATE_ALLOWED = re.compile(r"_saved_\w+|_raw_saved_\w+|_version|_base|_is_view")   # what the lessons read
# Text that names a way in: a dunder anywhere (`"{0.__globals__}"`), or the machinery's own names
NAMING = re.compile(r"__[A-Za-z0-9]\w*__|\b(get_ipython|f_back|f_globals|gi_frame|tb_frame|display_pub|user_ns|"
                    r"sys\.modules|allow_pickle)\b")
KEYWORDS = {"allow_pickle"}       # arguments that let a reader run a pickle's code, whoever is called
DUNDERS_ALLOWED = {"__init__", "__name__", "__doc__", "__len__", "__getitem__", "__iter__", "__repr__"}


@functools.cache
def holders():
    """The attribute names by which a module this process has loaded (an
    allowed one, torch's, numpy's, the collection's) holds a DANGEROUS module
    or get_ipython: read once, from the modules themselves."""
    names = set()
    tops = set(ALLOWED) | set(WALKED)
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in tops:
            continue
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        for attr, value in items:        # by type alone: an attribute read could run the object's code
            kind = type(value)
            top = str(vars(value).get("__name__", "")).split(".")[0] if issubclass(kind, types.ModuleType) else ""
            if top in DANGEROUS and top != name.split(".")[0] or \
                    kind is types.FunctionType and value.__name__ == "get_ipython":
                names.add(attr)             # (a package's own submodules are not counted: IPython.core)
    return frozenset(names)


def _aliases(tree, modules):
    """Names the cell binds to a module or to an attribute path of one (`t = torch`, `T = torch.Tensor`)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.NamedExpr)):
            value = node.value
            path = value
            while isinstance(path, ast.Attribute):
                path = path.value
            if isinstance(path, ast.Name) and path.id in modules | found:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


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


def _annotation(node):
    """The annotation of an argument, a function's return or an annotated
    assignment (an empty expression where there is none)."""
    found = node.annotation if isinstance(node, ast.arg | ast.AnnAssign) else node.returns
    return found if found is not None else ast.Tuple([], ast.Load())


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
    try:
        return _reached(tree, lesson_bindings)
    except RecursionError:
        return ["its code nests too deep for the grader to read"]


def _reached(tree, lesson_bindings):
    modules = _modules(tree) | set(lesson_bindings) | {"torch", "helpers"}
    modules |= _aliases(tree, modules)
    named = REACHING | ATTRIBUTES | holders()
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
                if _dunder(alias.name) or alias.name in named or alias.name.startswith("_") or alias.name == "*":
                    flag(f"imports {alias.name}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _dunder(node.name):
            flag(f"defines {node.name}")
        elif isinstance(node, ast.keyword) and node.arg in KEYWORDS:
            flag(f"passes {node.arg}")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            flag(f"declares {'global' if isinstance(node, ast.Global) else 'nonlocal'} {', '.join(node.names)}")
        elif isinstance(node, ast.Name):
            if node.id in REACHING or _dunder(node.id):
                flag(f"uses {node.id}")
        elif isinstance(node, ast.Attribute):
            root = _root(node)
            if _dunder(node.attr) or node.attr in named:
                flag(f"uses .{node.attr}")
            elif node.attr.startswith("_") and not PRIVATE_ALLOWED.fullmatch(node.attr) and \
                    node.attr not in DUNDERS_ALLOWED:
                flag(f"uses the private .{node.attr}")
            if isinstance(node.ctx, (ast.Store, ast.Del)) and (root is None or root in modules):
                flag(f"{'sets' if isinstance(node.ctx, ast.Store) else 'deletes'} .{node.attr} of "
                     f"{root or 'an expression'}")
        elif isinstance(node, ast.arg | ast.FunctionDef | ast.AsyncFunctionDef | ast.AnnAssign) and any(
                isinstance(n, ast.Constant) and isinstance(n.value, str) for n in ast.walk(_annotation(node))):
            flag("writes an annotation as a string (what reads annotations evaluates it: functools.singledispatch)")
        elif isinstance(node, ast.MatchClass) and node.kwd_attrs:
            flag(f"reads attributes by a class pattern ({', '.join(node.kwd_attrs[:3])})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = [m.group(0) for m in NAMING.finditer(node.value) if m.group(0) not in DUNDERS_ALLOWED]
            if named:
                flag(f"names {named[0][:40]} in a string")
    return found


def binds(source):
    """The names a cell's code binds or deletes in the notebook's namespace:
    at its top level (assignments of every form, imports, def, class, del,
    for, with, except and match targets) and from inside it (a walrus in a
    comprehension, a name declared global in a function it defines).
    A statement that does not compile binds nothing; those before it do."""
    return set(_bindings(source))


# A name only augmented (`w += 1`: a tensor changed in place) or annotated without a value: whether
# that rebinds it is known when it runs, which the probe sees
IN_PLACE = "in place"


def _bindings(source):
    """{name a cell binds: None, or what it imports there when import
    statements are all that bind it (`import torch` gives torch: {"torch"},
    `from math import pi as p` p: {"math.pi"}), or IN_PLACE when only an
    augmented assignment or a bare annotation names it}. Each top-level
    statement is read alone, as IPython runs them: one that does not
    compile binds nothing, and those before it still run. (Read once per
    text: the lesson's cells come again for every answer; callers do not
    change what it gives.)"""
    return _read_bindings(source) if isinstance(source, str) else {}


@functools.lru_cache(maxsize=4096)
def _read_bindings(source):
    try:
        tree = ast.parse(_ipython(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found = {}
    for statement in tree.body:
        for name, kind in _statement_bindings(statement).items():
            known = found.get(name, IN_PLACE)
            found[name] = None if None in (kind, known) else kind if known == IN_PLACE else \
                known if kind == IN_PLACE else known | kind
    return found


def _statement_bindings(statement):
    """What one top-level statement binds, as `_bindings` gives it."""
    try:
        names = _compiled_bindings(ast.unparse(statement))
        counted = names
        if any(isinstance(n, ast.AugAssign | ast.AnnAssign) for n in ast.walk(statement)):
            plain = _InPlace()
            changed = plain.visit(copy.deepcopy(statement))
            counted = _compiled_bindings(ast.unparse(changed)) if plain.changed else names
    except SyntaxError:
        return {}
    except (RecursionError, MemoryError, ValueError):          # too deep to compile here: every name it stores
        return {n.id: None for n in ast.walk(statement) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    imported, level = {}, [statement, *_module_level(statement)]
    for node in level:
        for alias in node.names if isinstance(node, (ast.Import, ast.ImportFrom)) else ():
            if isinstance(node, ast.Import):
                name = alias.asname or alias.name.split(".")[0]
                target = alias.name if alias.asname else alias.name.split(".")[0]
            else:
                name, target = alias.asname or alias.name, f"{'.' * node.level}{node.module or ''}.{alias.name}"
            imported.setdefault(name, set()).add(target)
    found = {name: IN_PLACE if name not in counted else imported.get(name) if assigned is False else None
             for name, assigned in names.items()}
    if any(isinstance(n, ast.AnnAssign) for n in level):
        found.setdefault("__annotations__", IN_PLACE)
    return found


def _compiled_bindings(code):
    """{name code binds in its module: whether anything but an import binds
    it}, by the compiler's own scope analysis (symtable)."""
    top = symtable.symtable(code, "<cell>", "exec")
    found = {s.get_name(): s.is_assigned() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    inner = list(top.get_children())
    while inner:
        table = inner.pop()
        found |= {s.get_name(): True for s in table.get_symbols()
                  if (s.is_assigned() or s.is_imported()) and s.is_declared_global()}
        inner += table.get_children()
    return found


class _InPlace(ast.NodeTransformer):
    """A statement without the bindings that leave an object in place: an
    augmented assignment to a name becomes its operation, a bare
    annotation its annotation's evaluation (neither inside a function or
    class, whose names are their own, save what they declare global).
    `changed` says whether it found one."""

    changed = False

    def visit_AugAssign(self, node):
        if not isinstance(node.target, ast.Name):
            return self.generic_visit(node)
        self.changed = True
        value = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, self.visit(node.value))
        return ast.copy_location(ast.Expr(value), node)

    def visit_AnnAssign(self, node):
        if node.value is None and isinstance(node.target, ast.Name):
            self.changed = True
            return ast.copy_location(ast.Expr(node.annotation), node)
        return self.generic_visit(node)

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef


def _module_level(node):
    """The statements of a module, those inside its compound statements
    included, but not those of the functions and classes it defines."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            yield child
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield from _module_level(child)
        elif isinstance(child, (ast.excepthandler, ast.match_case)):
            yield from _module_level(child)


def rebinds(earlier, source, allowed=frozenset(), ignored=None):
    """The names `source` binds again or deletes, sorted, that the cells
    before it (`earlier`, their sources) bound, but for `allowed` (the
    exercise's answer and what its solution defines), names matching
    `ignored` (a compiled pattern: IPython's own, `_`, `In`...), and a name
    imported again as an earlier cell imported it (`import torch` once more:
    the same module, under the same name)."""
    before = {}
    for found in map(_bindings, earlier):
        for name, targets in found.items():
            before[name] = before.get(name, set()) | (targets if isinstance(targets, set) else {None})
    again = []
    for name, targets in _bindings(source).items():
        if name not in before or name in allowed or ignored is not None and ignored.fullmatch(name):
            continue
        if targets is None or targets != IN_PLACE and not targets <= before[name]:
            again.append(name)
    return sorted(again)
