"""Signals, not proof: `flags(source)` says what an answer cell names that an
answer has no need of, read from its tokens (not run; comments skipped) in a
bounded time: a solution or a hint (`ex`, `exercises`, `solution`, `hint`),
the lesson modules, the checking code, ctypes, `_getframe`, gc,
`torch.library`, as names, attributes, strings or a path's parts; torch's
attributes set or deleted, a subclass of a Tensor. It cannot see a name built
at run time (`globals()["e" + "x"]`): docs/teaching.md, "What is flagged"."""

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
    why = WHY.get(word) or ("a lesson module, which holds the solutions" if LESSON.fullmatch(word) else None)
    return f"uses {word} ({why})" if why else None


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
                isinstance(t, ast.Attribute) and ast.unparse(t).startswith("torch.") for t in targets):
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
    return [flag for flag in dict.fromkeys(found) if flag][:6]
