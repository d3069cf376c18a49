"""A graph walked whole by the helpers is freed without crashing, at any depth (`walk.hold`). Each case
runs in a child process on the usual 8 MB stack: without the walk's holding, the crash (SIGSEGV) would
end pytest."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STACK = 8 * 2**20      # bytes: the main thread's stack in each child
# in the child, first: its stack's limit (lowered at most: a hard limit below it is kept)
LIMIT_STACK = ("import resource; _, hard = resource.getrlimit(resource.RLIMIT_STACK); "
               f"resource.setrlimit(resource.RLIMIT_STACK, ({STACK} if hard == resource.RLIM_INFINITY "
               f"else min({STACK}, hard), hard))")
# (before the loop, the loop's body, after it): each ends with h, the root to walk
BUILD = {
    "rnn": ("", "h = torch.tanh(w @ h)", ""),
    "chain": ("", "h = h * 1.0", ""),
    # every step also an input of the last node: each step a short path from the root away, and
    # freeing the root's inputs in order frees the chain from its far end, one step inside the next
    "gathered": ("steps = []", "h = h * 1.0; steps.append(h)", "h = torch.stack(steps).sum(); del steps"),
    # two chains, one feeding the other at each step
    "summed": ("total = h", "h = h * 1.0; total = total + h", "h = total; del total"),
}
CALLS = {
    "trace_graph": "trace_graph(h)",
    "roll": "draw_graph(h, roll=True)",
    "whole": "draw_graph(h, max_nodes=None)",
    "record_backward": "record_backward(h.sum())",    # walks for its hooks, then runs backward()
    "cut": "trace_graph(h, max_nodes=5_000)",          # a walk that stops after 50,000 nodes
}
# backward() then del; a plain del, and a reassignment, free the same way.
CASES = [(shape, steps, call, "del h" if call == "record_backward" else "h.sum().backward(); del h")
         for shape, steps in (("rnn", 40_000), ("chain", 100_000)) for call in CALLS if call != "cut"]
CASES += [("rnn", 40_000, "trace_graph", "del h"), ("chain", 100_000, "trace_graph", "h = None"),
          ("chain", 100_000, "cut", "del h"), ("gathered", 60_000, "trace_graph", "del h"),
          ("gathered", 60_000, "whole", "h.sum().backward(); del h"), ("summed", 100_000, "trace_graph", "del h")]


@pytest.mark.parametrize(("shape", "steps", "call", "then"), CASES)
def test_a_deep_graph_walked_whole_is_freed_without_a_crash(shape, steps, call, then):
    lines = [LIMIT_STACK, "import torch", "from helpers import draw_graph, trace_graph",
             "from helpers.engine import record_backward",
             "w = torch.randn(4, 4, requires_grad=True)", "h = torch.randn(4, requires_grad=True)",
             BUILD[shape][0], f"for _ in range({steps}):", f"    {BUILD[shape][1]}", BUILD[shape][2], CALLS[call],
             *then.split("; "), "print('freed')"]
    done = subprocess.run([sys.executable, "-c", "\n".join(lines)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0 and done.stdout.strip().endswith("freed"), (done.returncode, done.stderr[-2000:])
