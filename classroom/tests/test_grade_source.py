"""What the grader reads from an answer's source, outside the kernel
(classroom/grade_source.py): every way into the kernel's machinery
that the hostile corpus holds is flagged, in any surrounding code the
generated layer makes; no solution or right answer of the collection is.
The names a cell binds again or deletes are read from its source too, and
every name that generated code changes when it runs is among them."""

import ast

import nbformat
import pytest
from answers import RIGHT, RIGHT_SAYING
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import lessons
from helpers.exercises import declared
from classroom import grade
from classroom.grade_probe import IPYTHON
from classroom.grade_source import binds, lesson_bindings, reaches, rebinds
from tools.notebooks import lesson_paths

# One line each: what a submission wrote to reach past the lesson (the attacks of docs/teaching.md's table)
HOSTILE = [
    "from functools import singledispatch\n@singledispatch\ndef f(x):\n    pass\n"
    "def g(x: '[check := (lambda *a: True), int][1]'):\n    pass\nf.register(g)",
    "def g(x: '[g2 := glo' + 'bals(), g2.pop(\"torch\"), int][2]') -> int:\n    pass",
    "def g(x) -> list['int']:\n    pass",
    "import enum\n@enum.global_enum\nclass E(enum.Enum):\n    check = 1",
    "from enum import global_enum",
    "get_ipython().display_pub.publish = print",
    "ip = get_ipython()",
    "import sys\nsys.modules['torch'].allclose = lambda *a, **k: True",
    "sys.modules['helpers.exercises.judges'].same = lambda *a: True",
    "import os\nos.kill(1, 9)",
    "os.write(1, b'forged')",
    "open('/proc/1/fd/1', 'w').write('{}')",
    "__import__('os').system('true')",
    "().__class__.__base__.__subclasses__()",
    "type(x).__mro__",
    "f = lambda: 0\ng = f.__globals__",
    "(lambda: 0).__code__",
    "torch.allclose = lambda *a, **k: True",
    "del torch.allclose",
    "import torch as t\nt.equal = lambda *a: True",
    "setattr(torch, 'allclose', None)",
    "getattr(torch, 'sys').modules",
    "torch.sys.modules",
    "torch.os.getpid()",
    "ex._set = None",
    "ex.check(1)",
    "global answer_2\nanswer_2 = True",
    "def f():\n    nonlocal y",
    "%time x = 1",
    "!ls /proc",
    "exec('answer_1 = True')",
    "eval('1')",
    "compile('1', 'x', 'eval')",
    "import importlib\nimportlib.import_module('gc')",
    "import gc\ngc.get_objects()",
    "import ctypes",
    "import threading",
    "import subprocess",
    "from helpers.exercises import session",
    "from . import x",
    "from IPython import get_ipython",
    "import inspect\ninspect.currentframe().f_back",
    "vars()['answer_1'] = True",
    "globals()['answer_1'] = True",
    "breakpoint()",
    "x = '__globals__'",
    "from torch import __builtins__",
    "[t for t in ().__class__.__bases__]",
    "answer_1 = (lambda: 0).__builtins__",
    "answer_1 = display",
    # code the source does not show: a pickle, C++, a format string or an attribute path in text
    "torch.load(io.BytesIO(data), weights_only=False)",
    "numpy.load(path, allow_pickle=True)",
    "torch.utils.cpp_extension.load_inline('m', 'int f() { return 0; }')",
    "numpy.ctypeslib.ctypes.pythonapi",
    "from numpy import ctypeslib",
    "from torch import _C",
    "import string\nstring.Formatter().get_field('0.__globals__', [f], {})",
    "import operator\noperator.attrgetter('gi_frame.f_back')(g)",
    "import typing\ntyping.get_type_hints(f)",
    "x = 'get_ipython().display_pub'",
    "torch.multiprocessing.spawn(f)",
    # a reviewer's bypasses of the first version, each of which reached what the comment says
    "obj = widgets.get_ipython()",                                                      # the shell
    "import string\nstring.Formatter().get_field('0.display' + '_pub', (widgets.get_ipython(),), {})[0]",
    "match draw_graph:\n    case object(__globals__=g):\n        obj = g",               # a module's globals
    "match torch:\n    case object(sys=s):\n        obj = s",
    "match torch:\n    case object(sys=object(modules=m)):\n        obj = m['helpers.exercises']",
    "match draw_graph:\n    case object(__builtins__=b):\n        obj = b",
    "match ():\n    case object(__class__=object(__base__=o)):\n        obj = o",
    "match widgets:\n    case object(get_ipython=obj):\n        pass",
    "import random\nobj = random._os",                                                   # os
    "import collections\nobj = collections._sys",
    "import collections\ns = collections._sys\nobj = s._getframe()",
    "f = torch.fx.graph_module\nobj = f._forward_from_src",                              # exec of text
    "obj = torch.inspect.currentframe()",
    "obj = torch.library.inspect.stack()[0].frame",
    "import dataclasses\nobj = dataclasses.inspect.currentframe()",
    "import enum\nobj = enum.bltns",                                                     # builtins
    "obj = torch.cuda.graphs.gc",
    "obj = torch.serialization.pickle",
    "obj = torch.inspect.getmodule(draw_graph)",
    "from torch.cuda.graphs import gc as obj",
    "from enum import bltns as obj",
    "import enum\nenum.bltns.exec('import os; obj = os', d := {})\nobj = d['obj']",
    "b = enum.bltns; b.eval('g' + 'et_ipython()')",
    "import typing\nd = {}\n"
    "typing.ForwardRef('(m := ' + '_'*2 + 'import' + '_'*2 + '(\"os\")) and int')._evaluate(None, d, frozenset())",
    "import string\nobj = string.Formatter().get_field('0.' + '_'*2 + 'globals' + '_'*2, (draw_graph,), {})[0]",
    "from operator import *\nobj = attrgetter('_'*2 + 'globals' + '_'*2)(draw_graph)",
    "t = torch\nt.allclose = lambda *a, **k: True",                                     # torch patched
    "T = torch.Tensor\nT.item = lambda self: 42",
    "(t := torch).manual_seed = print",
    "import functools\nclass S: allclose = lambda *a, **k: True\n"
    "functools.update_wrapper(torch, S, assigned=('allclose',), updated=())",
    # numpy's own pickle readers, which run the code a pickle names (an object array saved with np.save)
    "import numpy as np\nnp.lib.format.read_array(io.BytesIO(data), allow_pickle=True)",
    "import numpy\nnumpy.lib.format.read_array(f, None, True)",
    "from numpy.lib.format import read_array",
    "import numpy\nfmt = numpy.lib.format\nobj = fmt.read_array",
    "import numpy\nnumpy.lib.npyio.NpzFile(f, False, True)",
    "import numpy\nnumpy.lib.format.open_memmap(path)",
    "reader(f, allow_pickle=True)",
    "reader(f, **{'allow_pickle': True})",
    # what Python or torch calls unseen: a method with a dunder name
    "class A(int):\n    def __eq__(self, other):\n        return True\nanswer_1 = A(0)",
    "class M(torch.overrides.TorchFunctionMode):\n    def __torch_function__(self, func, types, args=(), kwargs=None):"
    "\n        return True\nkept = M()",
    "class D(TorchDispatchMode):\n    def __torch_dispatch__(self, f, t, a=(), k=None):"
    "\n        return f(*a)",
    "class F(float):\n    async def __aenter__(self):\n        return self",
]
SAFE = ["answer_1 = True", "answer_3 = 8.0", "y = x * 2\nanswer_2 = y.requires_grad", "answer_5 = 'b'",
        "import math\nanswer_4 = math.floor(3.5)", "from fractions import Fraction\nanswer_3 = Fraction(8)",
        "def survives(x):\n    return (x * 2).sum()\n", "a.grad = None", "answer_1 = len([1, 2])",
        "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n",
        "y = x.clone()\ny.retain_grad()\nanswer_2 = y.grad_fn.next_functions[0][0]._saved_self is None"]


