"""The simulated learner's websocket (classroom/hub_learner.py's Notebook)
against a small tornado server that pings as jupyter_server does, only faster:
a notebook left unread past the server's ping timeout still answers, since a
thread answers the pings as a page does; and `receive`'s deadline holds while
pings keep arriving. Both hung the hub's tests before (a server that had given
up on the websocket went on pinging it, and each ping reset the socket's
timeout)."""

import asyncio
import json
import threading
import time
from types import SimpleNamespace

import pytest
import websocket
from tornado.web import Application
from tornado.websocket import WebSocketHandler

from classroom.hub_learner import Notebook

PING = 0.1              # seconds between the server's pings
PING_TIMEOUT = 0.4      # the server closes a websocket whose pings went unanswered this long


class Kernel(WebSocketHandler):
    """Answers each message with one whose parent is it; says nothing for a
    message whose code is "quiet"."""

    def on_message(self, message):
        request = json.loads(message)
        if request["content"].get("code") != "quiet":
            self.write_message(json.dumps({"header": {"msg_type": "stream"}, "parent_header": request["header"],
                                           "content": {"text": "answered"}}))

    def on_close(self):
        self.application.settings["closed"].append(time.monotonic())


@pytest.fixture
def server():
    """(port, closing times) of a websocket server on loopback, in a thread of its own."""
    ready, closed, state = threading.Event(), [], {}

    def serve():
        async def main():
            app = Application([(r"/.*", Kernel)], websocket_ping_interval=PING,
                              websocket_ping_timeout=PING_TIMEOUT, closed=closed)
            http = app.listen(0, address="127.0.0.1")
            state["port"] = next(iter(http._sockets.values())).getsockname()[1]
            state["stop"] = asyncio.Event()
            state["loop"] = asyncio.get_running_loop()
            ready.set()
            await state["stop"].wait()
            http.stop()
        asyncio.run(main())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(10), "the test's websocket server did not start"
    yield state["port"], closed
    state["loop"].call_soon_threadsafe(state["stop"].set)
    thread.join(10)


def notebook(port):
    learner = SimpleNamespace(name="ada", http=SimpleNamespace(cookies=[]),
                              server_url=lambda path: f"http://127.0.0.1:{port}/{path}")
    return Notebook(learner, {"id": "session-1", "kernel": {"id": "kernel-1"}}, nb=None)


def test_a_notebook_left_unread_past_the_ping_timeout_still_answers(server):
    port, closed = server
    open_notebook = notebook(port)
    time.sleep(4 * PING_TIMEOUT)              # the learner reads another notebook meanwhile
    assert closed == [], "the server gave up on a websocket whose pings went unanswered"
    sent = open_notebook.send("execute_request", {"code": "1"})
    message = open_notebook.receive(time.monotonic() + 10)
    assert message["parent_header"]["msg_id"] == sent and message["content"]["text"] == "answered"
    open_notebook.disconnect()


def test_the_deadline_holds_while_pings_arrive(server):
    port, _ = server
    open_notebook = notebook(port)
    open_notebook.send("execute_request", {"code": "quiet"})
    start, outcome = time.monotonic(), []

    def wait():
        try:
            open_notebook.receive(time.monotonic() + 5 * PING)
        except websocket.WebSocketTimeoutException as error:
            outcome.append(error)

    waiting = threading.Thread(target=wait, daemon=True)
    waiting.start()
    waiting.join(30)
    assert not waiting.is_alive(), "receive went on waiting past its deadline while the server pinged"
    assert outcome and time.monotonic() - start < 5, outcome
    open_notebook.disconnect()


def test_a_closed_websocket_fails_every_receive_at_once(server):
    port, closed = server
    open_notebook = notebook(port)
    started = time.monotonic()
    open_notebook.disconnect()
    assert time.monotonic() - started < 2, "closing waited for the server's next ping"
    for _ in range(2):
        with pytest.raises(websocket.WebSocketException):
            open_notebook.receive(time.monotonic() + 10)
    deadline = time.monotonic() + 5
    while not closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed, "the server never saw the websocket close"
