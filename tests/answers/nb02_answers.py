"""Notebook 02's exercises as learners may answer them (see tests/answers/__init__.py)."""

from helpers.lessons.nb02 import COUNT_LEAVES

COUNT_ALL_NODES = COUNT_LEAVES.replace('node.name().endswith("AccumulateGrad")', "1")

# 02 q3: the count left to the collection's own walk.
BY_TRACE_GRAPH = "from helpers import trace_graph\n\ndef count_leaves(t):\n    return trace_graph(t).count('leaf')\n"
BY_DRAW_GRAPH = ("from helpers import draw_graph\n\ndef count_leaves(t):\n"
                 "    return draw_graph(t).graph.count('leaf')\n")


WRONG = {
    1: (("answer_1 = False", "with Python's is"), ("answer_1 = 'yes'", "True or False")),
    2: (("answer_2 = '_saved_self'", "without it"), ("answer_2 = 'saved_other'", "multiplication"),
        ("answer_2 = 2", "in quotes"), ("answer_2 = 'result'", "_saved_ prefix"),
        ("answer_2 = 'saved_result'", "_saved_ prefix"),
        ("answer_2 = '_raw_saved_result'", "raw packed form"),
        ("answer_2 = 'next_functions'", "not one that holds a saved tensor")),
    3: (("def count_leaves(tensor):\n    return len(tensor.grad_fn.next_functions)", "leaves"),
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
         "'torch::autograd::AccumulateGrad'"),
        (BY_TRACE_GRAPH, "walk the graph for you"), (BY_DRAW_GRAPH, "the exercise is that walk")),
    4: (("answer_4 = 'a'", "waits for more"), ("answer_4 = 'c'", "receive their gradients from it"),
        ("answer_4 = 'd'", "not the order")),
    5: (("answer_5 = 6", "bias=False"), ("answer_5 = 3", "weight and a bias"), ("answer_5 = 8", "ReLU")),
}

RIGHT = {
    3: ("def count_leaves(t):\n    seen, todo = set(), [t.grad_fn]\n    while todo:\n"
        "        f = todo.pop(0)\n        if f is not None and f not in seen:\n            seen.add(f)\n"
        "            todo += [c for c, _ in f.next_functions]\n"
        "    return sum(type(f).__name__ == 'AccumulateGrad' for f in seen)",
        # a numpy integer is a number (judges.FORMS)
        "import numpy\n" + COUNT_LEAVES.replace("return leaves", "return numpy.int64(leaves)"),
        COUNT_LEAVES.replace("return leaves", "return float(leaves)")),
}
