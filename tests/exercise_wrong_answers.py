"""Wrong answers to every exercise, with words the hint each must get:
tests/test_exercises.py checks that each gets its hint. Keyed by notebook
and exercise number; test data only, kept out of the package learners
import."""

from helpers.exercises.nb03 import TRAIN_STEP
from helpers.exercises.nb04 import LOG
from helpers.exercises.nb04 import TRAIN as TRAIN_04
from helpers.exercises.nb05 import TBPTT
from helpers.exercises.nb07 import CUBE, MUL
from helpers.exercises.nb08 import TRAIN as TRAIN_08

# Broken versions of solutions, as a learner might leave them.
RECOMPUTED = TRAIN_STEP.replace("    (loss_a + loss_b).backward()\n", """    loss_a.backward()
    features = torch.tanh(trunk(inputs))
    head_b(features).abs().mean().backward()
""")
UNFIXED = TRAIN_04.replace("        h = h.detach()\n", "")
UNLOGGED = '''
def train_and_log(layer, batches):
    total = 0
    for x in batches:
        loss = layer(x).pow(2).mean()
        total = total + loss
    total.backward()
    return total
'''
BROKEN_MUL = MUL.replace("a.grad += b.data", "a.grad = a.data").replace("b.grad += a.data", "b.grad = b.data")
BROKEN_TRAIN = '''
def train(model, data, target, steps):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = (model(data) - target).pow(2).mean()
    for _ in range(steps):
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
    return loss
'''

