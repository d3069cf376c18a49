"""The server's session manager keeps a notebook's kernel while another page
shows it (tools/runtime/sessions.py; tests/test_lab.py closes one of two
real tabs)."""

import asyncio
import types

from tornado import web

from tools.runtime.sessions import OneViewLeft


class Kernels:
    """What OneViewLeft.views reads of jupyter_server's MappingKernelManager:
    kernel_model(id), with the count of pages connected, or a 404 for a
    kernel it does not know."""

    def __init__(self, connections):
        self.connections = connections

    def kernel_model(self, kernel_id):
        if kernel_id not in self.connections:
            raise web.HTTPError(404, f"Kernel does not exist: {kernel_id}")
        return {"id": kernel_id, "connections": self.connections[kernel_id]}


def _manager(connections):
    manager = types.SimpleNamespace(kernel_manager=Kernels(connections))
    manager.views = types.MethodType(OneViewLeft.views, manager)
    return manager


def test_the_kernel_managers_model_says_how_many_pages_are_connected(tmp_path):
    """The real MappingKernelManager, as the server runs it: a kernel it
    started has a public model with its count of pages (none connected), and
    one it does not know answers 404, which views() reads as no page."""
    from jupyter_server.services.kernels.kernelmanager import MappingKernelManager

    async def counted():
        real = MappingKernelManager(root_dir=str(tmp_path))
        kernel_id = await real.start_kernel()
        try:
            seen = OneViewLeft.views(types.SimpleNamespace(kernel_manager=real), kernel_id)
            return seen, real.kernel_model(kernel_id)["connections"]
        finally:
            await real.shutdown_kernel(kernel_id, now=True)

    assert asyncio.run(counted()) == (0, 0)
    assert OneViewLeft.views(types.SimpleNamespace(kernel_manager=MappingKernelManager()), "gone") == 0


def _others(manager, settle=0.5):
    return asyncio.run(OneViewLeft.other_views(manager, "k", settle))


def test_a_kernel_no_page_shows_has_no_other_view():
    assert _others(_manager({"k": 0})) == 0
    assert _others(_manager({})) == 0                       # a kernel the manager no longer counts


def test_another_page_still_connected_is_another_view():
    assert _others(_manager({"k": 1})) == 1


def test_the_closing_pages_connection_counted_late_is_not_another_view():
    manager = _manager({"k": 1})

    async def closes_late():
        async def drop():
            await asyncio.sleep(0.1)
            manager.kernel_manager.connections["k"] = 0
        dropping = asyncio.create_task(drop())
        others = await OneViewLeft.other_views(manager, "k", 1.0)
        await dropping
        return others

    assert asyncio.run(closes_late()) == 0
