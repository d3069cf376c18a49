"""The short form of errors (helpers/errors.py), which every notebook's set-up
cell turns on: the message first, the learner's own frames only, one line on
what was left out (%tb prints it all); ename and evalue as without it."""

import re

import pytest

from helpers.errors import NOT_RUN, full_tracebacks, in_force, short_form, short_tracebacks
from tools.build.nav import install_source

interactive = pytest.importorskip("IPython.core.interactiveshell")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SECOND = "Trying to backward through the graph a second time"
GRAPH = "x = torch.tensor(3.0, requires_grad=True)\ny = x ** 2\ny.backward()"


@pytest.fixture
def shell(monkeypatch):
    """IPython's shell recording what it shows as (ename, evalue, lines without colours); cleaned up after."""
    ipython = interactive.InteractiveShell.instance()
    names = set(ipython.user_ns)
    shown = []

    def record(etype, value, lines):
        shown.append((etype.__name__, str(value), [ANSI.sub("", line) for line in "\n".join(lines).split("\n")]))

    monkeypatch.setattr(ipython, "_showtraceback", record)
    ipython.shown = shown
    ipython.run = lambda source: ipython.run_cell(source, store_history=True)
    ipython.run("import torch")
    yield ipython
    full_tracebacks(ipython)
    ipython.set_custom_exc((), None)
    del ipython.shown, ipython.run
    for name in set(ipython.user_ns) - names:
        del ipython.user_ns[name]


def shown(shell, source):
    """What the shell shows for a cell that raises: (ename, evalue, lines)."""
    before = len(shell.shown)
    result = shell.run(source)
    assert result.error_in_exec is not None or result.error_before_exec is not None, f"{source!r} did not raise"
    assert len(shell.shown) == before + 1, "one error output per error"
    return shell.shown[-1]


def test_second_backward_shows_the_message_first_and_the_cell_only_and_percent_tb_all(shell):
    short_tracebacks(shell)
    shell.run(GRAPH)
    name, message, lines = shown(shell, "y.backward()")
    assert (name, message.split(" (")[0]) == ("RuntimeError", SECOND)
    assert lines[0] == f"RuntimeError: {message}", "the message comes first"
    assert re.fullmatch(r"  Cell In\[\d+\], line 1", lines[1]) and lines[2].strip() == "y.backward()"
    assert not [line for line in lines if re.search(r"site-packages|torch/|_tensor\.py|graph\.py", line)]
    assert lines[-1] == "(3 frames inside torch not shown: %tb prints the full traceback)"
    assert len(lines) == 4
    shell.run("%tb")
    full = "\n".join(shell.shown[-1][2])
    assert "Traceback (most recent call last)" in full and "torch/autograd/graph.py" in full


def test_functions_the_learner_defined_are_kept_in_call_order(shell):
    short_tracebacks(shell)
    shell.run(GRAPH)
    shell.run("def step(loss):\n    loss.backward()")
    _, _, lines = shown(shell, "# a second step\nstep(y)")
    places = [line.strip() for line in lines if line.startswith("  Cell")]
    assert [re.sub(r"In\[\d+\]", "In[N]", p) for p in places] == ["Cell In[N], line 2", "Cell In[N], line 2, in step"]
    assert lines[lines.index(next(line for line in lines if "in step" in line)) + 1].strip() == "loss.backward()"


def test_a_learners_function_called_by_torch_is_kept(shell):
    """A custom Function's backward: the learner's frame between torch's."""
    short_tracebacks(shell)
    shell.run("class Twice(torch.autograd.Function):\n"
              "    @staticmethod\n    def forward(ctx, x):\n        return 2 * x\n\n"
              "    @staticmethod\n    def backward(ctx, grad):\n        raise ValueError('my backward')")
    _, _, lines = shown(shell, "Twice.apply(torch.ones(1, requires_grad=True)).sum().backward()")
    assert lines[0] == "ValueError: my backward"
    assert any(line.endswith("in Twice.backward") for line in lines)
    assert "inside torch not shown" in lines[-1]


def test_the_helpers_frames_are_left_out(shell):
    short_tracebacks(shell)
    shell.run("from helpers import draw_graph")
    name, message, lines = shown(shell, "draw_graph(torch.ones(2))")
    assert name == "ValueError" and lines[0].startswith("ValueError: this tensor has no autograd graph")
    assert not [line for line in lines if "arguments.py" in line or "checked" in line]
    assert lines[-1] == "(1 frame inside the helpers not shown: %tb prints the full traceback)"