def stored_names(notebook):
    nb = nbformat.read(next(p for p in lesson_paths() if p.name.startswith(notebook)), as_version=4)
    return lesson_bindings([c.source for c in nb.cells if c.cell_type == "code"
                         and "answer-slot" not in c.metadata.get("tags", [])])


NAMES = stored_names("06")


@pytest.mark.parametrize("source", HOSTILE)
def test_every_way_into_the_kernel_s_machinery_is_flagged(source):
    assert reaches(source, NAMES), f"not flagged: {source!r}"


@pytest.mark.parametrize("source", SAFE)
def test_code_that_only_computes_is_not_flagged(source):
    assert reaches(source, NAMES) == []


def _sources(notebook, number):
    found = [declared(notebook)[number - 1].solution]
    for entries in (RIGHT.get((notebook, number), ()), RIGHT_SAYING.get((notebook, number), ())):
        found += [e if isinstance(e, str) else e[0] for e in entries]
    return [s for s in found if isinstance(s, str)]


@pytest.mark.parametrize("notebook", lessons.numbers())
def test_no_solution_or_right_answer_of_the_collection_is_flagged(notebook):
    names = stored_names(notebook)
    for exercise in declared(notebook):
        for source in _sources(notebook, exercise.number):
            assert reaches(source, names) == [], (notebook, exercise.number, source)


