"""Signals, not proof: what an answer cell's source names that an answer has
no need of, read by the grader (classroom/grade.py) from the source as
submitted, in a bounded time: its tokens, not its execution.

    flags(source) -> ["uses ex (the exercise set: its solutions and hints)", ...]

Flagged: a name or attribute that reaches for a solution or a hint (`ex`,
`exercises`, `declared`, `solution`, `hint`), the lesson modules or the
checking code (`lessons`, `nb01`, `helpers.exercises`, `classroom`), or the
interpreter's insides (`ctypes`, `_getframe`, `gc`, `torch.library`); the
same names as a whole string or a path's parts ("ex", "helpers.exercises",
".../helpers/lessons/nb06.py"); an attribute of torch set or deleted, a
subclass of a Tensor. Comments are not read. A source longer than
MAX_SOURCE is flagged without being read.

What it cannot catch: a name built at run time (`globals()["e" + "x"]`,
`getattr(obj, "sol" + "ution")`), code that reads the collection's files
(`open(...)`), and anything else the tokens do not show; docs/teaching.md says so."""

import ast
import io
import re
import tokenize

MAX_SOURCE = 100_000          # characters of an answer cell read (the longest solution is under 2,000)
SOLUTIONS = "the exercise set: its solutions and hints"
WHY = {"ex": SOLUTIONS, "exercises": SOLUTIONS, "declared": SOLUTIONS, "solution": SOLUTIONS, "hint": SOLUTIONS,
       "_exercise": SOLUTIONS, "lessons": "the lesson modules, which hold the solutions",
       "classroom": "the grader", "ctypes": "the interpreter's memory", "_getframe": "the callers' frames",
       "gc": "every object of the kernel", "library": "torch.library: torch's operators redefined"}
LESSON = re.compile(r"nb\d\d")
PATH = re.compile(r"[\w./\\-]+")          # a dotted name or a file's path, whose parts are read as names


def _named(word):
    if word in WHY:
        return f"uses {word} ({WHY[word]})"
    if LESSON.fullmatch(word):
        return f"uses {word} (a lesson module, which holds the solutions)"
    return None


def _tokens(source):
    """(names, strings) in the source; every word of it where it does not tokenize."""
    names, strings = [], []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NAME:
                names.append(token.string)
            elif token.type == tokenize.STRING:
                strings.append(token.string)
    except (tokenize.TokenError, SyntaxError, ValueError):      # an unfinished string, a stray indent: every word
        return re.findall(r"[A-Za-z_]\w*", source), []
    return names, strings


def _root(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _torch_changed(source):
    """An attribute of torch set or deleted (`torch.Tensor.backward = ...`), a
    subclass of a Tensor: what makes the checks judge with another torch."""
    try:
        tree = ast.parse(source)
    except Exception:       # noqa: BLE001 (what does not compile changes nothing of torch: it does not run)
        return []
    found = []
    for node in ast.walk(tree):
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)) and any(
                isinstance(t, ast.Attribute) and _root(t) == "torch" for t in targets):
            found.append("changes torch (the checks would judge with the changed one)")
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b).endswith("Tensor") for b in node.bases):
            found.append("subclasses torch.Tensor (the checks would judge with its methods)")
    return found


def flags(source):
    """Why an answer cell's source is flagged ([] when it is not)."""
    if len(source) > MAX_SOURCE:
        return [f"the answer cell is longer than {MAX_SOURCE:,} characters, and was not read"]
    names, strings = _tokens(source)
    found = [_named(name) for name in names]
    for literal in strings:
        text = re.sub(r"^[A-Za-z]*(['\"]{1,3})(.*)\1$", r"\2", literal, flags=re.S).strip()
        if PATH.fullmatch(text):
            found += [_named(part) for part in re.split(r"[./\\]", text)]
    found += _torch_changed(source)
    unique = []
    for flag in found:
        if flag and flag not in unique:
            unique.append(flag)
    return unique[:6]
