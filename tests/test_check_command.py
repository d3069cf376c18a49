"""`make check NB=NN` and `make notebooks NB=NN`, as a contributor types them: a
number that names no notebook is refused at once, with what to type instead; one
that names a notebook runs its checks (make -n: what it would run)."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools.build.run_notebooks import named
from tools.notebooks import notebook_paths

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


@given(st.one_of(st.text(max_size=40), st.from_regex(r"[0-9]{1,3}", fullmatch=True),
                 st.sampled_from([str(path) for path in notebook_paths()] + ["notebooks/99-x.ipynb", "Makefile"])))
def test_make_notebooks_runs_a_stored_notebook_or_says_what_to_type(nb):
    try:
        path = named(nb)
    except SystemExit as refusal:
        assert str(refusal).startswith(f"make notebooks NB={nb}: ") and "NB=03" in str(refusal)
    else:
        assert path in notebook_paths() and (not nb.isdigit() or path.name.startswith(f"{int(nb):02d}-"))
