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


def test_a_kernel_whose_last_page_went_away_ends_unless_a_page_comes_back(tmp_path):
    """OneViewLeft with the real kernel manager and a real kernel: told that
    the kernel's last page went away (a Notebook 7 tab closed: PageLeaves),
    it keeps the session while a page is connected again within gone_after
    (a reload), and ends it, kernel and all, when none is."""
    from jupyter_server.services.contents.manager import ContentsManager
    from jupyter_server.services.kernels.kernelmanager import MappingKernelManager

    async def run():
        kernels = MappingKernelManager(root_dir=str(tmp_path))
        manager = OneViewLeft(kernel_manager=kernels, contents_manager=ContentsManager(root_dir=str(tmp_path)),
                              gone_after=0.5)
        session = await manager.create_session(path="a.ipynb", type="notebook", kernel_name="python3")
        kernel = session["kernel"]["id"]
        pages = {kernel: 1}
        manager.views = lambda kernel_id: pages.get(kernel_id, 0)
        try:
            manager.page_gone(kernel)                       # a reload: its page is back
            await asyncio.sleep(1.5)
            kept = [s["id"] for s in await manager.list_sessions()] == [session["id"]]
            pages[kernel] = 0
            manager.page_gone(kernel)                       # the tab closed
            await asyncio.sleep(0.2)
            still = kernel in kernels                       # within gone_after: kept for a page to come back
            deadline = asyncio.get_running_loop().time() + 30
            while kernel in kernels and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.2)
            return kept, still, kernel in kernels, await manager.list_sessions()
        finally:
            if kernel in kernels:
                await kernels.shutdown_kernel(kernel, now=True)

    kept, still, running, sessions = asyncio.run(run())
    assert kept and still, "a page that came back, or time still left, did not keep the session"
    assert not running and sessions == [], "no page came back, yet the kernel still runs"


def test_every_server_the_learner_meets_tells_of_pages_going_away():
    from tools.runtime.lab import lab_argv, server_options

    option = "--ServerApp.kernel_websocket_connection_class=tools.runtime.sessions.PageLeaves"
    assert option in server_options() and option in lab_argv(app="notebook") and option in lab_argv()
