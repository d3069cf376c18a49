"""The grader's half inside the kernel, in the submission's sandbox
(classroom/grade_sandbox.py). classroom/grade.py puts calls to it into the
pristine notebook it runs: `Probe(...)` before the first answer slot
(before any of the learner's code), `before(k)` and `after(k)` around
answer slot k, `observe(k)` after slot k's check.

Nothing here decides a verdict. `observe(k)` displays what the grader
needs of the answer as plain data (helpers/exercises/observe.py: a value in
exact built-in types; for code, what it does on the check's inputs), and
the grader judges that data in its own process, which runs no learner
code. `after(k)` lists what slot k changed besides its answer: names of the
notebook rebound or deleted, anything imported from helpers, attributes of
helpers' modules, classes and functions, of the exercise objects, of the
builtins, of torch, torch's function and dispatch modes (a mode entered and
kept rewrites what every torch call returns, the probe's too) and the
kernel's display and hook machinery. New
names are noted but not flagged. Both display their data under MIME in
the grader's own cells; the same data anywhere else, or twice, is flagged
by the grader: the learner's code shares this process and can print it."""

import ast
import builtins
import re
import sys
import threading

from IPython import get_ipython
from IPython.display import display

from helpers.exercises import declared, exercises
from helpers.exercises.lesson import rebound, stored_definitions
from helpers.exercises.observe import observe

# The builtins this module calls, bound here when it is imported (before any answer runs): an
# answer that replaces one in `builtins` (isinstance returning True, say) is flagged, and must
# not change how the probe itself reads what changed.
OWN = ("callable", "dict", "getattr", "hasattr", "id", "isinstance", "list", "map", "repr", "set", "sorted", "str",
       "tuple", "type", "vars")
(callable, dict, getattr, hasattr, id, isinstance, list, map, repr, set, sorted, str,  # noqa: A001
 tuple, type, vars) = (builtins.__dict__[name] for name in OWN)

MIME = "application/vnd.computational-graphs.grade+json"
WATCHED = ("helpers", "classroom.grade_probe", "torch", "IPython.display", "IPython.core.display_functions")
SHALLOW = ("torch",)            # torch's own submodules are many: only the top module and Tensor
IPYTHON = re.compile(r"_|__|___|_i{1,3}|_i?\d+|_oh|_ih|_dh|In|Out|exit|quit|get_ipython")


def defined_by(code):
    """Top-level names a piece of code binds (assignments, def, class, import)."""
    names = set()
    for node in ast.parse(code).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} if target is not None else set()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _ident(value):
    """An object's identity; a bound method's is its function's and its
    object's (a new bound method object is made at every attribute access)."""
    if hasattr(value, "__func__") and hasattr(value, "__self__"):
        return id(value.__func__), id(value.__self__)
    return id(value)


def _ids(mapping):
    return {repr(k): _ident(v) for k, v in list(mapping.items())}


def _ours(obj):
    """Whether an object comes from the checking code (helpers or this probe)."""
    module = getattr(type(obj), "__module__", "") or ""
    return module.startswith(WATCHED[:2])


def _deep(obj, namespace):
    """An object's attributes and one level of their contents, by identity
    (the notebook's namespace, which the exercise sets hold, by identity only)."""
    state = {}
    for name, value in list(getattr(obj, "__dict__", {}).items()):
        if value is namespace:
            state[name] = (id(value), None)
            continue
        inner = _ids(value) if isinstance(value, dict) else [id(v) for v in value] if isinstance(
            value, (list, tuple)) else None
        state[name] = (id(value), inner)
    return state


def _code(value):
    code = getattr(value, "__code__", None)
    return (id(code), id(getattr(value, "__defaults__", None)), id(getattr(value, "__kwdefaults__", None)))


def _module_parts(name, module):
    """A watched module's names, and its own classes' and functions'."""
    parts = {f"module {name}": _ids(vars(module))}
    if name.startswith(SHALLOW):
        return parts
    for attr, value in list(vars(module).items()):
        if getattr(value, "__module__", None) != name:
            continue
        if isinstance(value, type):
            parts[f"class {name}.{attr}"] = _ids(vars(value))
            parts |= {f"function {name}.{attr}.{k}": _code(v) for k, v in vars(value).items() if callable(v)}
        elif callable(value):
            parts[f"function {name}.{attr}"] = _code(value)
    return parts


def _modes():
    """How many torch function modes and dispatch modes are active (None
    where this torch does not count them)."""
    counts = getattr(sys.modules.get("torch"), "_C", None)
    return {f"torch {kind} modes": getattr(counts, f"_len_torch_{kind}_stack", lambda: None)()
            for kind in ("function", "dispatch")}


