"""Notebook 08's exercises as learners may answer them (see tests/answers/__init__.py)."""

from helpers.lessons.nb08 import FREEZE
from helpers.lessons.nb08 import TRAIN as TRAIN_08

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

PLAIN_ATTRIBUTE = FREEZE.replace("requires_grad_(False)", "requires_grad = False").replace(
    "model[-1].requires_grad_(True)", "model[-1].requires_grad = True")

HARD_CODED = FREEZE.replace("model[-1]", "model[4]")

OVERWRITING_SETS = FREEZE.replace("model[-1].requires_grad_(True)", "model[-1].requires_grad_(False)")

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
    1: (("answer_1 = 1", "any of its inputs requires grad"), ("answer_1 = 3", "nothing entering layer 0"),
        ("answer_1 = 0", "middle layer trains")),
    2: (("answer_2 = 'a'", "neither of its inputs"), ("answer_2 = 'c'", "depends on its inputs"),
        ("answer_2 = 'd'", "whatever came before")),
    3: (("def freeze_all_but_last(model):\n    return model", "only the last layer's"),
        ("def freeze_all_but_last(model):\n    return model.requires_grad_(False)",
         "must stay trainable"),
        (HARD_CODED, "model of 3 modules"), (PLAIN_ATTRIBUTE, "model[4].requires_grad = ... sets"),
        (MODULE_ATTRIBUTE, "model[0].requires_grad = ... sets"), (FROZEN_COPY, "must itself be frozen"),
        (OVERWRITING_SETS, "must stay trainable")),
    4: ((BROKEN_TRAIN, "in place"),
        (TRAIN_08.replace("optimizer.zero_grad()", "pass"), "reset it every step"),
        (TRAIN_08.replace("        optimizer.zero_grad()\n", "").replace(
            "        loss.backward()\n", "        loss.backward()\n        optimizer.zero_grad()\n"),
         "weights did not change"),
        (TRAIN_08.replace("lr=0.1", "lr=0.2"), "differ from"),
        (BROKEN_TRAIN.replace("loss.backward(retain_graph=True)", "loss.backward()"),
         "forward pass of its own")),
    5: (("answer_5 = True", "what does AddBackward0 save"), ("answer_5 = 'no'", "True or False")),
}

RIGHT = {
    4: (TRAIN_08.replace("    return loss", "    return loss.detach()"),),
    3: ("def freeze_all_but_last(model):\n    *body, last = model\n    for layer in body:\n"
        "        layer.requires_grad_(False)\n    return model",),
}

# Right answers whose feedback must also say something about how they are written.
RIGHT_SAYING = {
    4: ((TRAIN_08.replace("loss.backward()", "loss.backward(retain_graph=True)"),
         "retain_graph=True can go"),),
}
