"""What reading one saved value costs, read by read, on the bench's graph.

    .venv/bin/python -m tools.bench.saved_timing            (T = 20,000 steps, 12 graphs)
    .venv/bin/python -m tools.bench.saved_timing 50000 5

`saved_values.SavedReader` reads, for every value a node saved, its packed
form (`_raw_saved_*`), that form's `unpack_hook` (a value packed by a hook
is never unpacked), the value itself (`_saved_*`) and its shape. On
`h = tanh(W @ h)` each step saves three: MvBackward0's `self` (the shared W)
and `vec` (the previous h), and TanhBackward0's `result` (the step's own
output). This prints, per value and read, the least time per node over a
new graph for each round: the part of a first walk that is torch's own.
"""

import argparse
import gc
import sys
import time
from collections.abc import Callable

import torch

from helpers.walk import collector_paused, walk
from tools.bench.walk_timing import in_a_big_stack, rnn


def packed(nodes: list[object], attr: str, raw: str) -> None:
    for fn in nodes:
        getattr(fn, raw)


def packed_and_hook(nodes: list[object], attr: str, raw: str) -> None:
    for fn in nodes:
        _ = getattr(fn, raw).unpack_hook


def value(nodes: list[object], attr: str, raw: str) -> None:
    for fn in nodes:
        getattr(fn, attr)


def value_and_shape(nodes: list[object], attr: str, raw: str) -> None:
    for fn in nodes:
        _ = getattr(fn, attr).shape


# read -> a loop doing it to each of the nodes, for the saved value `attr` (packed form `raw`)
READS: dict[str, Callable[[list[object], str, str], None]] = {
    "packed form": packed, "packed form and its unpack_hook": packed_and_hook,
    "the value": value, "the value and its shape": value_and_shape,
}
VALUES = {"_saved_self": "MvBackward0 self (W)", "_saved_vec": "MvBackward0 vec (previous h)",
          "_saved_result": "TanhBackward0 result (the step's h)"}


def nodes_saving(steps: int) -> tuple[torch.Tensor, dict[str, list[object]]]:
    """A new graph of `steps` steps (its output, to keep it alive) and, per
    saved value, the nodes that saved it (the first MvBackward0, whose h
    needs no gradient, saves no W and is left out)."""
    h = rnn(steps)[1]
    items, _ = walk([h])
    nodes = [item for item in items if isinstance(item, torch.autograd.graph.Node)]
    return h, {attr: [fn for fn in nodes if getattr(fn, attr, None) is not None] for attr in VALUES}


def measure(steps: int, rounds: int) -> dict[tuple[str, str], float]:
    """(value, read) -> the least seconds per node over `rounds` new graphs."""
    best: dict[tuple[str, str], float] = {}
    for _ in range(rounds):
        h, saving = nodes_saving(steps)
        with collector_paused():
            for attr, nodes in saving.items():
                raw = sys.intern("_raw" + attr)
                for read_name, read in READS.items():
                    start = time.perf_counter()
                    read(nodes, attr, raw)
                    per_node = (time.perf_counter() - start) / len(nodes)
                    key = (attr, read_name)
                    best[key] = min(best.get(key, per_node), per_node)
        del h, saving
        gc.collect()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("steps", nargs="?", type=int, default=20_000)
    parser.add_argument("rounds", nargs="?", type=int, default=12)
    args = parser.parse_args()
    best = in_a_big_stack(lambda: measure(args.steps, args.rounds))
    print(f"| h = tanh(W @ h), T = {args.steps:,}, least of {args.rounds} graphs | "
          + " | ".join(READS) + " |")
    print("|---|" + "---:|" * len(READS))
    for attr, title in VALUES.items():
        print(f"| {title} | " + " | ".join(f"{best[attr, r] * 1e9:.0f} ns" for r in READS) + " |")


if __name__ == "__main__":
    main()