def _machinery():
    """The kernel's display, hook and import machinery, by identity, and
    torch's modes, by number."""
    found = {"sys.displayhook": _ident(sys.displayhook), "sys.excepthook": _ident(sys.excepthook),
             "sys.stdout": id(sys.stdout), "tracing": _ident(sys.gettrace()), "profiling": _ident(sys.getprofile()),
             "sys.meta_path": [id(f) for f in sys.meta_path], "threads": threading.active_count(), **_modes()}
    shell = get_ipython()
    if shell is not None:            # None outside a kernel (the tests of this module)
        found |= {"display publisher": id(shell.display_pub), "display hook": id(shell.displayhook),
                  "IPython events": {k: [id(f) for f in v] for k, v in shell.events.callbacks.items()},
                  "input transformers": [id(f) for f in shell.input_transformers_post],
                  "AST transformers": [id(f) for f in shell.ast_transformers]}
    return found


def snapshot(namespace, extra=()):
    """Everything `after` compares, keyed by what it is."""
    names = {k: v for k, v in namespace.items() if not IPYTHON.fullmatch(k)}
    parts = {"names": {k: _ident(v) for k, v in names.items()}, "builtins": _ids(vars(builtins)),
             "machinery": _machinery(), "class torch.Tensor": _ids(vars(sys.modules["torch"].Tensor))}
    modules = {k: m for k, m in list(sys.modules.items()) if k.startswith(WATCHED) and m is not None}
    parts["sys.modules"] = {k: id(m) for k, m in modules.items() if not k.startswith(SHALLOW) or k == "torch"}
    for name, module in modules.items():
        if not name.startswith(SHALLOW) or name in ("torch", "torch.autograd"):
            parts |= _module_parts(name, module)
    objects = [(k, v) for k, v in names.items() if _ours(v) and not isinstance(v, Probe)] + list(extra)
    parts |= {f"object {k}": _deep(v, namespace) for k, v in objects}
    return parts, names


def changes(before, after, allowed):
    """(flagged, noted): what changed between two snapshots."""
    (old, old_names), (new, new_names) = before, after
    flagged = [f"deleted {k}" for k in old_names if k not in new_names]
    flagged += [f"rebound {k}" for k in old_names if k in new_names and k not in allowed
                and old["names"][k] != new["names"][k]]
    added = [k for k in new_names if k not in old_names and k not in allowed]
    flagged += [f"imported {k} from helpers" for k in added if _from_helpers(new_names[k])]
    noted = [f"defined {k}" for k in added if not _from_helpers(new_names[k])]
    for part in old.keys() & new.keys() - {"names"}:
        a, b = old[part], new[part]
        if a == b:
            continue
        keys = sorted(k for k in (a.keys() | b.keys() if isinstance(a, dict) else [None])
                      if k is None or a.get(k) != b.get(k))
        if part.startswith("module torch") or part == "sys.modules":   # lazy imports add names
            keys = [k for k in keys if k in a]
        if keys:
            flagged.append(f"changed {part}" + (f": {', '.join(map(str, keys[:5]))}" if keys != [None] else ""))
    return flagged, noted


def _from_helpers(value):
    module = getattr(value, "__name__", "") if type(value).__name__ == "module" else getattr(value, "__module__", "")
    return (module or "").startswith("helpers") or _ours(value)


class Probe:
    """The grader in the kernel for notebook `notebook` ('01'), made before
    the learner's code runs: a set of the exercises bound to the notebook's
    namespace (whose state the snapshots watch), the lesson names the checks
    use as the stored notebook defines them, and each exercise's allowed
    names."""

    def __init__(self, notebook, namespace):
        self._namespace = namespace
        self._exercises = declared(notebook)
        self._set = exercises(notebook, namespace)
        self._stored = stored_definitions(notebook)
        self._allowed = {e.number: {e.answer_name} | defined_by(e.solution) for e in self._exercises}
        self._before = None

    def before(self, number):
        self._before = snapshot(self._namespace, [("the grader's exercises", self._set)])

    def after(self, number):
        found = changes(self._before, snapshot(self._namespace, [("the grader's exercises", self._set)]),
                        self._allowed[number])
        display({MIME: {"role": "after", "exercise": number, "flagged": found[0], "noted": found[1]}}, raw=True)

    def observe(self, number):
        exercise = self._exercises[number - 1]
        if exercise.answer_name not in self._namespace:
            observed = None
        else:
            lesson = {name: self._stored.get(name, self._namespace.get(name)) for name in exercise.needs}
            observed = observe(exercise, rebound(self._namespace[exercise.answer_name], lesson), lesson)
        display({MIME: {"role": "observe", "exercise": number, "observation": observed}}, raw=True)
