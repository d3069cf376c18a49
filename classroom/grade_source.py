"""Signals, not proof: what an answer cell's source names that an answer has
no need of, read by the grader (classroom/grade.py) from the source as
submitted, in a bounded time: its tokens, not its execution.

    flags(source) -> ["uses ex (the exercise set: its solutions and hints)", ...]

Flagged: a name or attribute that reaches for a solution or a hint (`ex`,
`exercises`, `declared`, `solution`, `hint`), the lesson modules or the
checking code (`lessons`, `nb01`, `helpers.exercises`, `classroom`), or the
interpreter's insides (`ctypes`, `_getframe`, `gc`, `torch.library`); the
same names as a whole string ("ex", "helpers.exercises"). Comments are not
read. A source longer than MAX_SOURCE is flagged without being read.

What it cannot catch: a name built at run time (`globals()["e" + "x"]`,
`getattr(obj, "sol" + "ution")`), code that reads the collection's files
(`open(...)`), and anything else the tokens do not show; docs/teaching.md says so."""

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
DOTTED = re.compile(r"[A-Za-z_][\w.]*")


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


def flags(source):
    """Why an answer cell's source is flagged ([] when it is not)."""
    if len(source) > MAX_SOURCE:
        return [f"the answer cell is longer than {MAX_SOURCE:,} characters, and was not read"]
    names, strings = _tokens(source)
    found = [_named(name) for name in names]
    for literal in strings:
        text = re.sub(r"^[A-Za-z]*(['\"]{1,3})(.*)\1$", r"\2", literal, flags=re.S).strip()
        if DOTTED.fullmatch(text):
            found += [_named(part) for part in text.split(".")]
    unique = []
    for flag in found:
        if flag and flag not in unique:
            unique.append(flag)
    return unique[:6]
