"""The pins `make pin` writes (requirements-dev.txt: requirements.txt's and the tests') install on every supported
Python at its oldest patch release, 3.10.0 to 3.13.0: pip's resolver asked, nothing installed or downloaded.
Debian 12's 3.11.2 and Ubuntu 22.04's 3.10 lie inside (soupsieve 4.1.3, needing 3.11.5, was once pinned for 3.11)."""

import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tools.build import pin

DEV = pin.ROOT / "requirements-dev.txt"


@pytest.fixture(scope="module")
def resolutions():
    """{python_version: (pip's install list or None, its errors)}, resolved at once by this Python's pip: the lines
    carry no markers (for_python evaluated them), which it would evaluate for itself."""
    with ThreadPoolExecutor(max_workers=len(pin.PYTHONS)) as pool:
        found = pool.map(lambda version: pin.dry_run(sys.executable, version, pin.for_python(DEV, version)),
                         pin.PYTHONS)
        return dict(zip(pin.PYTHONS, found, strict=True))


@pytest.mark.parametrize("version", pin.PYTHONS)
def test_pins_resolve_for_each_supported_python(resolutions, version):
    found, error = resolutions[version]
    assert found is not None, f"requirements-dev.txt does not install on Python {version}:\n{error[-2000:]}"


@pytest.mark.parametrize("version", pin.PYTHONS)
def test_every_python_gets_one_version_of_each_package(version):
    lines = pin.for_python(DEV, version)
    names = [line.split("==")[0].lower() for line in lines]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert "torch==2.13.0" in lines and all("==" in line for line in lines)
    if version.startswith("3.10"):
        assert any(line.startswith("exceptiongroup==") for line in lines)    # a 3.10-only backport


def test_a_newer_python_takes_the_newest_lines():
    assert pin.for_python(DEV, "3.14.0") == pin.for_python(DEV, "3.13.0")

