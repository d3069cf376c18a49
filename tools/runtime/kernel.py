"""The kernel the collection's notebooks run in, wherever its tools start one
(`make lab`, the hub, Binder, `make notebooks`: `Specs`, named in
jupyter/jupyter_server_config.json). It is ipykernel's, but its
`language_info.version` is "3", not the interpreter's release: the front ends
write a connecting kernel's language_info into the notebook, so with the
release a learner on another Python saw every notebook marked changed on
first open. The banner and `sys.version` still give the release.

    python -m tools.runtime.kernel -f CONNECTION_FILE
"""

import sys
from pathlib import Path

from ipykernel.ipkernel import IPythonKernel
from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelspec import RESOURCES, get_kernel_dict
from jupyter_client.kernelspec import KernelSpecManager

NAME = "python3"          # the kernelspec every stored notebook names ("Python 3 (ipykernel)")
MODULE = "tools.runtime.kernel"      # this module, as `python -m` runs it


class Kernel(IPythonKernel):
    language_info = {**IPythonKernel.language_info, "version": str(sys.version_info.major)}


def kernel_dict():
    """ipykernel's kernelspec for this Python, with this module as the command it runs."""
    return {**get_kernel_dict(), "argv": [sys.executable, "-m", MODULE, "-f", "{connection_file}"]}


def recorded():
    """What a notebook run by this kernel holds of it (`kernelspec`,
    `language_info`), as JupyterLab writes it when the kernel connects."""
    spec = kernel_dict()
    return {"kernelspec": {"name": NAME, "display_name": spec["display_name"], "language": spec["language"]},
            "language_info": dict(Kernel.language_info)}


class Specs(KernelSpecManager):
    """Every kernel spec Jupyter finds, with `python3` always this
    environment's Python running `Kernel` (not a user's own `python3` spec)."""

    def find_kernel_specs(self):
        return {**super().find_kernel_specs(), NAME: RESOURCES}

    def get_kernel_spec(self, kernel_name):
        if kernel_name.lower() == NAME:
            return self.kernel_spec_class(resource_dir=RESOURCES, **kernel_dict())
        return super().get_kernel_spec(kernel_name)


def main(argv=None):
    """Start the kernel, as ipykernel_launcher does: the working folder is
    left off sys.path while the kernel's modules load (IPython puts it back)."""
    if sys.path and (sys.path[0] == "" or Path(sys.path[0]) == Path.cwd()):
        del sys.path[0]
    IPKernelApp.launch_instance(argv, kernel_class=Kernel)


if __name__ == "__main__":
    main()
