"""Notebook 03's exercises as learners may answer them (see tests/answers/__init__.py)."""

from helpers.lessons.nb03 import TRAIN_STEP

# Broken versions of solutions, as a learner might leave them.
RECOMPUTED = TRAIN_STEP.replace("    (loss_a + loss_b).backward()\n", """    loss_a.backward()
    features = torch.tanh(trunk(inputs))
    head_b(features).abs().mean().backward()
""")

# 03 q4: the second backward walks the trunk again, its graph kept by a positional retain_graph.
POSITIONAL_RETAIN = TRAIN_STEP.replace("(loss_a + loss_b).backward()",
                                       "loss_a.backward(None, True)\n    loss_b.backward()")

# 03 q4: the trunk run again through .forward, which skips the module's forward hooks.
THROUGH_FORWARD = RECOMPUTED.replace("trunk(inputs)", "trunk.forward(inputs)")


WRONG = {
    1: (("answer_1 = {'2 * x', 'x - 1', 'x.clone()'}", "Python number 2"),
        ("answer_1 = {'x - 1'}", "one more of them"), ("answer_1 = set()", "2 more of them"),
        ("answer_1 = {'x - 1', 'x.clone()', 'x.sin()'}", "cos(x)"),
        ("answer_1 = {'x-1', 'x.clone()'}", "'x-1' is not one of the names")),
    2: (("answer_2 = 6", "accumulate"), ("answer_2 = 12", "three")),
    3: (("answer_3 = 12928", "its weight"), ("answer_3 = 4512", "4 bytes"), ("answer_3 = 26240", "once"),
        ("answer_3 = 22144", "input is counted twice"), ("answer_3 = 50816", "first layer's weight")),
    4: ((TRAIN_STEP.replace("(loss_a + loss_b).backward()", "loss_a.backward()\n    loss_b.backward()"),
         "still raises"),
        (TRAIN_STEP.replace("(loss_a + loss_b).backward()",
                            "loss_a.backward(retain_graph=True)\n    loss_b.backward()"), "retain_graph"),
        (TRAIN_STEP.replace("(loss_a + loss_b).backward()", "loss_a.backward()"), "each loss reach"),
        (TRAIN_STEP.replace("(loss_a + loss_b).backward()", "((loss_a + loss_b) / 2).backward()"),
         "0.5 times"),
        (RECOMPUTED, "runs the trunk 2 times"), (THROUGH_FORWARD, "runs the trunk 2 times"),
        (POSITIONAL_RETAIN, "walks the trunk's graph 2 times")),
}

RIGHT = {
    # names with spaces around them, in another case, in a list (judges.FORMS)
    1: ("answer_1 = {' x - 1', 'x.clone() '}", "answer_1 = ['X.Clone()', 'x - 1']"),
    4: (TRAIN_STEP.replace("    features =", '    """One backward, no retain_graph."""\n    features ='),
        TRAIN_STEP.replace("trunk(inputs)", "trunk.forward(inputs)"),
        TRAIN_STEP.replace("trunk(inputs)", "inputs @ trunk.weight.T + trunk.bias"),
        TRAIN_STEP.replace("(loss_a + loss_b).backward()", "torch.autograd.backward([loss_a, loss_b])")),
}
