"""Which torch the learner has, against the oldest the helpers work with and
the one the collection's stored outputs were checked against (the pin in
requirements.txt, read from the file: the checkout's, or the copy an
installed package carries as `helpers.pins`, pyproject.toml). One line for
the environment check (helpers/environment.py) and the set-up cell
(helpers/standalone.py). Imports neither torch nor ipywidgets: the set-up
cell reads the version from the installed distribution."""

import re
from pathlib import Path

# The oldest torch the helpers work with, as pyproject.toml's `torch>=` says (tests/test_environment.py
# holds the two equal). 2.9.1 is the oldest tried: its SavedTensor cannot say whether a hook packed it,
# so its drawings name saved tensors without reading them (helpers/saved_values.py's UNTOLD).
TORCH_NEEDED = "2.9"
UPGRADE = ("pip install --upgrade torch (without an NVIDIA GPU add --index-url https://download.pytorch.org/whl/cpu), "
           "then restart the kernel")
HERE = Path(__file__).resolve().parent
REQUIREMENTS = (HERE.parent / "requirements.txt", HERE / "pins" / "requirements.txt")


def release(version: str) -> tuple[int, ...]:
    """The release numbers of a version: (2, 13, 0) for "2.13.0+cpu" and
    for "2.13.0a0"; a part stops at its first character that is not a digit."""
    numbers = []
    for part in version.split("+")[0].split(".")[:3]:
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
        if digits.group() != part:
            break
    return tuple(numbers)


def pinned_torch(files: tuple[Path, ...] = REQUIREMENTS) -> str | None:
    """The torch requirements.txt pins (the collection's outputs were
    checked against it), or None when no copy of the file is here."""
    for path in files:
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("torch=="):
                    return line.removeprefix("torch==").split(";")[0].strip()
    return None


def torch_report(found: str, pinned: str | None = None) -> tuple[bool, str]:
    """Whether torch `found` (its version) is new enough, and the one line to
    say of it: the version needed and the command when it is older, else
    whether it is the one the outputs were checked against."""
    found = found.split("+")[0]
    if release(found) < release(TORCH_NEEDED):
        return False, f"torch {found} is older than the {TORCH_NEEDED} these helpers need: {UPGRADE}"
    pinned = pinned_torch() if pinned is None else pinned
    if pinned is None:
        return True, f"torch {found}"
    if release(found) == release(pinned):
        return True, f"torch {found}, the one the collection's outputs were checked against"
    return True, f"torch {found}; the collection's outputs were checked against {pinned}, so a few may differ"
