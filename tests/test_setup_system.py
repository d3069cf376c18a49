"""`make lab`'s first step, tools/setup_system.sh, on machines made up of a
folder of programs on PATH: macOS and Windows shells without apt-get,
Debian with an apt-get that fails or installs. A missing Graphviz `dot` is a
warning with this system's install line (the notebooks still run, each
drawing in its text form); a Python without its venv module stops `make`."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "setup_system.sh"
STILL_RUN = "the notebooks still run, with every drawing in its text form"
# apt-get that records what it was asked, then fails (no network) or installs `dot`
APT_FAILS = 'echo "$@" >> "$APT_LOG"\nexit 100\n'
APT_INSTALLS = ('echo "$@" >> "$APT_LOG"\n'
                '[ "$1" = install ] && printf "#!/bin/sh\\n" > "$BIN/dot" && chmod +x "$BIN/dot"\n')
ROOT_USER, A_USER = "echo 0\n", "echo 1000\n"


def setup(tmp_path, system, user=ROOT_USER, apt=None, dot=False, venv=True, args=()):
    """Run the script with PATH holding only `env`, `chmod`, a `uname` that
    names `system`, an `id` that prints the user's id, and apt-get and dot
    when asked. Returns (exit status, stderr, what apt-get was asked)."""
    folder = tmp_path / "bin"
    folder.mkdir(parents=True)
    for name in ("env", "chmod"):
        (folder / name).symlink_to(shutil.which(name))
    fakes = {"uname": f"echo {system}\n", "id": user, "apt-get": apt, "dot": "" if dot else None}
    for name, body in fakes.items():
        if body is not None:
            (folder / name).write_text("#!/bin/sh\n" + body)
            (folder / name).chmod(0o755)
    shadow = tmp_path / "shadow"          # a Python without ensurepip, as Debian's is without python3-venv
    shadow.mkdir()
    (shadow / "ensurepip.py").write_text("raise ImportError('no ensurepip')\n")
    log = tmp_path / "apt.log"
    env = {"PATH": str(folder), "PYTHON": sys.executable, "HOME": str(tmp_path), "BIN": str(folder),
           "APT_LOG": str(log), **({} if venv else {"PYTHONPATH": str(shadow)})}
    done = subprocess.run(["/bin/sh", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stderr, log.read_text() if log.exists() else ""


# (system, user, apt-get, dot, venv module) -> (exit status, words said or "" for silence, words asked of apt-get)
CASES = {
    "macOS without dot warns with its install line": (("Darwin",), (0, ["brew install graphviz", STILL_RUN], "")),
    "Windows without dot warns with its install line": (("MINGW64_NT-10.0-19045",),
                                                        (0, ["conda install -c conda-forge graphviz", STILL_RUN], "")),
    "Debian installs graphviz, and goes on when it cannot": (
        ("Linux", ROOT_USER, APT_FAILS), (0, ["sudo apt-get install graphviz", STILL_RUN], "install -y -qq graphviz")),
    "Debian with dot installed says nothing": (("Linux", ROOT_USER, APT_INSTALLS), (0, "", "install -y -qq graphviz")),
    "without sudo it installs nothing and says how": (("Linux", A_USER, APT_FAILS),
                                                      (0, ["sudo apt-get install graphviz"], "")),
    "with everything there it is silent": (("Darwin", ROOT_USER, None, True), (0, "", "")),
    "a Python without venv stops make": (("Darwin", ROOT_USER, None, True, False),
                                         (1, ["venv module is missing", "brew install python"], "")),
    "on Debian a Python without venv stops make after apt-get fails": (
        ("Linux", ROOT_USER, APT_FAILS, False, False),
        (1, ["sudo apt-get install python3-venv"], "install -y -qq python3-venv graphviz")),
}


@pytest.mark.parametrize("case", CASES)
def test_the_set_up_on_each_kind_of_machine(tmp_path, case):
    machine, (status, words, asked) = CASES[case]
    got_status, said, got_asked = setup(tmp_path, *machine)
    assert got_status == status, said
    assert (all(word in said for word in words) if words else said == ""), said
    assert (asked in got_asked if asked else got_asked == ""), got_asked


@pytest.mark.parametrize("flag", ["--tests", "--browser"])
def test_for_the_tests_it_installs_a_compiler_for_inductor(tmp_path, flag):
    """make test's set-up (--tests) and make test-integration's (--browser):
    notebook 09 runs inductor once, which needs a C++ compiler; this PATH has
    none. make lab's set-up asks for none."""
    _, _, asked = setup(tmp_path, "Linux", apt=APT_INSTALLS, dot=True, args=(flag,))
    assert "g++" in asked.split(), asked
    _, _, asked = setup(tmp_path / "lab", "Linux", apt=APT_INSTALLS, dot=True)
    assert "g++" not in asked.split(), asked
