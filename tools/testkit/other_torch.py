"""`make test-torch`: make test's selection (less SAME_ON_ANY_TORCH) run by a
second torch, 2.14.1's CUDA build by default, in build/torch-<version>/, a venv
reading .venv's packages behind its own torch (other_venv),
with nbval's differences sorted by tests/conftest.py's --other-torch. What it
holds and why: docs/testing.md, "Another torch".

    python -m tools.testkit.other_torch [VERSION] [--install] [-- more pytest arguments]

--install only makes the venv (unpacking 5 GB of wheels, mostly waiting on the disk).
"""

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSION = "2.14.1"
# nbval's rules for another torch: tests/sanitize.cfg's, and the release's own number with what
# helpers/torch_version.py says after it (the one checked against, or not)
SANITIZE = (
    "\n[another torch: the release the environment check and the set-up cells name]\n"
    "regex: torch:? \\d+\\.\\d+\\.\\d+[^\\s,;]*(, the one the collection's outputs were checked against"
    "|; the collection's outputs were checked against \\S+, so [^\\n]* may differ)?\n"
    "replace: torch RELEASE\n"
)
# make test's files whose subject is the repository or a tool, not torch: they pass or fail alike on
# any torch, so the second run leaves them out
SAME_ON_ANY_TORCH = (
    "test_imports.py",       # import-linter's contracts broken on purpose (its program lies in .venv/bin only)
    "test_check_command.py",  # make check's refusal of a number that names no notebook
    "test_nbval_checks.py",  # that nbval rejects tampered outputs, widget outputs too
    "test_shortcuts.py",     # jupyter/overrides.json against JupyterLab's shortcuts
    "test_new.py",           # make new's scaffold
    "test_notebooks.py",     # the notebooks' text
    "test_types.py",         # mypy on helpers/ (a stub torch changed says nothing of what learners see)
    "test_kernel.py",        # the kernel's language_info
    "test_pacing.py",        # the times counted from the stored notebooks
    "test_readme.py",        # the README's words and links
    "test_platforms.py",     # the Windows and macOS routes of the set-up
    "test_setup_system.py",  # tools/setup_system.sh
    "test_saving.py",        # the save hook and the working copy: the lab's own code
    "test_working_copy.py",
    "test_widget_registry.py",  # the registry against the notebooks' source
)
# what the other torch runs beside make test's selection: tests of the integration layer whose subject is
# what a CUDA build does (make test's tests/test_exercises.py judges every reference solution right on it,
# so the teacher's copies are left to the pinned torch's integration layer)
ON_A_CUDA_BUILD = (
    "tests/test_check_limits.py::test_after_a_compiled_backward_in_the_session_right_answers_are_right",
)
# the executables of .venv the tests run by name beside sys.executable
LINKED = ("ruff",)
VENV = ROOT / ".venv"   # the Makefile's
THROUGH = "zz-first-venv.pth"   # the line that reads the other venv's packages
# the data a venv's packages find under sys.prefix: JupyterLab's assets, the server's extensions
SHARED = ("share/jupyter", "etc/jupyter")


def purelib(prefix):
    """The site-packages of the venv at `prefix`, made yet or not."""
    scheme = "venv" if "venv" in sysconfig.get_scheme_names() else "posix_prefix"   # 3.10 has no "venv"
    return Path(sysconfig.get_path("purelib", scheme, vars={"base": str(prefix), "platbase": str(prefix)}))


def other_venv(version):
    """build/torch-<version>/'s interpreter. It may be made before .venv is
    (.ci/run): torch goes in with .venv's packages out of sight, those it
    shares held to requirements.txt's versions; then it reads .venv's packages
    behind its own, and links its data (SHARED) and programs (LINKED), made yet or not."""
    folder = ROOT / "build" / f"torch-{version}"
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
    found = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True,
                           text=True)
    if found.stdout.split("+")[0].strip() != version:
        (purelib(folder) / THROUGH).unlink(missing_ok=True)
        held = folder / "constraints.txt"
        held.write_text("".join(line for line in (ROOT / "requirements.txt").read_text().splitlines(True)
                                if not line.startswith("torch==")))
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--constraint", str(held), f"torch=={version}"], check=True)
    (purelib(folder) / THROUGH).write_text(f"import site; site.addsitedir({str(purelib(VENV))!r})\n")
    for shared in (*SHARED, *(f"bin/{name}" for name in LINKED)):
        link = folder / shared
        if not (link.is_symlink() or link.exists()):
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(VENV / shared)
    return python


def pytest_command(python, rules, more=()):
    left_out = [f"--ignore=tests/{name}" for name in SAME_ON_ANY_TORCH]
    also = [f"--also={node}" for node in ON_A_CUDA_BUILD] if not more else []
    return [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile",
            "--no-loadscope-reorder", "--durations=10", "-rs", "--layers", "test", "--other-torch",
            f"--nbval-sanitize-with={rules}", *left_out, *also, *more]


def main(argv):
    version = next((arg for arg in argv[:argv.index("--") if "--" in argv else None] if arg[0].isdigit()), VERSION)
    more = argv[argv.index("--") + 1:] if "--" in argv else []
    python = other_venv(version)
    if "--install" in argv:
        return 0
    rules = python.parent.parent / "sanitize.cfg"
    rules.write_text((ROOT / "tests" / "sanitize.cfg").read_text() + SANITIZE)
    print(subprocess.run([str(python), "-c", "import torch; print('torch', torch.__version__, 'CUDA',"
                                              " torch.version.cuda or 'none')"],
                         capture_output=True, text=True).stdout.strip(), flush=True)
    return subprocess.run(pytest_command(python, rules, more), cwd=ROOT,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"}).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
