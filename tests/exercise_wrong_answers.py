"""Wrong answers to every exercise, with words the hint each must get, and
right answers written otherwise than the solution: tests/test_exercises.py
checks that each wrong one gets its hint and each right one is right. Keyed
by notebook and exercise number; test data only, kept out of the package
learners import."""

from helpers.exercises.nb02 import COUNT_LEAVES
from helpers.exercises.nb03 import TRAIN_STEP
from helpers.exercises.nb04 import LOG
from helpers.exercises.nb04 import TRAIN as TRAIN_04
from helpers.exercises.nb05 import TBPTT
from helpers.exercises.nb07 import CUBE, MUL
from helpers.exercises.nb08 import FREEZE
from helpers.exercises.nb08 import TRAIN as TRAIN_08
from helpers.exercises.nb09 import CLIPPED, CLIPPED_FIXED, LEAKY

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

# 03 q4: the second backward walks the trunk again, its graph kept by a positional retain_graph.
POSITIONAL_RETAIN = TRAIN_STEP.replace("(loss_a + loss_b).backward()",
                                       "loss_a.backward(None, True)\n    loss_b.backward()")
# 03 q4: the trunk run again through .forward, which skips the module's forward hooks.
THROUGH_FORWARD = RECOMPUTED.replace("trunk(inputs)", "trunk.forward(inputs)")
# 07 q2: the value and the inputs the product records.
SUM_NOT_PRODUCT = MUL.replace("Value(a.data * b.data, (a, b)", "Value(a.data + b.data, (a,)")
ONE_INPUT = MUL.replace("Value(a.data * b.data, (a, b)", "Value(a.data * b.data, (a,)")
COUNT_ALL_NODES = COUNT_LEAVES.replace('node.name().endswith("AccumulateGrad")', "1")
PLAIN_ATTRIBUTE = FREEZE.replace("requires_grad_(False)", "requires_grad = False").replace(
    "model[-1].requires_grad_(True)", "model[-1].requires_grad = True")
HARD_CODED = FREEZE.replace("model[-1]", "model[4]")
OVERWRITING_SETS = FREEZE.replace("model[-1].requires_grad_(True)", "model[-1].requires_grad_(False)")
# 05 q2: the first k - 1 steps of each chunk run unrecorded, under no_grad, with no detach anywhere.
NO_GRAD_STEPS = TBPTT.replace("""        for x in sequence[start:start + k]:
            h = cell(x, h)
""", """        chunk = sequence[start:start + k]
        with torch.no_grad():
            for x in chunk[:-1]:
                h = cell(x, h)
        h = cell(chunk[-1], h)
""").replace("        h = h.detach()\n", "")
# 07 q3: the derivative as 3y/x, right except at x = 0 (0/0).
THROUGH_Y = CUBE.replace("ctx.save_for_backward(x)\n        return x ** 3",
                         "y = x ** 3\n        ctx.save_for_backward(x, y)\n        return y").replace(
    "(x,) = ctx.saved_tensors\n        return 3 * x ** 2 * grad",
    "x, y = ctx.saved_tensors\n        return 3 * y / x * grad")
# 08 q3: a frozen copy returned, the model passed in left as it was.
FROZEN_COPY = "import copy\n" + FREEZE.replace("    for parameter",
                                               "    model = copy.deepcopy(model)\n    for parameter")
# 08 q3: the plain attribute set on each module, the last one by its place.
MODULE_ATTRIBUTE = FREEZE.replace("""    for parameter in model.parameters():
        parameter.requires_grad_(False)
""", """    for layer in model:
        layer.requires_grad = False
""")

