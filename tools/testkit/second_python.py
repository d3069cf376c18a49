"""A second interpreter for the layer that depends on the Python release (what
a kernel reports, what `make notebooks` stores): a venv made by another patch
release of .venv's Python that reads .venv's packages (a minor version keeps
its ABI). `.ci/run` runs tests/test_kernel.py, nbval and tests/test_lab.py with it.

    python -m tools.testkit.second_python PYTHON [FOLDER]    prints FOLDER/bin/python
"""

import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "build" / "second-python"
THROUGH = "zz-first-venv.pth"   # the line that reads the other venv's packages
# the data a venv's packages find under sys.prefix: JupyterLab's assets, the server's extensions
# and the hub's pages (a folder of the overlay's own, such as share/man, is left as it is)
SHARED = ("share/jupyter", "share/jupyterhub", "etc/jupyter")


def release_of(python):
    """(major, minor, micro) of the interpreter `python`."""
    done = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:3])"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{python} does not run ({done.stderr.strip() or done.returncode}): pass another Python")
    major, minor, micro = (int(part) for part in done.stdout.split())
    return major, minor, micro


def purelib(prefix):
    """The site-packages of the venv at `prefix`, made yet or not."""
    scheme = "venv" if "venv" in sysconfig.get_scheme_names() else "posix_prefix"   # 3.10 has no "venv"
    return Path(sysconfig.get_path("purelib", scheme, vars={"base": str(prefix), "platbase": str(prefix)}))


def overlay(python, folder):
    """A venv made by `python` in `folder` (emptied first) that reads this
    environment's packages behind its own (read_through)."""
    subprocess.run([python, "-m", "venv", "--clear", "--without-pip", str(folder)], check=True)
    read_through(folder, Path(sys.prefix))


def read_through(folder, prefix):
    """Make the venv `folder` read the packages of the venv at `prefix` behind
    its own, and link that one's data (SHARED). `prefix` need not be made yet:
    the links are made whether their ends are there or not."""
    (purelib(folder) / THROUGH).write_text(f"import site; site.addsitedir({str(purelib(prefix))!r})\n")
    for shared in SHARED:
        link = folder / shared
        if not (link.parent.is_symlink() or link.is_symlink() or link.exists()):  # an older overlay links share/
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(prefix / shared, target_is_directory=True)


def second_venv(python, folder=FOLDER):
    """The interpreter of the overlay made by `python` in `folder`. Refuses
    this very release (nothing would differ) and another minor version
    (this environment's compiled packages would not load)."""
    own, other = sys.version_info[:3], release_of(python)
    if other[:2] != own[:2] or other == own:
        raise SystemExit(f"{python} is Python {'.'.join(map(str, other))}; the second Python must be another patch "
                         f"release of this environment's {'.'.join(map(str, own))} (pass its path)")
    overlay(python, folder)
    return folder / "bin" / "python"


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__.strip().splitlines()[-1].strip())
    print(second_venv(sys.argv[1], Path(sys.argv[2]) if len(sys.argv) == 3 else FOLDER))
