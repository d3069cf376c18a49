"""Which torch the learner has, against the oldest the helpers work with and
the one the stored outputs were checked against (requirements.txt's pin: the
checkout's, or an installed package's `helpers.pins` copy). Imports neither
torch nor ipywidgets: the set-up cell reads the installed version."""

import json
import re
from pathlib import Path

# The oldest torch the helpers work with, as pyproject.toml's `torch>=` (tests/test_environment.py).
TORCH_NEEDED = "2.9"
UPGRADE = ("pip install --upgrade torch (without an NVIDIA GPU add --index-url https://download.pytorch.org/whl/cpu), "
           "then restart the kernel")
HERE = Path(__file__).resolve().parent
REQUIREMENTS = (HERE.parent / "requirements.txt", HERE / "pins" / "requirements.txt")
# A cell whose output is what one torch release does; the stored notebooks are the checkout's
# or an installed package's copy.
RELEASE_TAG = "torch-release-behaviour"
STORED = (HERE.parent / "notebooks", HERE / "stored_notebooks")


def release(version: str) -> tuple[int, ...]:
    """The release numbers of a version: (2, 13, 0) for "2.13.0+cpu" and
    "2.13.0a0"."""
    found = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", version)
    return tuple(int(number) for number in found.groups() if number is not None) if found else ()


def pinned_torch(files: tuple[Path, ...] = REQUIREMENTS) -> str | None:
    """The torch requirements.txt pins, or None without the file."""
    for path in files:
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("torch=="):
                    return line.removeprefix("torch==").split(";")[0].strip()
    return None


def release_cells(folders: tuple[Path, ...] = STORED) -> int | None:
    """How many stored notebook cells are tagged RELEASE_TAG, from the first
    folder holding them; None when none does or they cannot be read."""
    for folder in folders:
        paths = sorted(folder.glob("[0-9][0-9]-*.ipynb"))
        if not paths:
            continue
        try:
            cells = [cell for path in paths for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return sum(RELEASE_TAG in cell.get("metadata", {}).get("tags", []) for cell in cells)
    return None


def torch_report(found: str, pinned: str | None = None, tagged: int | None = None) -> tuple[bool, str]:
    """(whether torch `found` is new enough, the line to say of it: the
    command when it is too old, else whether it is the pinned release, and if not
    how many cells show what one release does)."""
    found = found.split("+")[0]
    if release(found) < release(TORCH_NEEDED):
        return False, f"torch {found} is older than the {TORCH_NEEDED} these helpers need: {UPGRADE}"
    pinned = pinned_torch() if pinned is None else pinned
    if pinned is None:
        return True, f"torch {found}"
    if release(found) == release(pinned):
        return True, f"torch {found}, the one the collection's outputs were checked against"
    tagged = release_cells() if tagged is None else tagged
    which = (f"the {tagged} cell{'' if tagged == 1 else 's'} tagged {RELEASE_TAG} (what one release does)"
             if tagged else "a few")
    return True, f"torch {found}; the collection's outputs were checked against {pinned}, so {which} may differ"
