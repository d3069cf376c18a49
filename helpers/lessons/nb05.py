"""Notebook 05 (the interview question): its widgets' views, WIDGETS and EXERCISES."""

from typing import Any

import torch

from ..arguments import learner_facing
from ..draw import Figure
from ..exercises.behaviour import data, grads
from ..exercises.exercise import Lesson, Verdict, choose, predict, write
from ..exercises.judges import CHECKER, answer_from, filled_function, value
from ..graph import trace_graph
from ..models import TanhRNNCell
from ..quiz import MultipleChoice, Option
from ..views import unrolled
from .widget import Check, Widget, press


@learner_facing
def length_view(cell: TanhRNNCell, length: int, view: str = "cut") -> Figure:
    """The graph for one random sequence of `length` steps (the same
    sequence for the same length), drawn as `view` says, steps counted."""
    generator = torch.Generator().manual_seed(length)
    return unrolled(cell, torch.randn(length, cell.w_x.shape[1], generator=generator), "", view)


WIDGETS = (
    Widget("length", {"length": "IntSlider", "view": "ToggleButtons"},
           (Check(press("length"), "length 4, 4 cell steps counted in its graph (rolled)", {"TanhBackward0": 4}),
            Check(press("length", "End"), "length 30, 30 cell steps counted in its graph (rolled)",
                  shows=("× 28 steps",)))),
)


def _padded_waste(_lesson: Lesson) -> float:
    padded = torch.nn.utils.rnn.pad_sequence([torch.ones(n) for n in (10, 1, 1, 1)], batch_first=True)
    return float((padded == 0).float().mean())


TBPTT = '''
def tbptt_losses(cell, sequence, k):
    losses = []
    h = torch.zeros(4)   # the cell's hidden_size
    for start in range(0, len(sequence), k):
        h = h.detach()
        for x in sequence[start:start + k]:
            h = cell(x, h)
        losses.append(h.pow(2).mean())
    return losses
'''


TBPTT_CASES = ((6, 10, 4), (6, 10, 3), (6, 10, 1), (6, 10, 10), (6, 10, 12), (16, 7, 2))   # (seed, length, k)


def _cell_and_sequence(seed: int, length: int) -> tuple[TanhRNNCell, torch.Tensor]:
    torch.manual_seed(seed)
    return TanhRNNCell(3, 4), torch.randn(length, 3)


def _counted(answer: Any, cell: TanhRNNCell, sequence: torch.Tensor, k: int) -> tuple[Any, int]:
    """What `answer(cell, sequence, k)` returns, and how many times it ran the cell."""
    calls = []
    hook = cell.register_forward_hook(lambda *_: calls.append(1))
    try:
        return answer(cell, sequence, k), len(calls)
    finally:
        hook.remove()


def _steps(losses: Any) -> list[int]:
    return [len(trace_graph(loss).find("TanhBackward0")) for loss in losses]


def _tbptt(answer: Any, _lesson: Lesson) -> Verdict:
    answer, asked = filled_function(answer), answer_from(TBPTT, "tbptt_losses", None, CHECKER)
    for seed, length, k in TBPTT_CASES:
        cell, sequence = _cell_and_sequence(seed, length)
        (mine, calls), theirs = _counted(answer, cell, sequence, k), asked(cell, sequence, k)
        where = f"for {length} steps and k = {k}"
        if not isinstance(mine, (list, tuple)) or len(mine) != len(theirs):
            return False, f"return one loss per chunk, as a list: {len(theirs)} losses {where}."
        if 0 < calls != length:
            return False, (f"{where} the cell ran {calls} times: every step of the sequence must run once, in the "
                           "chunk that holds it. Check which rows of the sequence each chunk loops over.")
        if not all(isinstance(loss, torch.Tensor) and loss.grad_fn is not None for loss in mine):
            return False, "a loss without a graph: take each chunk's loss after its steps have run."
        steps, wanted = _steps(mine), _steps(theirs)
        if steps != wanted and steps[-1] == len(sequence):
            return False, ("each chunk's loss reaches back to the first step: detach h when a chunk begins, so "
                           "backward stops at the chunk's start.")
        if steps != wanted and max(steps) == 1:
            return False, ("backward reaches back only one step of each chunk: steps run without recording (after "
                           "a detach, or under torch.no_grad()) leave nothing for backward to walk. Cut h once, "
                           "when a chunk begins, and let the chunk's k steps record.")
        if steps != wanted:
            return False, f"{where} your losses' graphs span {steps} steps; chunks of k steps span {wanted}."
        if not all(torch.allclose(a, b) for a, b in zip(mine, theirs, strict=True)):
            return False, _values_differ(mine, theirs)
    return True, ("each chunk's graph spans at most k steps, so backward reaches back at most k steps; memory stays "
                  "bounded when each chunk's loss is backpropagated before the next chunk runs.")


