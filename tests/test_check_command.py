"""`make check NB=NN`, the inner loop, as a contributor types it: a number that
names no notebook is refused at once, with what to type instead; one that
names a notebook runs its checks (make -n: what it would run)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def make(*args):
    return subprocess.run(["make", "-s", *args, f"PYTHON={sys.executable}"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("number", ["99", "x", "3x", "../00", "0 3", "*"])
def test_a_number_that_names_no_notebook_is_refused_with_what_to_type(number):
    done = make("check", f"NB={number}")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"make check NB={number}: no notebook numbered {number}" in done.stdout + done.stderr
    assert "NB=03 checks notebooks/03-*.ipynb" in done.stdout + done.stderr


@pytest.mark.parametrize("number", ["3", "03"])
def test_a_notebook_s_number_runs_its_checks(number):
    done = make("-n", "check", f"NB={number}")
    assert done.returncode == 0 and f"--notebook {number} notebooks" in done.stdout, done.stdout + done.stderr
