"""The collection's kernel (tools/runtime/kernel.py) reports Python's major
version in `language_info`, so the stored notebooks do not depend on the
Python release that executed them and a first open marks none changed."""

import json
import platform
import sys

from jupyter_client.manager import KernelManager

from tools.runtime import kernel


def test_the_kernel_reports_the_language_not_the_release():
    km = KernelManager(kernel_name=kernel.NAME, kernel_spec_manager=kernel.Specs())
    km.start_kernel()
    try:
        client = km.client()
        client.start_channels()
        client.wait_for_ready(timeout=60)
        reply = client.kernel_info(reply=True, timeout=60)["content"]
        client.stop_channels()
    finally:
        km.shutdown_kernel(now=True)
    assert reply["language_info"] == kernel.recorded()["language_info"]
    assert reply["language_info"]["version"] == str(sys.version_info.major) == "3"
    assert reply["language_info"]["codemirror_mode"]["version"] == 3
    # the release is still told, where nothing stores it: the banner a console shows
    assert f"Python {platform.python_version()}" in reply["banner"]


def test_python3_is_this_environment_running_the_collections_kernel(tmp_path, monkeypatch):
    """A `python3` spec in the user's own Jupyter folder (naming another Python) is not the one the server starts."""
    for name, argv in (("python3", ["/opt/other/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"]),
                       ("julia", ["julia", "-i", "{connection_file}"])):
        (tmp_path / "kernels" / name).mkdir(parents=True)
        (tmp_path / "kernels" / name / "kernel.json").write_text(
            json.dumps({"argv": argv, "display_name": name.title(), "language": name}))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path))
    specs = kernel.Specs()
    ours = specs.get_kernel_spec("python3")
    assert ours.argv == [sys.executable, "-m", "tools.runtime.kernel", "-f", "{connection_file}"]
    assert ours.display_name == kernel.recorded()["kernelspec"]["display_name"] == "Python 3 (ipykernel)"
    listed = specs.get_all_specs()
    assert listed["python3"]["spec"]["argv"] == ours.argv
    assert listed["julia"]["spec"]["argv"][0] == "julia"
    assert kernel.__name__ == kernel.MODULE