def _values_differ(mine: Any, theirs: Any) -> str:
    """Why losses with the right graphs have other values: the loss's form
    (every value off by one factor) or h not carried over."""
    pairs = [(a.detach(), b.detach()) for a, b in zip(mine, theirs, strict=True)]
    ratios = [a.item() / b.item() for a, b in pairs if a.numel() == 1 and b.item() != 0]
    one_factor = len(ratios) == len(pairs) and all(abs(r - ratios[0]) < 1e-4 * abs(ratios[0]) for r in ratios)
    if one_factor and abs(ratios[0] - 1) > 1e-4:
        return (f"every loss is {ratios[0]:g} times the one asked for: h carries over, but the loss must be "
                "h.pow(2).mean(), as the question says.")
    return "the chunk losses' values differ: h's values must carry over from chunk to chunk."


def _tbptt_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """For each case: the losses' values and steps, and the gradients of their sum."""
    observed = {}
    for seed, length, k in TBPTT_CASES:
        cell, sequence = _cell_and_sequence(seed, length)
        losses = answer(cell, sequence, k)
        sum(losses).backward()
        observed[f"{length} steps, k = {k}"] = {"losses": [data(loss) for loss in losses], "steps": _steps(losses),
                                                "gradients": grads(cell)}
    return observed


def _leaves(_lesson: Lesson) -> set[str]:
    p = torch.nn.Parameter(torch.ones(2))
    q = p * 2
    r = q.detach()
    return {name for name, t in {"p": p, "q": q, "r": r}.items() if t.is_leaf}


TREE = MultipleChoice(
    "A model reads each sentence's parse tree and combines word vectors bottom-up, with a Python function that "
    "calls itself on each subtree, so every sentence has a different tree. Why can eager PyTorch train it as it "
    "is?",
    (
        Option("PyTorch compiles one graph per tree shape the first time it meets it, and reuses it.",
               "eager PyTorch compiles nothing: each forward pass records its operations as they run, and the next "
               "pass records afresh."),
        Option("Each forward pass records the operations the recursion ran, so each graph has its sentence's "
               "tree shape.",
               "autograd never sees the recursion, only the tensor operations it runs, recorded as they run: each "
               "sentence's graph has its tree's shape, and backward walks that graph."),
        Option("It cannot: autograd records a loop over a sequence, but not a function that calls itself.",
               "autograd sees neither loops nor recursion, only the tensor operations they run; a recursive call "
               "records them just as a loop does."),
        Option("Each tree must first be padded to one full tree of the largest depth, as sequences are padded.",
               "padding is for speed when batching; a sentence's own tree runs as it is, and its graph follows it."),
    ),
    right="b",
)

EXERCISES = (
    predict(1, "count the waste", "a fraction between 0 and 1",
            value(_padded_waste, "padded: 4 x 10 = 40 steps, real: 13, wasted: 27 of 40.",
                  hints=((0.325, "that is the useful fraction: 13 real steps of 40."),
                         (27, "give the wasted fraction of the padded work, between 0 and 1."),
                         (27 / 13, "that compares the waste with the real steps; the question asks what fraction of "
                                   "all the padded steps is waste."),
                         (67.5, "a fraction between 0 and 1, not a percentage.")),
                  otherwise="count the padded steps (every sequence as long as the longest) and the real ones.",
                  tolerance=0.01),
            hint="Padding makes every sequence as long as the longest: how many steps is that in all?",
            answer="0.675"),
    write(2, "truncated backpropagation through time", _tbptt, TBPTT, probe=_tbptt_probe,
          hint="Where must h's history be cut so that each loss reaches back only to the start of its chunk?",
          optional=True),
    predict(3, "leaf or not?", "a set of names, such as {'p'}",
            value(_leaves, "p was created by you, and r = q.detach() has no history: both are leaves. q was made "
                  "by an operation (MulBackward0).",
                  hints=(({"p"}, "look again at r: does it have a grad_fn?"),
                         ({"p", "q", "r"}, "look again at q: what made it?"),
                         ({"p", "q"}, "check q.grad_fn and r.grad_fn."))),
            hint="A tensor is a leaf when no recorded operation made it: check .is_leaf for each.",
            answer="{'p', 'r'}", optional=True),
    choose(4, "a model shaped like a tree", TREE, answer="b",
           hint="What does autograd see of your Python: the recursion, or the tensor operations it runs?"),
)