WRONG = {
    ("01", 1): (("answer_1 = 25", "2n + 1"), ("answer_1 = 41", "20 rounds"), ("answer_1 = 37", "two leaves"),
                ("answer_1 = 49", "one leaf"),
                ("answer_1 = 36", "AccumulateGrad"), ("answer_1 = '38'", "without quotes"),
                ("answer_1 = 51", "not autograd nodes")),
    ("01", 2): (("def sign_forward(x):\n    return x * 3 if x > 0 else x * x", "multiplies x by itself"),
                ("def sign_forward(x):\n    return torch.where(x > 0, x * 3, x ** 2)", "torch.where"),
                ("def sign_forward(x):\n    return x * 3 if x >= 0 else x ** 2", "0 is not positive"),
                ("def sign_forward(x):\n    return x * 3 if x > 1 else x ** 2", "for x = 0.5"),
                ("def sign_forward(x):\n    return x * 3 if x > 0.25 else x ** 2", "for x = 1e-06"),
                ("def sign_forward(x):\n    return x * 3 if x > 0 else x ** 2 + 0 * x.detach()", "x ** 2"),
                ("def sign_forward(x):\n    return (x * 3).expand(2)", "shape"),
                ("def sign_forward(x):\n    return (x * 3).detach() if x > 0 else x ** 2", "no grad_fn"),
                ("def sign_forward(x):\n    return ____", "replace ____")),
    ("01", 3): (("answer_3 = 7", "too few"), ("answer_3 = 9", "too many"),
                ("answer_3 = None", "None is not an answer: replace ____ with a number")),
    ("01", 4): (("answer_4 = 'a'", "recorded like any other"), ("answer_4 = 'c'", "recording is on"),
                ("answer_4 = 'e'", "one of the letters")),
    ("02", 1): (("answer_1 = False", "with `is`"), ("answer_1 = 'yes'", "True or False")),
    ("02", 2): (("answer_2 = '_saved_self'", "without it"), ("answer_2 = 'saved_other'", "multiplication"),
                ("answer_2 = 2", "in quotes"), ("answer_2 = 'result'", "_saved_ prefix"),
                ("answer_2 = 'saved_result'", "_saved_ prefix"),
                ("answer_2 = '_raw_saved_result'", "raw packed form"),
                ("answer_2 = 'next_functions'", "not one that holds a saved tensor")),
    ("02", 3): (("def count_leaves(tensor):\n    return len(tensor.grad_fn.next_functions)", "leaves"),
                ("def count_leaves(t):\n    q, n = [t.grad_fn], 0\n    while q:\n        f = q.pop()\n"
                 "        n += f.name().endswith('AccumulateGrad')\n        q += [c for c, _ in f.next_functions]\n"
                 "    return n", "None entries"),
                ("def count_leaves(t):\n    q, n = [t.grad_fn], 0\n    while q:\n        f = q.pop()\n"
                 "        if f is None:\n            continue\n        n += f.name().endswith('AccumulateGrad')\n"
                 "        q += [c for c, _ in f.next_functions]\n    return n", "a set of the nodes"),
                (COUNT_ALL_NODES, "count only the AccumulateGrad"),
                ("def count_leaves(t):\n    seen, queue, n = set(), [t.grad_fn], 0\n    while queue:\n"
                 "        f = queue.pop(0)\n        if f is None or f in seen:\n            continue\n"
                 "        seen.add(f)\n        n += f.name().endswith('AccumulateGrad')\n"
                 "        queue.extend(f.next_functions)\n    return n", "a pair (node, output number)"),
                ("def count_leaves(t):\n    node = t.grad_fn\n    while node.next_functions:\n"
                 "        node = node.next_functions[0][0]\n    return 1", "(here x.detach())"),
                (COUNT_LEAVES.replace('.endswith("AccumulateGrad")', ' == "AccumulateGrad"'),
                 "'torch::autograd::AccumulateGrad'")),
    ("02", 4): (("answer_4 = 'a'", "waits for more"), ("answer_4 = 'c'", "receive their gradients from it"),
                ("answer_4 = 'd'", "not the order")),
    ("02", 5): (("answer_5 = 6", "bias=False"), ("answer_5 = 3", "weight and a bias"), ("answer_5 = 8", "ReLU")),
    ("03", 1): (("answer_1 = {'2 * x', 'x - 1', 'x.clone()'}", "Python number 2"),
                ("answer_1 = {'x - 1'}", "one more of them"), ("answer_1 = set()", "2 more of them"),
                ("answer_1 = {'x - 1', 'x.clone()', 'x.sin()'}", "cos(x)"),
                ("answer_1 = {'x-1', 'x.clone()'}", "'x-1' is not one of the names")),
    ("03", 2): (("answer_2 = 6", "accumulate"), ("answer_2 = 12", "three")),
    ("03", 3): (("answer_3 = 12928", "its weight"), ("answer_3 = 4512", "4 bytes"), ("answer_3 = 26240", "once"),
                ("answer_3 = 22144", "input is counted twice"), ("answer_3 = 50816", "first layer's weight")),
    ("03", 4): ((TRAIN_STEP.replace("(loss_a + loss_b).backward()", "loss_a.backward()\n    loss_b.backward()"),
                 "still raises"),
                (TRAIN_STEP.replace("(loss_a + loss_b).backward()",
                                    "loss_a.backward(retain_graph=True)\n    loss_b.backward()"), "retain_graph"),
                (TRAIN_STEP.replace("(loss_a + loss_b).backward()", "loss_a.backward()"), "each loss reach"),
                (TRAIN_STEP.replace("(loss_a + loss_b).backward()", "((loss_a + loss_b) / 2).backward()"),
                 "0.5 times"),
                (RECOMPUTED, "runs the trunk 2 times"), (THROUGH_FORWARD, "runs the trunk 2 times"),
                (POSITIONAL_RETAIN, "walks the trunk's graph 2 times")),
    ("04", 1): ((UNFIXED, "your code is unchanged: nothing calls detach() yet"),
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
                (TRAIN_04.replace("        loss.backward()\n", ""), "each loss get its backward")),
    ("04", 2): (("answer_2 = 'a'", "in-place"), ("answer_2 = 'c'", "this graph is walked only once")),
    ("04", 3): (("answer_3 = 3", "nothing reset"), ("answer_3 = 2.7", "whatever w is"),
                ("answer_3 = [6.0, 6.0]", "each element is the same: give that one number")),
    ("04", 4): ((UNLOGGED, "keeps its graph"), (LOG.replace("loss.item()", "loss.item() * 2"), "logged total"),
                (LOG.replace("        loss.backward()\n", ""), "has no gradient"),
                (LOG.replace("loss.backward()", "(loss / 2).backward()"), "reset or scaled"),
                (LOG.replace("total += loss.item()", "total = total + loss.detach()"), "Python number"),
                (LOG.replace("total += loss.item()", "total += loss").replace("return total", "return total.item()"),
                 "a running total of tensors"),
                (LOG.replace("        loss.backward()\n", "").replace("    return total",
                                                                       "    loss.backward()\n    return total"),
                 "only the last batch's loss was backpropagated"),
                (LOG.replace("loss.backward()", "loss.backward(retain_graph=True)"), "retain_graph=True keeps")),
    ("05", 1): (("answer_1 = 0.325", "useful fraction"), ("answer_1 = 27", "between 0 and 1")),
    ("05", 2): ((TBPTT.replace("        h = h.detach()\n", ""), "reaches back to the first step"),
                (TBPTT.replace("h = cell(x, h)", "h = cell(x, h.detach())"), "only one step of each chunk"),
                (NO_GRAD_STEPS, "under torch.no_grad()"),
                (TBPTT.replace(".mean()", ".sum()"), "must be h.pow(2).mean()"),
                (TBPTT.replace("    return losses", "    return losses[-1:]"), "one loss per chunk"),
                (TBPTT.replace("sequence[start:start + k]", "sequence[start:k]"), "the cell ran 4 times")),
    ("05", 3): (("answer_3 = {'p'}", "look again at r"), ("answer_3 = {'p', 'q', 'r'}", "what made it")),
    ("05", 4): (("answer_4 = 'a'", "compiles nothing"), ("answer_4 = 'c'", "neither loops nor recursion"),
                ("answer_4 = 'd'", "for speed")),
    ("06", 1): (("answer_1 = False", "AbsBackward0 keep"), ("answer_1 = 'error'", "True or False")),
    ("06", 2): (("answer_2 = True", "does not save x"), ("answer_2 = 0", "True or False")),
    ("06", 3): (("answer_3 = 4", "never overwrites"), ("answer_3 = True", "a number")),
    ("06", 4): (("answer_4 = 2", "can still run"), ("answer_4 = 0", "first call only")),
    ("06", 5): (("answer_5 = 'a'", "nothing was recorded"), ("answer_5 = 'c'", "none was built")),
    ("06", 6): (("def survives(x):\n    return (x * x + x).sum()", "MulBackward0 saved other and self"),
                ("def survives(x):\n    return x + x", "scalar"),
                ("def survives(x):\n    return x - x.neg() + 1", "vector x of 2 numbers"),
                ("def survives(x):\n    return x.sum()", "at least three operations")),
    ("07", 1): (("answer_1 = 4", "three times"), ("answer_1 = 1", "only one")),
    ("07", 2): ((BROKEN_MUL, "swaps them"),
                (MUL.replace("a.grad += b.data", "a.grad = b.data"), "not overwrite it"),
                (MUL.replace(" * out.grad", ""), "scale by the grad it receives"),
                (MUL.replace("b.grad += a.data", "b.grad += b.data"), "check both factors"),
                (SUM_NOT_PRODUCT, "out holds a.data * b.data"), (ONE_INPUT, "both inputs"),
                ("def mul(a, b):\n    return a * b", "the engine's own product")),
    ("07", 3): ((CUBE.replace("        ctx.save_for_backward(x)\n", "        ctx.x = x\n").replace(
                    "(x,) = ctx.saved_tensors", "x = ctx.x"), "save_for_backward"),
                (CUBE.replace("3 * x ** 2 * grad", "x ** 2 * grad"), "gradcheck"),
                (CUBE.replace("3 * x ** 2 * grad", "3 * x ** 2"), "times the grad it receives"),
                (CUBE.replace("return x ** 3", "return x ** 2"), "x ** 3"),
                (THROUGH_Y, "divides by x (0/0 there)")),
    ("07", 4): (("answer_4 = 'c'", "creation order"), ("answer_4 = 'd'", "correctness")),
    ("07", 5): (("answer_5 = 80", "first derivative"), ("answer_5 = 20", "not at x = 1"),
                ("answer_5 = True", "not numbers")),
    ("08", 1): (("answer_1 = 1", "any of its inputs requires grad"), ("answer_1 = 3", "nothing entering layer 0"),
                ("answer_1 = 0", "middle layer trains")),
    ("08", 2): (("answer_2 = 'a'", "neither of its inputs"), ("answer_2 = 'c'", "depends on its inputs"),
                ("answer_2 = 'd'", "whatever came before")),
    ("08", 3): (("def freeze_all_but_last(model):\n    return model", "only the last layer's"),
                ("def freeze_all_but_last(model):\n    return model.requires_grad_(False)",
                 "must stay trainable"),
                (HARD_CODED, "model of 3 modules"), (PLAIN_ATTRIBUTE, "model[4].requires_grad = ... sets"),
                (MODULE_ATTRIBUTE, "model[0].requires_grad = ... sets"), (FROZEN_COPY, "must itself be frozen"),
                (OVERWRITING_SETS, "must stay trainable")),
    ("08", 4): ((BROKEN_TRAIN, "in place"),
                (TRAIN_08.replace("optimizer.zero_grad()", "pass"), "reset it every step"),
                (TRAIN_08.replace("        optimizer.zero_grad()\n", "").replace(
                    "        loss.backward()\n", "        loss.backward()\n        optimizer.zero_grad()\n"),
                 "weights did not change"),
                (TRAIN_08.replace("lr=0.1", "lr=0.2"), "differ from"),
                (BROKEN_TRAIN.replace("loss.backward(retain_graph=True)", "loss.backward()"),
                 "forward pass of its own")),
    ("08", 5): (("answer_5 = True", "what does AddBackward0 save"), ("answer_5 = 'no'", "True or False")),
    ("09", 1): (("answer_1 = 6", "reuses that graph"), ("answer_1 = 4", "only for a pair that is called"),
                ("answer_1 = 2", "count distinct pairs")),
    ("09", 2): ((CLIPPED, "breaks the graph"), (CLIPPED_FIXED.replace("largest > 1", "largest > 2"), "gives"),
                (CLIPPED_FIXED.replace("return y /", "return x /"), "gives"),
                ("def clipped(x):\n    y = x * 2\n    return torch.where(y.max() > 1, y / y.max(), y)\n",
                 "the one not chosen too"),
                ("def clipped(x):\n    y = x * 2\n    return y / y.max().clamp(min=1)\n", "y.max() is exactly 1")),
    ("09", 3): (("answer_3 = 'a'", "AOTAutograd"), ("answer_3 = 'd'", "the last one")),
    ("09", 4): (("def leaky(x):\n    if x > 0:\n        return x\n    return 0.1 * x\n", "ambiguous"),
                ("def leaky(x):\n    return torch.stack([v if v > 0 else 0.1 * v for v in x])\n", "breaks the graph"),
                (LEAKY.replace("0.1 * x", "0.01 * x"), "gives"), (LEAKY.replace("x > 0", "x >= 0"), "0 is not > 0")),
}