def test_chained_errors_read_from_the_last_raised(shell):
    short_tracebacks(shell)
    _, _, caused = shown(shell, "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    raise ValueError('outer') from e")
    assert caused[0] == "ValueError: outer"
    assert "Caused by: ZeroDivisionError: division by zero" in caused
    _, _, handling = shown(shell, "try:\n    {}['key']\nexcept KeyError:\n    undefined_name")
    assert handling[0] == "NameError: name 'undefined_name' is not defined"
    assert "While handling: KeyError: 'key'" in handling
    _, _, hidden = shown(shell, "try:\n    {}['key']\nexcept KeyError:\n    raise ValueError('alone') from None")
    assert not [line for line in hidden if "KeyError" in line]


def test_recursion_is_shown_once_with_a_count(shell):
    short_tracebacks(shell)
    shell.run("def down(n):\n    return down(n - 1) if n else 1 / 0")
    _, _, lines = shown(shell, "down(10)")
    assert sum("in down" in line for line in lines) == 3
    assert "  [the frame above repeated 8 more times]" in lines


@pytest.mark.filterwarnings("ignore:To exit")
@pytest.mark.parametrize("source", ["raise KeyboardInterrupt", "raise SystemExit(3)", "def broken(:\n    pass"])
def test_interrupts_exits_and_syntax_errors_are_shown_as_ipython_shows_them(shell, source):
    def without_numbers(what):
        return [re.sub(r"In\[\d+\]|ipython-input-\d+", "N", part) for part in (what[0], what[1], *what[2])]

    usual = without_numbers(shown(shell, source))
    short_tracebacks(shell)
    assert in_force(shell)
    assert without_numbers(shown(shell, source)) == usual


def test_colours_only_the_errors_name_and_none_without_colours(shell, monkeypatch):
    short_tracebacks(shell)
    coloured = []
    monkeypatch.setattr(shell, "_showtraceback", lambda etype, value, lines: coloured.append(lines))
    shell.run("1 / 0")
    assert ANSI.findall("\n".join(coloured[-1])) == ["\x1b[1;31m", "\x1b[0m"]
    monkeypatch.setattr(shell, "colors", "nocolor")
    shell.run("1 / 0")
    assert "\x1b" not in "\n".join(coloured[-1])


def test_a_handler_installed_before_keeps_its_errors(shell):
    """Colab's shell has its own handler for ImportError."""
    def colabs(self, etype, value, tb, tb_offset=None):
        self._showtraceback(etype, value, ["its own form"])

    shell.set_custom_exc((ImportError,), colabs)
    short_tracebacks(shell)
    assert shown(shell, "import no_such_module_here")[2] == ["its own form"]
    assert shown(shell, "1 / 0")[2][0] == "ZeroDivisionError: division by zero"
    full_tracebacks(shell)
    assert shell.custom_exceptions == (ImportError,)
    assert shown(shell, "import no_such_module_here")[2] == ["its own form"]


def test_the_set_up_cell_turns_it_on_whichever_way_it_installs(shell):
    """Its last line, `%reload_ext helpers.standalone`, runs in JupyterLab and Colab, installed or not."""
    last = install_source().splitlines()[-1]
    assert last.startswith("%reload_ext ")
    full_tracebacks(shell)
    assert not in_force(shell)
    handlers = []
    for _ in range(2):
        assert shell.run(last).success
        assert in_force(shell)
        handlers.append(shell.CustomTB)
    assert handlers[0] is handlers[1], "installed twice"
    full_tracebacks(shell)
    assert not in_force(shell)
    assert "Traceback (most recent call last)" in "\n".join(shown(shell, "1 / 0")[2])


def test_a_name_not_defined_says_how_to_run_the_cells_above():
    """After a kernel restart a lesson's names are gone while its outputs stay."""
    with pytest.raises(NameError) as raised:
        exec("undefined_in_this_kernel + 1", {})
    lines = short_form(raised.value)
    assert lines[-1] == NOT_RUN and "Run All Above Selected Cell" in NOT_RUN
    for written, right in (("true", "True"), ("FALSE", "False"), ("null", "None")):
        with pytest.raises(NameError) as raised:
            exec(f"answer = {written}", {})
        assert short_form(raised.value)[-1] == f"(Python spells it {right}, with a capital letter)"
    with pytest.raises(ValueError) as raised:
        exec("int('x')", {})
    assert NOT_RUN not in short_form(raised.value)
