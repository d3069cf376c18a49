"""The public API is typed: mypy checks `helpers/` with the settings in
pyproject.toml ([tool.mypy], strict) and reports nothing."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_checked_modules_have_no_type_errors():
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.startswith("Success: no issues found"), done.stdout + done.stderr
