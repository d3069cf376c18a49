"""Notebook 05's exercises as learners may answer them (see tests/answers/__init__.py)."""

from helpers.lessons.nb05 import TBPTT

# 05 q2: the first k - 1 steps of each chunk run unrecorded, under no_grad, with no detach anywhere.
NO_GRAD_STEPS = TBPTT.replace("""        for x in sequence[start:start + k]:
            h = cell(x, h)
""", """        chunk = sequence[start:start + k]
        with torch.no_grad():
            for x in chunk[:-1]:
                h = cell(x, h)
        h = cell(chunk[-1], h)
""").replace("        h = h.detach()\n", "")


WRONG = {
    1: (("answer_1 = 0.325", "useful fraction"), ("answer_1 = 27", "between 0 and 1")),
    2: ((TBPTT.replace("        h = h.detach()\n", ""), "reaches back to the first step"),
        (TBPTT.replace("h = cell(x, h)", "h = cell(x, h.detach())"), "only one step of each chunk"),
        (NO_GRAD_STEPS, "under torch.no_grad()"),
        (TBPTT.replace(".mean()", ".sum()"), "must be h.pow(2).mean()"),
        (TBPTT.replace("    return losses", "    return losses[-1:]"), "one loss per chunk"),
        (TBPTT.replace("sequence[start:start + k]", "sequence[start:k]"), "the cell ran 4 times")),
    3: (("answer_3 = {'p'}", "look again at r"), ("answer_3 = {'p', 'q', 'r'}", "what made it")),
    4: (("answer_4 = 'a'", "compiles nothing"), ("answer_4 = 'c'", "neither loops nor recursion"),
        ("answer_4 = 'd'", "for speed")),
}

RIGHT = {
    # names with spaces around them, in another case, in a list (judges.FORMS)
    3: ("answer_3 = {' p', 'R '}", "answer_3 = ['r', 'P']"),
}
