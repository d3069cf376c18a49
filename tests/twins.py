"""Find code written twice: a function or class that a notebook defines and
helpers/ or tests/ define again under the same name, or two definitions
anywhere with the same body under any names. Every .py file under helpers/,
tests/ and tools/ is read, at any depth. Each lesson function has one
source (CONTRIBUTING.md, "One source")."""

import ast
from pathlib import Path

from tools.build.nav import INSTALL
from tools.testkit.lessons import notebook_source

ROOT = Path(__file__).resolve().parent.parent
DEFINITION = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Bodies smaller than this many AST nodes (`return self.text`) are too
# small to call a copy.
SMALLEST = 25
PACKAGES = ("helpers", "tests", "tools")


def project_sources(root=ROOT):
    """(place, kind, Python text) for every module and notebook of the
    project: every .py file under helpers/, tests/ and tools/, at any depth."""
    found = [(str(p.relative_to(root)), "notebook", notebook_source(p, {INSTALL}))
             for p in sorted(root.glob("notebooks/*.ipynb"))]
    for folder in PACKAGES:
        found += [(str(p.relative_to(root)), folder, p.read_text()) for p in sorted((root / folder).rglob("*.py"))]
    return found


def _shape(node):
    """The definition without its name and docstring, as comparable text
    (each of its other fields dumped as it is: nothing is copied)."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    parts = [type(node).__name__]
    for field, value in ast.iter_fields(node):
        if field == "name":
            continue
        items = (body or [ast.Pass()]) if field == "body" else value if isinstance(value, list) else [value]
        parts.append(field + "=" + ",".join(ast.dump(item, annotate_fields=False, include_attributes=False)
                                            if isinstance(item, ast.AST) else repr(item) for item in items))
    return "|".join(parts)


def definitions(source, place):
    """(place, name, shape, size) for every function and class in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, DEFINITION):
            size = sum(1 for _ in ast.walk(node))
            found.append((place, node.name, _shape(node), size))
    return found


def twins(sources):
    """Pairs of definitions that are the same code in two places, as lines
    of text; empty when every definition has one source."""
    defs = {place: definitions(text, place) for place, _, text in sources}
    kinds = {place: kind for place, kind, _ in sources}
    top = {place: {name for name, *_ in _top_level(text)} for place, _, text in sources}
    found = []
    for place, names in top.items():
        if kinds[place] != "notebook":
            continue
        for other, other_names in top.items():
            if kinds[other] in ("helpers", "tests"):
                found += [f"{name}: defined in {place} and again in {other}" for name in sorted(names & other_names)]
    shapes = {}
    for place, items in defs.items():
        for _, name, shape, size in items:
            if size >= SMALLEST:
                shapes.setdefault(shape, []).append((place, name))
    for same in shapes.values():
        places = sorted({place for place, _ in same})
        if len(places) > 1:
            found.append("same body: " + ", ".join(f"{name} in {place}" for place, name in sorted(same)))
    return found


def _top_level(source):
    return [(node.name, node) for node in ast.parse(source).body if isinstance(node, DEFINITION)]