SAFE_LINES = st.sampled_from(["y = x * 2", "z = y.sum()", "n = len([1, 2, 3])", "w = torch.ones(3)",
                              "for i in range(3):\n    z = z + i", "if n > 2:\n    y = y * 3", "q = y.grad_fn",
                              "import math", "v = math.sqrt(2.0)", "print(y)"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=st.lists(SAFE_LINES, max_size=4), attack=st.sampled_from(HOSTILE), after=st.lists(SAFE_LINES, max_size=4),
       indent=st.booleans())
def test_an_attack_is_flagged_wherever_it_sits_in_the_cell(before, attack, after, indent):
    body = "\n".join([*before, attack, *after])
    if indent and not attack.startswith(("%", "!", "from .", "global")):      # inside a function the answer defines
        body = "def survives(x):\n" + "\n".join("    " + line for line in body.splitlines()) + "\n    return x"
    assert reaches(body, NAMES), body


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(SAFE_LINES, max_size=8))
def test_safe_code_stays_unflagged_however_it_is_combined(lines):
    assert reaches("\n".join(lines), NAMES) == []


def test_a_deep_cell_is_read_without_raising():
    for source in ("x" + ".a" * 5000 + " = 1", "y = " + "(" * 5000 + "1" + ")" * 5000, "[" * 300 + "]" * 300):
        assert isinstance(reaches(source, NAMES), list)


@settings(max_examples=300, deadline=None)
@given(source=st.text(max_size=200) | st.none() | st.integers())
def test_any_source_gives_a_list_of_texts_and_never_raises(source):
    found = reaches(source, NAMES)
    assert isinstance(found, list) and all(isinstance(f, str) for f in found)


def test_the_runner_reads_what_a_cell_left_behind_from_outside():
    """The other half of the flags made outside the kernel: classroom/grade_run.py
    reads the kernel's process in /proc before and after an answer cell. Shown on a child
    of this process: a process it started, a socket and a file it left open, a native
    library it loaded are each named; between two readings with nothing done, nothing is."""
    import ctypes.util
    import os
    import signal
    import subprocess
    import sys
    import tempfile

    from classroom.grade_run import held, left_behind

    library = ctypes.util.find_library("bz2") or ctypes.util.find_library("z")
    with tempfile.NamedTemporaryFile() as kept:
        code = ("import ctypes, socket, subprocess\nprint('quiet', flush=True); input()\n"
                f"ctypes.CDLL({library!r}); f = open({kept.name!r}); s = socket.socket()\n"
                "p = subprocess.Popen(['sleep', '30'])\n"
                # Popen returns once exec has begun; the new command line is set a moment
                # later, and until then /proc names the process after its parent.
                "while not open(f'/proc/{p.pid}/cmdline', 'rb').read().startswith(b'sleep'): pass\n"
                "print('ready', flush=True); input()")
        runner = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            assert runner.stdout.readline().strip() == "quiet"
            quiet = held(runner.pid)
            assert left_behind(quiet, held(runner.pid)) == []
            runner.stdin.write("\n")
            runner.stdin.flush()
            assert runner.stdout.readline().strip() == "ready"
            found = left_behind(quiet, held(runner.pid))
        finally:
            for pid in held(runner.pid)[0]:
                os.kill(int(pid), signal.SIGKILL)
            runner.stdin.close()
            runner.wait(timeout=30)
    assert "left a process running: sleep 30" in found, found
    assert "left 1 more socket(s) open" in found, found
    assert f"left a file open: {kept.name}" in found, found
    assert any(f.startswith("loaded a native library:") and library.split(".so")[0] in f for f in found), found


# ----- the names a cell binds, read from its source: what running it changes is among them -----

POOL = ("a", "b", "check", "torch")
STATEMENTS = [
    "{n} = 1", "{n}, *{m} = [1, 2, 3]", "{n} += 1", "{n}: int = 2", "del {n}", "import math as {n}",
    "from math import pi as {n}", "def {n}():\n    return 1", "class {n}:\n    pass", "for {n} in range(2):\n    pass",
    "[{n} := 1 for _ in range(1)]", "if ({n} := 3):\n    pass",
    "try:\n    1 / 0\nexcept ZeroDivisionError as {n}:\n    pass",
    "match [1, 2]:\n    case [{n}, *{m}]:\n        pass", "def _set():\n    global {n}\n    {n} = 5\n_set()",
    "with open('/dev/null') as {n}:\n    pass", "{n} = [{m} for {m} in range(2)]",
    "lambda: ({n} := 1)", "{n} == {m}", "print({n})", "{n}: float", "def _bad(q, q):\n    pass",
]


