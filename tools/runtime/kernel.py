"""The kernel the collection's notebooks run in, wherever its own tools start
one: `make lab`, `make notebook`, the hub's learner servers, Binder (through
`Specs`, the server's kernel spec manager, named in jupyter/jupyter_server_config.json)
and `make notebooks` (tools/build/run_notebooks.py).

It is ipykernel's kernel, run by this environment's Python, but for one field
of its kernel_info_reply: `language_info.version` is the language's major
version ("3", as ipykernel's own `codemirror_mode.version` already is), not the
interpreter's release ("3.11.2"). A notebook stores what its kernel reported,
and JupyterLab and Notebook 7 write a connecting kernel's `language_info` into
the notebook, marking it changed unless it is deeply equal to what the file
holds. With ipykernel's own release number the stored notebooks depended on
the patch release that executed them, and a learner on any other Python saw
every one marked changed on its first open. The precise release is not hidden:
the reply's `banner` (what a console shows) starts with it, and
`sys.version` in a cell prints it.

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
LANGUAGE_VERSION = str(sys.version_info.major)


class Kernel(IPythonKernel):
    """ipykernel's kernel, reporting Python's major version in `language_info`."""

    language_info = {**IPythonKernel.language_info, "version": LANGUAGE_VERSION}


def kernel_dict():
    """ipykernel's kernelspec for this Python (name, display name, metadata)
    with this module as the command it runs."""
    spec = get_kernel_dict()
    return {**spec, "argv": [sys.executable, "-m", MODULE, "-f", "{connection_file}"]}


def recorded():
    """What a notebook run by this kernel holds of it, as JupyterLab writes it
    when the kernel connects: `kernelspec` (name, display name, language) and
    `language_info`. A stored notebook holding anything else is rewritten on
    open and shown changed."""
    spec = kernel_dict()
    return {"kernelspec": {"name": NAME, "display_name": spec["display_name"], "language": spec["language"]},
            "language_info": dict(Kernel.language_info)}


class Specs(KernelSpecManager):
    """The kernel specs a server offers: every one Jupyter finds, with
    `python3` always this environment's Python running `Kernel` (so a
    `python3` spec in the user's own Jupyter folder, which may name another
    Python, is not the one the collection's notebooks get)."""

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
