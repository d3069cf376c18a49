"""The suite's watchdog (pyproject.toml: faulthandler_timeout with
faulthandler_exit_on_timeout): a test that hangs is stopped with every
thread's traceback, its worker replaced, and the run goes on to fail
rather than stall until CI's own limit ends it with nothing said."""

import subprocess
import sys
import textwrap

from test_nbval_checks import without_addopts


def test_the_suite_stops_a_test_past_ten_minutes(pytestconfig):
    assert float(pytestconfig.getini("faulthandler_timeout")) == 600
    assert pytestconfig.getini("faulthandler_exit_on_timeout") is True


def test_a_hanging_test_fails_the_run_with_its_traceback_and_the_rest_still_runs(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nfaulthandler_timeout = 2\nfaulthandler_exit_on_timeout = true\n")
    (tmp_path / "test_hang.py").write_text(textwrap.dedent("""
        import threading

        def test_waits_forever():
            threading.Event().wait()

        def test_after_it():
            assert True
    """))
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "1", "-p", "no:cacheprovider", "-v",
                           "--rootdir", str(tmp_path), "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=without_addopts())
    printed = done.stdout + done.stderr
    assert done.returncode == 1, printed
    assert "crashed while running 'test_hang.py::test_waits_forever'" in printed, printed
    assert "Timeout (0:00:02)!" in printed and "in test_waits_forever" in printed, printed
    assert "PASSED test_hang.py::test_after_it" in printed, printed