WRONG = {
    ("01", 1): (("answer_1 = 82", "drawing"), ("answer_1 = 40", "AccumulateGrad"),
                ("answer_1 = '41'", "without quotes")),
    ("01", 2): (("def sign_forward(x):\n    return x * 3 if x > 0 else x * x", "multiplies x by itself"),
                ("def sign_forward(x):\n    return torch.where(x > 0, x * 3, x ** 2)", "torch.where"),
                ("def sign_forward(x):\n    return x * 3 if x >= 0 else x ** 2", "0 is not positive"),
                ("def sign_forward(x):\n    return x * 3 if x > 1 else x ** 2", "for x = 0.5"),
                ("def sign_forward(x):\n    return (x * 3).detach() if x > 0 else x ** 2", "no grad_fn"),
                ("def sign_forward(x):\n    return ____", "replace ____")),
    ("01", 3): (("answer_3 = 7", "too few"), ("answer_3 = 9", "too many")),
    ("01", 4): (("answer_4 = 'a'", "recorded like any other"), ("answer_4 = 'c'", "recording is on"),
                ("answer_4 = 'e'", "one of the letters")),
    ("02", 1): (("answer_1 = False", "with `is`"), ("answer_1 = 'yes'", "True or False")),
    ("02", 2): (("answer_2 = '_saved_self'", "without it"), ("answer_2 = 'saved_other'", "multiplication"),
                ("answer_2 = 2", "in quotes")),
    ("02", 3): (("def count_leaves(tensor):\n    return len(tensor.grad_fn.next_functions)", "leaves"),
                ("def count_leaves(t):\n    q, n = [t.grad_fn], 0\n    while q:\n        f = q.pop()\n"
                 "        n += f.name().endswith('AccumulateGrad')\n        q += [c for c, _ in f.next_functions]\n"
                 "    return n", "None entries"),
                ("def count_leaves(t):\n    q, n = [t.grad_fn], 0\n    while q:\n        f = q.pop()\n"
                 "        if f is None:\n            continue\n        n += f.name().endswith('AccumulateGrad')\n"
                 "        q += [c for c, _ in f.next_functions]\n    return n", "a set of the nodes")),
    ("02", 4): (("answer_4 = 'a'", "waits for more"), ("answer_4 = 'c'", "receive their gradients from it"),
                ("answer_4 = 'd'", "not the order")),
    ("02", 5): (("answer_5 = 6", "bias=False"), ("answer_5 = 3", "weight and a bias"), ("answer_5 = 8", "ReLU")),
    ("03", 1): (("answer_1 = {'2 * x', 'x - 1', 'x.clone()'}", "Python number 2"),
                ("answer_1 = {'x - 1'}", "one more of them"), ("answer_1 = set()", "2 more of them"),
                ("answer_1 = {'x - 1', 'x.clone()', 'x.sin()'}", "cos(x)")),
    ("03", 2): (("answer_2 = 6", "accumulate"), ("answer_2 = 12", "three")),
    ("03", 3): (("answer_3 = 12928", "its weight"), ("answer_3 = 4512", "4 bytes"), ("answer_3 = 26240", "once")),
    ("03", 4): ((TRAIN_STEP.replace("(loss_a + loss_b).backward()", "loss_a.backward()\n    loss_b.backward()"),
                 "still raises"),
                (TRAIN_STEP.replace("(loss_a + loss_b).backward()",
                                    "loss_a.backward(retain_graph=True)\n    loss_b.backward()"), "retain_graph"),
                (TRAIN_STEP.replace("(loss_a + loss_b).backward()", "loss_a.backward()"), "each loss reach"),
                (TRAIN_STEP.replace("(loss_a + loss_b).backward()", "((loss_a + loss_b) / 2).backward()"),
                 "0.5 times"),
                (RECOMPUTED, "runs the trunk 2 times")),
    ("04", 1): ((UNFIXED, "freed graph"),
                (UNFIXED.replace("loss.backward()", "loss.backward(retain_graph=True)"), "4, 8, 12"),
                (TRAIN_04.replace("            h = cell(x, h)", "            h = cell(x, h.detach())"),
                 "once per batch"),
                (TRAIN_04.replace("        h = h.detach()", "        h = torch.zeros(cell.b.shape[0])"), "carry over"),
                (TRAIN_04.replace("losses.append(loss)", "losses.append(loss.item())"), "not numbers"),
                (TRAIN_04.replace("        loss.backward()\n", ""), "each loss get its backward")),
    ("04", 2): (("answer_2 = 'a'", "in-place"), ("answer_2 = 'c'", "only once")),
    ("04", 3): (("answer_3 = 3", "nothing reset"), ("answer_3 = 2.7", "whatever w is")),
    ("04", 4): ((UNLOGGED, "keeps its graph"), (LOG.replace("loss.item()", "loss.item() * 2"), "logged total"),
                (LOG.replace("        loss.backward()\n", ""), "has no gradient"),
                (LOG.replace("loss.backward()", "(loss / 2).backward()"), "reset or scaled"),
                (LOG.replace("total += loss.item()", "total = total + loss.detach()"), "Python number")),
    ("05", 1): (("answer_1 = 0.325", "useful fraction"), ("answer_1 = 27", "between 0 and 1")),
    ("05", 2): ((TBPTT.replace("        h = h.detach()\n", ""), "reaches back to the first step"),
                (TBPTT.replace("h = cell(x, h)", "h = cell(x, h.detach())"), "every step"),
                (TBPTT.replace("    return losses", "    return losses[-1:]"), "one loss per chunk")),
    ("05", 3): (("answer_3 = {'p'}", "look again at r"), ("answer_3 = {'p', 'q', 'r'}", "what made it")),
    ("05", 4): (("answer_4 = 'a'", "too strong"), ("answer_4 = 'c'", "flexibility")),
    ("06", 1): (("answer_1 = False", "MulBackward0 saves"), ("answer_1 = 'error'", "True or False")),
    ("06", 2): (("answer_2 = True", "saves nothing"), ("answer_2 = 0", "True or False")),
    ("06", 3): (("answer_3 = 4", "never overwrites"), ("answer_3 = True", "a number")),
    ("06", 4): (("answer_4 = 2", "can still run"), ("answer_4 = 0", "first call only")),
    ("06", 5): (("answer_5 = 'a'", "nothing was recorded"), ("answer_5 = 'c'", "none was built")),
    ("06", 6): (("def survives(x):\n    return (x * x + x).sum()", "MulBackward0"),
                ("def survives(x):\n    return x + x", "scalar"),
                ("def survives(x):\n    return x.sum()", "at least three operations")),
    ("07", 1): (("answer_1 = 4", "three times"), ("answer_1 = 1", "only one")),
    ("07", 2): ((BROKEN_MUL, "swaps them"),
                (MUL.replace("a.grad += b.data", "a.grad = b.data"), "not overwrite it"),
                (MUL.replace(" * out.grad", ""), "scale by the grad it receives"),
                (MUL.replace("b.grad += a.data", "b.grad += b.data"), "check both factors")),
    ("07", 3): ((CUBE.replace("        ctx.save_for_backward(x)\n", "        ctx.x = x\n").replace(
                    "(x,) = ctx.saved_tensors", "x = ctx.x"), "save_for_backward"),
                (CUBE.replace("3 * x ** 2 * grad", "x ** 2 * grad"), "gradcheck"),
                (CUBE.replace("3 * x ** 2 * grad", "3 * x ** 2"), "times the grad it receives"),
                (CUBE.replace("return x ** 3", "return x ** 2"), "x ** 3")),
    ("07", 4): (("answer_4 = 'c'", "creation order"), ("answer_4 = 'd'", "correctness")),
    ("07", 5): (("answer_5 = 80", "first derivative"), ("answer_5 = 20", "not at x = 1"),
                ("answer_5 = True", "not numbers")),
    ("08", 1): (("answer_1 = 4", "no AccumulateGrad node"), ("answer_1 = 0", "still trains")),
    ("08", 2): (("answer_2 = 'a'", "does not delete"), ("answer_2 = 'c'", "no MulBackward0")),
    ("08", 3): (("def freeze_all_but_last(model):\n    return model", "only the last layer's"),
                ("def freeze_all_but_last(model):\n    return model.requires_grad_(False)",
                 "must stay trainable")),
    ("08", 4): ((BROKEN_TRAIN, "in place"),
                (TRAIN_08.replace("optimizer.zero_grad()", "pass"), "differ"),
                (BROKEN_TRAIN.replace("loss.backward(retain_graph=True)", "loss.backward()"),
                 "forward pass of its own")),
    ("08", 5): (("answer_5 = True", "what is y.clone()"), ("answer_5 = 'no'", "True or False")),
}
