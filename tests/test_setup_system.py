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


@pytest.mark.parametrize("system, install", [("Darwin", "brew install graphviz"),
                                             ("MINGW64_NT-10.0-19045", "conda install -c conda-forge graphviz")])
def test_on_macos_or_windows_without_dot_it_warns_with_the_install_line_and_goes_on(tmp_path, system, install):
    status, said, _ = setup(tmp_path, system)
    assert status == 0 and STILL_RUN in said and install in said, said


def test_on_debian_it_installs_graphviz_and_goes_on_when_it_cannot(tmp_path):
    status, said, asked = setup(tmp_path, "Linux", apt=APT_FAILS)
    assert "install -y -qq graphviz" in asked
    assert status == 0 and STILL_RUN in said and "sudo apt-get install graphviz" in said, said


def test_on_debian_an_installed_dot_needs_no_warning(tmp_path):
    status, said, asked = setup(tmp_path, "Linux", apt=APT_INSTALLS)
    assert status == 0 and "install -y -qq graphviz" in asked and said == ""


def test_without_sudo_it_installs_nothing_and_says_how(tmp_path):
    status, said, asked = setup(tmp_path, "Linux", user=A_USER, apt=APT_FAILS)
    assert status == 0 and asked == "" and "sudo apt-get install graphviz" in said, said


def test_with_everything_there_it_is_silent(tmp_path):
    assert setup(tmp_path, "Darwin", dot=True) == (0, "", "")


def test_a_python_without_venv_stops_make(tmp_path):
    status, said, _ = setup(tmp_path, "Darwin", dot=True, venv=False)
    assert status == 1 and "venv module is missing" in said and "brew install python" in said, said


def test_on_debian_a_python_without_venv_stops_make_after_apt_fails(tmp_path):
    status, said, asked = setup(tmp_path, "Linux", apt=APT_FAILS, venv=False)
    assert "install -y -qq python3-venv graphviz" in asked
    assert status == 1 and "sudo apt-get install python3-venv" in said, said


@pytest.mark.parametrize("flag", ["--tests", "--browser"])
def test_for_the_tests_it_installs_a_compiler_for_inductor(tmp_path, flag):
    """make test's set-up (--tests) and make test-integration's (--browser):
    notebook 09 runs inductor once, which needs a C++ compiler; this PATH has
    none. make lab's set-up asks for none."""
    _, _, asked = setup(tmp_path, "Linux", apt=APT_INSTALLS, dot=True, args=(flag,))
    assert "g++" in asked.split(), asked
    _, _, asked = setup(tmp_path / "lab", "Linux", apt=APT_INSTALLS, dot=True)
    assert "g++" not in asked.split(), asked
