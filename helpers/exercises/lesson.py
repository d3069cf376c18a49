"""The lesson functions a check uses, as the stored notebook defines them, so a check's truth does
not follow the learner's edits."""

import ast
import inspect
import json
import linecache
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FunctionType
from typing import Any


def _stored_folder() -> Path:
    """The repository's notebooks/ in a checkout, else the installed package's copy."""
    here = Path(__file__).resolve().parent.parent
    checkout = here.parent / "notebooks"
    return checkout if (checkout / "00-index.ipynb").is_file() else here / "stored_notebooks"


NOTEBOOKS = _stored_folder()
DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)


def stored_definitions(notebook: str, folder: Path = NOTEBOOKS) -> dict[str, Any]:
    """The functions and classes notebook `notebook` defines in the stored copy (no answer slots)."""
    found = sorted(folder.glob(f"{notebook}-*.ipynb"))
    cells = json.loads(found[0].read_text(encoding="utf-8"))["cells"] if len(found) == 1 else []
    scope: dict[str, Any] = {"__name__": f"stored_notebook_{notebook}"}
    for number, cell in enumerate(cells):
        # the tag is tools.notebooks.SLOT, spelt out: helpers never import tools (a learner's tools/ may come first)
        if cell.get("cell_type") == "code" and "answer-slot" not in cell.get("metadata", {}).get("tags", []):
            # IPython's magics and shell lines made `pass`: an `if` whose body is one still parses
            lines = "".join(cell.get("source", "")).splitlines()
            source = "\n".join(line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!"))
                               else line for line in lines)
            _define(source, f"<stored notebook {found[0].name}, cell {number}>", scope)
    return {name: value for name, value in scope.items() if isinstance(value, (FunctionType, type))}


def lesson_function(notebook: str, name: str, folder: Path = NOTEBOOKS) -> Any:
    """The function or class `name` that the stored notebook `notebook` defines."""
    number = notebook.split("-")[0]
    if not sorted(folder.glob(f"{number}-*.ipynb")):
        from ..project import pip_source

        raise FileNotFoundError(
            f"the collection's stored notebook {notebook} is not in {folder}: this copy of helpers was not "
            f"installed whole. Run the notebooks from the repository (make lab), or install the collection: "
            f"pip install '{pip_source()}'")
    found = stored_definitions(number, folder)
    if name not in found:
        raise LookupError(f"{notebook}.ipynb defines no function or class {name!r}")
    return found[name]


def _define(source: str, filename: str, scope: dict[str, Any]) -> None:
    """Run the imports and definitions of `source` in `scope`, each on its own."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    for node in body:
        if isinstance(node, DEFINITIONS):
            try:
                exec(compile(ast.Module([node], type_ignores=[]), filename, "exec"), scope)
            except Exception:       # an import this machine lacks: the definitions after it still count
                continue


def fingerprint(value: Any) -> object:
    """What a function or class does, as comparable data (its syntax tree, or its bytecode)."""
    if isinstance(value, type):
        members = {k: fingerprint(v) for k, v in vars(value).items()
                   if callable(v) or isinstance(v, (staticmethod, classmethod, property))
                   or not (k.startswith("__") and k.endswith("__"))}
        return ("class", value.__name__, tuple(b.__name__ for b in value.__bases__), members)
    inner = getattr(value, "__func__", None) or getattr(value, "fget", None)
    if inner is not None:
        return (type(value).__name__, fingerprint(inner))
    if isinstance(value, FunctionType):
        try:
            return ast.dump(ast.parse(textwrap.dedent(inspect.getsource(value))))
        except (OSError, TypeError, SyntaxError):    # no source to read (torch.compile clears linecache)
            return (_code(value.__code__), repr(value.__defaults__), repr(value.__kwdefaults__))
    return repr(value)


def _code(code: CodeType) -> object:
    consts = tuple(_code(c) if isinstance(c, CodeType) else c for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars)


@dataclass(frozen=True)
class Resolved:
    """The lesson names a check needs: the values, the changed ones, the missing ones."""

    values: dict[str, Any]
    changed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def resolve(needs: tuple[str, ...], learner: Mapping[str, Any], stored: Mapping[str, Any]) -> Resolved:
    """Each needed name from the stored notebook, or the learner's when it is the same code."""
    values, changed, missing = {}, [], []
    for name in needs:
        mine, theirs = learner.get(name), stored.get(name)
        if theirs is None and mine is None:
            missing.append(name)
        elif theirs is None or (mine is not None and fingerprint(mine) == fingerprint(theirs)):
            values[name] = mine
        else:
            values[name] = theirs
            changed += [name] if mine is not None else []
    return Resolved(values, tuple(changed), tuple(missing))


def rebound(answer: Any, values: Mapping[str, Any]) -> Any:
    """The learner's function, seeing `values` in place of its globals' versions of them."""
    if not isinstance(answer, FunctionType) or all(answer.__globals__.get(k, v) is v for k, v in values.items()):
        return answer
    copy = FunctionType(answer.__code__, {**answer.__globals__, **values}, answer.__name__, answer.__defaults__,
                        answer.__closure__)
    copy.__kwdefaults__ = answer.__kwdefaults__
    return copy
