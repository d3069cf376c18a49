"""The server's session manager keeps a notebook's kernel while another page
shows it (tools/runtime/sessions.py; tests/test_lab.py closes one of two
real tabs)."""

import asyncio
import types

from tools.runtime.sessions import OneViewLeft


def _manager(connections):
    """What OneViewLeft.other_views reads: the kernel manager's count of
    pages connected to each kernel."""
    manager = types.SimpleNamespace(kernel_manager=types.SimpleNamespace(_kernel_connections=connections))
    manager.views = types.MethodType(OneViewLeft.views, manager)
    return manager


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
            manager.kernel_manager._kernel_connections["k"] = 0
        dropping = asyncio.create_task(drop())
        others = await OneViewLeft.other_views(manager, "k", 1.0)
        await dropping
        return others

    assert asyncio.run(closes_late()) == 0