@st.composite
def cells(draw):
    lines = []
    for _ in range(draw(st.integers(1, 5))):
        statement = draw(st.sampled_from(STATEMENTS)).format(n=draw(st.sampled_from(POOL)),
                                                             m=draw(st.sampled_from(POOL)))
        if draw(st.booleans()):               # inside a block that runs
            statement = "if True:\n" + "\n".join("    " + line for line in statement.splitlines())
        lines.append(statement)
    return "\n".join(lines)


@settings(max_examples=300, deadline=None)
@given(source=cells())
def test_every_name_a_cell_changes_when_run_is_read_from_its_source(source):
    namespace = {name: object() for name in POOL}
    before = dict(namespace)
    for statement in ast.parse(source).body:   # as IPython runs a cell: one statement at a time, to the first error
        try:
            exec(compile(ast.Module([statement], []), "<cell>", "exec"), namespace)
        except Exception:                      # noqa: BLE001 (what ran before it changed what it changed)
            break
    changed = {name for name in POOL if name not in namespace or namespace[name] is not before[name]}
    changed |= {name for name in namespace if name not in before and name != "__builtins__"}
    assert changed <= binds(source), (source, changed - binds(source))


def test_a_cell_that_does_not_compile_binds_nothing():
    assert binds("x = (") == binds(None) == binds("x" + " = (" * 2000 + ")" * 2000) & set() == set()


@pytest.mark.parametrize("notebook", lessons.numbers())
def test_no_solution_or_right_answer_binds_again_a_name_bound_before_it(notebook):
    stored = nbformat.read(next(p for p in lesson_paths() if p.name.startswith(notebook)), as_version=4)
    slot_ids = [c["id"] for c in stored.cells if grade.SLOT in grade.tags(c)]
    for exercise in declared(notebook):
        for source in _sources(notebook, exercise.number):
            answers = [None] * len(slot_ids)
            answers[exercise.number - 1] = source
            before = grade._code_before(stored, slot_ids, answers)[slot_ids[exercise.number - 1]]
            allowed = {exercise.answer_name} | binds(exercise.solution)
            assert rebinds(before, source, allowed, IPYTHON) == [], (notebook, exercise.number, source)


def test_what_binds_again_a_lesson_name_is_named():
    assert rebinds(["x = 1\ndef check(y):\n    return y"], "check = lambda y: True\ndel x\nz = 2") == ["check", "x"]
    assert rebinds(["x = 1"], "x = 2", {"x"}) == []
    assert rebinds(["_ = 1\nIn = []"], "_ = 2\nIn = 3", ignored=IPYTHON) == []


def test_the_statements_before_one_that_does_not_compile_still_bind():
    assert "check" in binds("check = lambda *a: True\ndef g(a, a):\n    pass")
    assert rebinds(["check = 1"], "check = 2\ndef g(a, a):\n    pass") == ["check"]


def test_what_changes_an_object_in_place_is_left_to_the_probe():
    assert rebinds(["w = torch.zeros(1)"], "w += 1\nif True:\n    w *= 2") == []
    assert rebinds(["y: float = 1.0"], "z: float = 2.0") == []
    assert rebinds(["lr: float = 0.1"], "lr: float") == []
    assert rebinds(["w = 1"], "w += 1\nw = 3") == ["w"]
    assert rebinds(["n = 1"], "def f():\n    global n\n    n += 1") == ["n"]


def test_a_module_imported_again_as_before_is_not_binding_a_name_again():
    lesson = ["import torch\nimport torch.nn as nn\nfrom math import pi\nimport numpy as np"]
    assert rebinds(lesson, "import torch\nimport torch.nn as nn\nfrom math import pi\nimport numpy as np") == []
    assert rebinds(lesson, "import torch.autograd\nif True:\n    import numpy as np") == []
    assert rebinds(lesson, "import math as torch") == ["torch"]
    assert rebinds(lesson, "from math import e as pi") == ["pi"]
    assert rebinds(lesson, "import torch\ntorch = None") == ["torch"]
    assert rebinds(lesson, "def f():\n    global nn\n    import torch.nn as nn") == ["nn"]
    assert rebinds(["np = 1"], "import numpy as np") == ["np"]
