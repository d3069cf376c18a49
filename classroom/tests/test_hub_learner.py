"""The simulated learner's websocket (classroom/hub_learner.py's Notebook) against
a tornado server that pings as jupyter_server does, only faster: a notebook left
unread past the ping timeout still answers, since a thread answers the pings."""

import asyncio
import json
import threading
import time
from types import SimpleNamespace

import pytest
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