# Right answers written otherwise than the solution: each must be right too.
RIGHT = {
    ("01", 2): ("def sign_forward(x):\n    if x <= 0:\n        return x ** 2\n    return 3 * x",),
    ("02", 3): ("def count_leaves(t):\n    seen, todo = set(), [t.grad_fn]\n    while todo:\n"
                "        f = todo.pop(0)\n        if f is not None and f not in seen:\n            seen.add(f)\n"
                "            todo += [c for c, _ in f.next_functions]\n"
                "    return sum(type(f).__name__ == 'AccumulateGrad' for f in seen)",),
    ("03", 4): (TRAIN_STEP.replace("    features =", '    """One backward, no retain_graph."""\n    features ='),
                TRAIN_STEP.replace("trunk(inputs)", "trunk.forward(inputs)"),
                TRAIN_STEP.replace("trunk(inputs)", "inputs @ trunk.weight.T + trunk.bias"),
                TRAIN_STEP.replace("(loss_a + loss_b).backward()", "torch.autograd.backward([loss_a, loss_b])")),
    ("04", 4): (LOG.replace("total += loss.item()", "total = total + loss.detach()").replace(
        "return total", "return total.item()"),),
    ("07", 2): (MUL.replace("b.data * out.grad", "out.grad * b.data").replace(
        "        b.grad += a.data * out.grad\n", "        b.grad = b.grad + a.data * out.grad\n"),),
    ("08", 3): ("def freeze_all_but_last(model):\n    *body, last = model\n    for layer in body:\n"
                "        layer.requires_grad_(False)\n    return model",),
    ("09", 2): (CLIPPED_FIXED.replace("largest > 1, largest, 1.0", "largest <= 1, 1.0, largest"),
                "def clipped(x):\n    y = x * 2\n    big = y.max() > 1\n"
                "    return torch.where(big, y / torch.where(big, y.max(), 1.0), y)\n"),
    ("09", 4): ("def leaky(x):\n    return torch.nn.functional.leaky_relu(x, 0.1)\n",),
}

# Right answers whose feedback must also say something about how they are written.
RIGHT_SAYING = {
    ("08", 4): ((TRAIN_08.replace("loss.backward()", "loss.backward(retain_graph=True)"),
                 "retain_graph=True can go"),),
}
