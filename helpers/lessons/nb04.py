"""Notebook 04 (common mistakes): its EXERCISES."""

from typing import Any

import torch

from ..exercises.behaviour import KeptGraphs, data, grads, watched
from ..exercises.exercise import Lesson, Verdict, choose, fix, predict
from ..exercises.feedback import shown
from ..exercises.judges import CHECKER, answer_from, filled_function, known, value
from ..graph import trace_graph
from ..models import TanhRNNCell
from ..quiz import MultipleChoice, Option
from ..saved_memory import SavedTensors

TRAIN = '''
def train(cell, batches):
    losses = []
    h = torch.zeros(cell.b.shape[0])
    for batch in batches:
        h = h.detach()
        for x in batch:
            h = cell(x, h)
        loss = h.pow(2).mean()
        loss.backward()
        losses.append(loss)
    return losses
'''


TRAIN_CASES = ((4, (4, 4, 4)), (14, (2, 5, 3)), (24, (6,)))     # (seed, steps in each batch)


def _cell_and_batches(seed: int, lengths: tuple[int, ...]) -> tuple[TanhRNNCell, list[torch.Tensor]]:
    torch.manual_seed(seed)
    return TanhRNNCell(2, 3), [torch.randn(n, 2) for n in lengths]


def _train(answer: Any, _lesson: Lesson) -> Verdict:
    answer, asked = filled_function(answer), answer_from(TRAIN, "train", None, CHECKER)
    for seed, lengths in TRAIN_CASES:
        cell, batches = _cell_and_batches(seed, lengths)
        try:
            with SavedTensors() as saved, KeptGraphs() as watch:
                losses = answer(cell, batches)
        except RuntimeError as error:
            if "second time" in str(error):
                cut = ("(detach() returns a new tensor: keep it)" if "detach" in watch.called else
                       "(your code is unchanged: nothing calls detach() yet)")
                return False, ("the second batch's backward walks into the first batch's freed graph: h still "
                               f"points there. Cut it at the start of each batch {cut}.")
            if "does not require grad" in str(error):
                return False, ("a batch's loss has no graph: h was cut after the batch's steps ran, so the loss "
                               "was computed from a detached h. Cut it when a batch begins, before its steps.")
            raise
        verdict = _train_losses(losses, lengths)
        if verdict:
            return False, verdict
        reference, reference_batches = _cell_and_batches(seed, lengths)
        asked_losses, asked_peak, _ = watched(asked, reference, reference_batches)
        if not all(torch.allclose(a, b) for a, b in zip(losses, asked_losses, strict=True)):
            return False, ("each batch's graph is right, but the losses' values differ: the values of h must carry "
                           "over from one batch to the next, only its history is cut.")
        wrong = _train_gradients(cell, reference, (seed, lengths)) or _train_memory(
            (saved.peak_bytes, asked_peak), watch.retained)
        if wrong:
            return False, wrong
    return True, ("h.detach() keeps the values and drops the history: every batch has a graph of its own steps, "
                  "freed by its own backward().")


def _train_gradients(cell: TanhRNNCell, reference: TanhRNNCell, case: tuple[int, tuple[int, ...]]) -> str:
    """What is wrong with the gradients a train() left; '' when nothing."""
    given = list(cell.parameters())
    if any(p.grad is None for p in given):
        return "the cell has no gradient: does each loss get its backward()?"
    if all(torch.allclose(known(p.grad, "p.grad"), known(q.grad, "q.grad"))
           for p, q in zip(given, reference.parameters(), strict=True)):
        return ""
    if len(case[1]) > 1 and all(torch.allclose(known(p.grad, "p.grad"), last, atol=1e-6)
                                for p, last in zip(given, _last_batch_grads(reference, *case), strict=True)):
        return ("the cell's gradients hold only the last batch's loss: .grad was reset between batches "
                "(zero_grad()?). With no optimizer step in this loop, each batch's backward() adds to .grad, as "
                "in the code given: change only how h carries over.")
    return "the cell's gradients are not the sum of every batch's loss gradients: is something reset or scaled " \
           "between batches?"


def _last_batch_grads(every: TanhRNNCell, seed: int, lengths: tuple[int, ...]) -> list[torch.Tensor]:
    """The cell's gradients from the last batch's loss alone (h still carried over from the
    batches before): `every` batch's, trained as asked, minus all but the last's."""
    before, batches = _cell_and_batches(seed, lengths)
    answer_from(TRAIN, "train", None, CHECKER)(before, batches[:-1])
    return [known(p.grad, "p.grad") - known(q.grad, "q.grad")
            for p, q in zip(every.parameters(), before.parameters(), strict=True)]


