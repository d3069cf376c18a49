"""Notebook 04's exercises as learners may answer them (see tests/answers/__init__.py)."""

from helpers.lessons.nb04 import LOG
from helpers.lessons.nb04 import TRAIN as TRAIN_04

UNFIXED = TRAIN_04.replace("        h = h.detach()\n", "")

# 04 q1: one backward of every batch's loss at the end: each batch's graph stays alive until then.
SUMMED_AT_THE_END = TRAIN_04.replace("        loss.backward()\n", "").replace(
    "    return losses", "    sum(losses).backward()\n    return losses")

# 04 q1: the gradients reset before each batch's backward, so only the last batch's are left.
ZEROED_PER_BATCH = TRAIN_04.replace("        loss.backward()\n", "        cell.zero_grad()\n        loss.backward()\n")

UNLOGGED = '''
def train_and_log(layer, batches):
    total = 0
    for x in batches:
        loss = layer(x).pow(2).mean()
        total = total + loss
    total.backward()
    return total
'''


WRONG = {
    1: ((UNFIXED, "your code is unchanged: nothing calls detach() yet"),
        (UNFIXED.replace("            h = cell(x, h)\n",
                         "            h.detach()\n            h = cell(x, h)\n"),
         "detach() returns a new tensor: keep it"),
        (UNFIXED.replace("loss.backward()", "loss.backward(retain_graph=True)"), "4, 8, 12"),
        (TRAIN_04.replace("            h = cell(x, h)", "            h = cell(x, h.detach())"),
         "once per batch"),
        (TRAIN_04.replace("        h = h.detach()", "        h = torch.zeros(cell.b.shape[0])"), "carry over"),
        (TRAIN_04.replace("losses.append(loss)", "losses.append(loss.item())"), "not numbers"),
        (UNFIXED.replace("            h = cell(x, h)\n",
                         "            h = cell(x, h)\n        h = h.detach()\n"), "Cut it when a batch begins"),
        (TRAIN_04.replace("        loss.backward()\n", ""), "each loss get its backward"),
        (SUMMED_AT_THE_END, "alive at once"), (ZEROED_PER_BATCH, "only the last batch's"),
        (TRAIN_04.replace("loss.backward()", "loss.backward(retain_graph=True)"), "retain_graph=True keeps")),
    2: (("answer_2 = 'a'", "in-place"), ("answer_2 = 'c'", "this graph is walked only once")),
    3: (("answer_3 = 3", "nothing reset"), ("answer_3 = 2.7", "whatever w is"),
        ("answer_3 = [6.0, 6.0]", "each element is the same: give that one number")),
    4: ((UNLOGGED, "keeps its graph"), (LOG.replace("loss.item()", "loss.item() * 2"), "logged total"),
        (LOG.replace("        loss.backward()\n", ""), "has no gradient"),
        (LOG.replace("loss.backward()", "(loss / 2).backward()"), "reset or scaled"),
        (LOG.replace("total += loss.item()", "total = total + loss.detach()"), "Python number"),
        (LOG.replace("total += loss.item()", "total += loss").replace("return total", "return total.item()"),
         "a running total of tensors"),
        (LOG.replace("        loss.backward()\n", "").replace("    return total",
                                                               "    loss.backward()\n    return total"),
         "only the last batch's loss was backpropagated"),
        (LOG.replace("loss.backward()", "loss.backward(retain_graph=True)"), "retain_graph=True keeps")),
}

RIGHT = {
    4: (LOG.replace("total += loss.item()", "total = total + loss.detach()").replace(
        "return total", "return total.item()"),),
}
