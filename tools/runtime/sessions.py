"""A notebook open in two tabs keeps its kernel when one of them closes.

The learners' settings shut a notebook's kernel down when its tab closes
(`kernelShutdown`: one kernel of these notebooks holds 260-450 MB). JupyterLab
and Notebook 7 do it by deleting the notebook's session; but two tabs of one
notebook share that session and its kernel, so closing either used to stop
the kernel under the other, whose widgets then looked live and never redrew.

`OneViewLeft`, the server's session manager (named in
jupyter/jupyter_server_config.json), deletes a session only when no page is
connected to its kernel any more. JupyterLab closes the page's connection
before it asks (measured: with two tabs open, the kernel has one connection
when the request comes), but the two travel apart, so the closing page's may
still be counted: the request waits up to `SETTLE` seconds for the count to
reach 0. Notebook 7 asks first and closes its page after the answer, so a
kernel still connected then is watched for `AFTER` seconds more: once no page
is connected, the session ends and the kernel stops. A kernel still connected
after that has another view: the session and kernel stay for that view. When
the last view closes, its request stops the kernel as before.

A page can also go away without asking. Notebook 7 shows one notebook per
browser tab, and closing that tab (or a JupyterLab window) sends no request,
only the close of the page's kernel connection with the code a browser sends
when its page goes away (1001). `PageLeaves`, the server's kernel connection
class, tells the session manager so; if no page is connected to the kernel
`gone_after` seconds later (a reload reconnects within a few), the session ends
and the kernel stops. A connection that dropped without that code (a laptop's
lid closed, the network gone) or that the page closed itself (JupyterLab
closing a notebook with kernelShutdown off) leaves its kernel to the 30-minute
culler, as before."""

import asyncio
import time

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
from jupyter_server.services.sessions.sessionmanager import SessionManager
from tornado import web
from traitlets import Float

SETTLE = 1.0           # seconds for the closing page's own connection to be counted closed
AFTER = 15.0           # seconds more, after answering, for a page that closes once answered
GONE_AFTER = 60.0      # seconds a kernel whose last page went away waits for one to come back
GOING_AWAY = 1001      # the close code of a page that went away (RFC 6455): a tab closed, a reload


class OneViewLeft(SessionManager):  # type: ignore[misc]
    """Deletes a session, and stops its kernel, only when the page asking
    is the last one connected to that kernel; ends it, too, once the last
    page connected went away and none came back within `gone_after` seconds."""

    gone_after = Float(GONE_AFTER, config=True,
                       help="Seconds a kernel whose last page went away (a Notebook 7 tab closed) is kept for "
                            "a page to come back before its session ends and it stops.")

    def views(self, kernel_id: str) -> int:
        """How many pages are connected to the kernel (the kernel manager's
        public model of it; none once the manager no longer knows it)."""
        try:
            connections: int = self.kernel_manager.kernel_model(kernel_id).get("connections", 0)
        except web.HTTPError:                     # 404: no such kernel any more
            return 0
        return connections

    async def other_views(self, kernel_id: str, settle: float = SETTLE) -> int:
        """The pages connected to the kernel once the closing page's own
        connection has had `settle` seconds to be counted closed."""
        deadline = time.monotonic() + settle
        while self.views(kernel_id) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return self.views(kernel_id)

    async def delete_session(self, session_id: str) -> None:
        session = await self.get_session(session_id=session_id)
        kernel = (session.get("kernel") or {}).get("id")
        others = await self.other_views(kernel) if kernel else 0
        if others:
            asyncio.ensure_future(self._delete_once_unseen(session_id, kernel, session.get("path")))
            return
        await super().delete_session(session_id)

    async def _delete_once_unseen(self, session_id: str, kernel: str, path: object) -> None:
        """End the session once no page is connected to its kernel, within
        AFTER seconds; else keep it for the page that still shows it."""
        if await self.other_views(kernel, AFTER):
            self.log.info("Session %s for %s kept: another page still shows it", session_id, path)
            return
        try:
            await super().delete_session(session_id)
        except Exception:           # gone already: the other page's close ended it, or the kernel died
            self.log.debug("Session %s for %s already ended", session_id, path)

    def page_gone(self, kernel_id: str) -> None:
        """A page connected to the kernel went away (`PageLeaves`)."""
        asyncio.ensure_future(self._end_unless_seen(kernel_id))

    async def _end_unless_seen(self, kernel_id: str) -> None:
        deadline = time.monotonic() + self.gone_after
        while not self.views(kernel_id) and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        if self.views(kernel_id):
            return
        for session in await self.list_sessions():
            if (session.get("kernel") or {}).get("id") == kernel_id:
                self.log.info("Session %s for %s ended: no page came back within %g s of the last one going "
                              "away", session["id"], session.get("path"), self.gone_after)
                try:
                    await super().delete_session(session["id"])
                except Exception:   # ended meanwhile (a page's close, the culler)
                    self.log.debug("Session %s already ended", session["id"])


class PageLeaves(ZMQChannelsWebsocketConnection):  # type: ignore[misc]
    """jupyter_server's kernel connection of a page, which tells the session
    manager when its page went away: closed with the code a browser sends
    then, not dropped (a laptop asleep) nor closed by the page itself."""

    def disconnect(self):  # type: ignore[no-untyped-def]
        handler = self.websocket_handler
        gone, kernel = getattr(handler, "close_code", None) == GOING_AWAY, self.kernel_id
        manager = handler.settings.get("session_manager") if handler is not None else None
        done = super().disconnect()
        if gone and isinstance(manager, OneViewLeft):
            manager.page_gone(kernel)
        return done