def _train_memory(peaks: tuple[int, int], retained: bool) -> str:
    """What is wrong with the saved tensors a train() kept alive at once; '' when nothing."""
    if peaks[0] <= peaks[1]:
        return ""
    if retained:
        return (f"{peaks[0]} bytes of saved tensors were alive at once against {peaks[1]} for one batch at a time: "
                "retain_graph=True keeps each batch's saved tensors after its backward, and the losses you return "
                "keep them all. Drop retain_graph: each graph is walked once.")
    return (f"every batch's graph was alive at once ({peaks[0]} bytes of saved tensors against {peaks[1]} for one "
            "batch at a time): a backward after the loop frees them only at its end. Give each batch's loss its "
            "own backward() inside the loop, so that batch's graph is freed before the next one is built.")


def _train_losses(losses: Any, lengths: tuple[int, ...]) -> str:
    """What is wrong with the losses a train() returned, from their graphs; '' when nothing."""
    if not isinstance(losses, (list, tuple)) or len(losses) != len(lengths):
        return f"return the list of the {len(lengths)} batch losses."
    if not all(isinstance(loss, torch.Tensor) and loss.grad_fn is not None for loss in losses):
        return ("return the losses as backward saw them, tensors with their graphs (not numbers or detached "
                "copies): the check looks at their graphs.")
    steps = [len(trace_graph(loss).find("TanhBackward0")) for loss in losses]
    if len(lengths) > 1 and steps == [sum(lengths[: i + 1]) for i in range(len(lengths))]:
        return (f"the error is gone, but each batch's graph still holds the earlier batches "
                f"({', '.join(map(str, steps))} steps) and memory grows: cut the history instead of keeping it.")
    if steps != list(lengths):
        return (f"each batch's loss should reach back over its own steps ({', '.join(map(str, lengths))}); yours "
                f"reach {', '.join(map(str, steps))}. Detach once per batch, before its first step.")
    return ""


def _train_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """For each case: the losses' values and steps, the cell's gradients, and
    whether at most one batch's saved tensors were alive at once."""
    observed, asked = {}, answer_from(TRAIN, "train", None, CHECKER)
    for seed, lengths in TRAIN_CASES:
        (cell, batches), (reference, reference_batches) = _cell_and_batches(seed, lengths), \
            _cell_and_batches(seed, lengths)
        losses, peak, _ = watched(answer, cell, batches)
        _, asked_peak, _ = watched(asked, reference, reference_batches)
        steps = [len(trace_graph(loss).find("TanhBackward0")) if isinstance(loss, torch.Tensor) else None
                 for loss in losses]
        observed[f"batches of {lengths} steps"] = {"losses": [data(loss) for loss in losses], "steps": steps,
                                                   "gradients": grads(cell), "one batch's graph at a time":
                                                   peak <= asked_peak}
    return observed


def _inplace_error(_lesson: Lesson) -> str:
    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y.mul_(2)
    try:
        y.sum().backward()
    except RuntimeError as error:
        return "b" if "modified by an inplace operation" in str(error) else "c"
    return "a"


def _second_step_grad(_lesson: Lesson) -> float:
    w = torch.ones(2, requires_grad=True)
    for _ in range(2):
        (w * 3).sum().backward()
        with torch.no_grad():
            w -= 0.1 * known(w.grad, "w.grad")
    return known(w.grad, "w.grad")[0].item()


LOG = '''
def train_and_log(layer, batches):
    total = 0.0
    for x in batches:
        loss = layer(x).pow(2).mean()
        loss.backward()
        total += loss.item()
    return total
'''


LOG_CASES = ((5, 6), (15, 1), (25, 3))     # (seed, batches)


def _layer_and_batches(seed: int, count: int) -> tuple[torch.nn.Linear, torch.Tensor]:
    torch.manual_seed(seed)
    return torch.nn.Linear(4, 4), torch.randn(count, 8, 4)


def _last_batch_only(seed: int, count: int) -> torch.Tensor:
    """The weight's gradient when only the last batch's loss gets a backward()."""
    layer, batches = _layer_and_batches(seed, count)
    layer(batches[-1]).pow(2).mean().backward()
    return known(layer.weight.grad, "the weight's grad")


def _train_and_log(answer: Any, _lesson: Lesson) -> Verdict:
    answer, asked = filled_function(answer), answer_from(LOG, "train_and_log", None, CHECKER)
    for seed, count in LOG_CASES:
        (layer, batches), (reference, _) = _layer_and_batches(seed, count), _layer_and_batches(seed, count)
        total, peak, kept = watched(answer, layer, batches)
        expected, expected_peak, expected_kept = watched(asked, reference, batches)
        wrong = _log_gradients(layer, reference, (seed, count)) or _log_memory(
            total, (peak, expected_peak), (kept, expected_kept))
        if wrong:
            return False, wrong
        if abs(total - expected) > 1e-5:
            return False, f"your logged total is {total:.4g}: add each batch's loss.item() once."
    return True, ("one batch's graph at a time: each loss.backward() frees its batch's saved tensors, and what your "
                  "loop kept for the log holds no graph, so nothing links one batch to the next.")


