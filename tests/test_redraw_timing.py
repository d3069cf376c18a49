"""The in-page redraw breakdown (tools/bench/redraw_timing.py), on a made-up
websocket log whose parts are known."""

from datetime import datetime, timedelta, timezone

from tools.bench.redraw_timing import PARTS, breakdown

ORIGIN = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _kernel_message(page_ms, kernel_ms, kind):
    date = (ORIGIN + timedelta(milliseconds=kernel_ms)).isoformat().replace("+00:00", "Z")
    head = f'{{"header": {{"date": "{date}", "msg_type": "{kind}"}}'
    if kind == "status":
        head += ', "content": {"execution_state": "busy"}'
    return {"dir": "in", "t": page_ms, "head": head}


def test_the_parts_add_up_to_the_time_in_the_page():
    log = [
        {"dir": "out", "t": 102.0, "head": '{"header": {"msg_type": "comm_msg"}}'},
        _kernel_message(108.0, 105.0, "status"),        # busy at 105 on the kernel's clock
        _kernel_message(109.0, 106.0, "comm_msg"),      # the control's echo
        _kernel_message(130.0, 121.0, "comm_msg"),      # the new HTML, sent at 121
    ]
    parts = breakdown(log, start=100.0, total=33.0, origin=ORIGIN.timestamp() * 1000)
    assert parts == {"before send": 2.0, "to the kernel": 3.0, "kernel": 16.0,
                     "back to the page": 9.0, "DOM update": 3.0}
    assert list(parts) == list(PARTS)
    assert sum(parts.values()) == 33.0


def test_a_log_without_the_kernel_messages_gives_no_breakdown():
    sent = {"dir": "out", "t": 102.0, "head": '{"header": {"msg_type": "comm_msg"}}'}
    assert breakdown([sent], start=100.0, total=33.0, origin=ORIGIN.timestamp() * 1000) is None
    assert breakdown([], start=100.0, total=33.0, origin=0.0) is None


def test_the_table_breaks_down_every_widget():
    """Each widget's row carries the median of each part over the changes
    whose log shows them; a widget with no such change shows dashes."""
    from tools.bench.redraw_timing import table

    parts = dict(zip(PARTS, (2.0, 3.0, 16.0, 9.0, 3.0), strict=True))
    slower = {part: value * 2 for part, value in parts.items()}
    rows = table([("01-a", "branch: x slider", [33.0, 66.0, 33.0], [parts, slower, None]),
                  ("08-b", "mode: train() checkbox", [40.0, 41.0, 42.0], [None, None, None])])
    assert rows[2] == "| 01 branch: x slider | 33 ms | 33 ms | 66 ms | 3.0 | 4.5 | 24.0 | 13.5 | 4.5 |"
    assert rows[3] == "| 08 mode: train() checkbox | 40 ms | 41 ms | 42 ms | - | - | - | - | - |"
    assert all(f"{part} (median)" in rows[0] for part in PARTS)