def _log_gradients(layer: torch.nn.Linear, reference: torch.nn.Linear, case: tuple[int, int]) -> str:
    """What is wrong with the gradients a train_and_log() left; '' when nothing."""
    if layer.weight.grad is None:
        return "the layer has no gradient: does every loss get a backward()?"
    if torch.allclose(layer.weight.grad, known(reference.weight.grad, "the weight's grad")):
        return ""
    if case[1] > 1 and torch.allclose(layer.weight.grad, _last_batch_only(*case)):
        return ("only the last batch's loss was backpropagated: the gradients hold none of the earlier batches. "
                "Call loss.backward() inside the loop, once for each batch's loss.")
    return "the layer's gradients are not the sum of every batch's loss gradients: is something reset or " \
           "scaled between batches?"


def _log_memory(total: Any, peaks: tuple[int, int], kept: tuple[KeptGraphs, KeptGraphs]) -> str:
    """What is wrong with the total and the graphs a train_and_log() kept; '' when nothing."""
    if isinstance(total, torch.Tensor) and total.requires_grad:
        return "your total is a tensor, and every loss added to it keeps its graph alive until the end."
    if kept[0].peak > kept[1].peak:
        return (f"after each backward, what your loop keeps still links every batch's graph ({kept[0].peak} "
                f"autograd nodes at once, against {kept[1].peak} for one batch at a time): a running total of "
                "tensors (total += loss) keeps every batch's graph. Add loss.item(), a plain number, instead.")
    if not isinstance(total, (int, float)):
        return f"return the logged total as a Python number (loss.item() gives one); you returned {shown(total)}."
    if peaks[0] > peaks[1] and kept[0].retained:
        return (f"{peaks[0]} bytes of saved tensors were alive at once against {peaks[1]} for one batch at a "
                "time: retain_graph=True keeps each batch's saved tensors after its backward, until the next loss "
                "replaces it. Drop retain_graph: each graph is walked once.")
    if peaks[0] > peaks[1]:
        return f"{peaks[0]} bytes of saved tensors were alive at once against {peaks[1]} for one batch at a time."
    return ""


def _log_probe(answer: Any, _lesson: Lesson) -> dict[str, Any]:
    """For each case: the total and its type, the gradients, and whether at
    most one batch's saved tensors and graph were alive at once."""
    observed, asked = {}, answer_from(LOG, "train_and_log", None, CHECKER)
    for seed, count in LOG_CASES:
        (layer, batches), (reference, _) = _layer_and_batches(seed, count), _layer_and_batches(seed, count)
        total, peak, kept = watched(answer, layer, batches)
        _, expected_peak, expected_kept = watched(asked, reference, batches)
        one_at_a_time = peak <= expected_peak and kept.peak <= expected_kept.peak
        observed[f"{count} batches"] = {"total": data(total), "a Python number": isinstance(total, (int, float)),
                                        "gradients": grads(layer), "one graph at a time": one_at_a_time}
    return observed


INPLACE = MultipleChoice(
    "What happens?",
    (
        Option("No error: `mul_` is an ordinary multiplication.",
               "mul_ is an in-place operation on a tensor that sigmoid saved for its backward; that is not ordinary."),
        Option("\"one of the variables needed for gradient computation has been modified by an inplace operation\"",
               "SigmoidBackward0 saved its result y, and mul_ bumped y._version; backward refuses a saved tensor that "
               "changed since it was saved."),
        Option("\"Trying to backward through the graph a second time\"",
               "this graph is walked only once; nothing has freed it."),
        Option("\"element 0 of tensors does not require grad and does not have a grad_fn\"",
               "x requires grad and sigmoid records a node, so y has a graph."),
    ),
    right=_inplace_error,
)

EXERCISES = (
    fix(1, "the hidden state across batches", _train, TRAIN, probe=_train_probe,
        hint="The values of h should carry over to the next batch; its history should not."),
    choose(2, "which error?", INPLACE, answer="b",
           hint="What does SigmoidBackward0 save, and what does mul_ do to it?", optional=True),
    predict(3, "the gradient in the second step", "a number",
            value(_second_step_grad, "nothing reset w.grad, so the second backward added 3 to the 3 already there.",
                  hints=((3.0, "nothing reset w.grad between the steps: backward adds to what is there."),
                         (2.7, "the update changes w, but the gradient of (w * 3).sum() is 3 whatever w is."))),
            hint="What is d/dw of (w * 3).sum()? And what does backward do with .grad that is already set?",
            answer="6", optional=True),
    fix(4, "logging without keeping graphs", _train_and_log, LOG, probe=_log_probe,
        hint="Keep a running total of plain numbers, and give each loss its own backward().", optional=True),
)
