"""The helpers on graphs from code nobody here wrote (torch.nn, custom Functions, checkpointing, hooks, nested
tensors, torch.nn's transformer stacks): each matches an independent walk, drawing changes and keeps
nothing, text lines stay within 120 characters, stacks roll."""

import gc
import weakref

import pytest
import torch
from graph_check import check_graph, unconnected
from torch.utils.checkpoint import checkpoint

import helpers.svg
from helpers import draw_graph, trace_graph
from tools.testkit.real_models import REAL, STACKS, _checkpointed_encoder


@pytest.mark.parametrize("name", [*REAL, "checkpointed encoder"])
def test_real_graphs_match_an_independent_walk_in_text_lines_of_at_most_120_characters(name):
    torch.manual_seed(0)
    root = _checkpointed_encoder() if name == "checkpointed encoder" else REAL[name]()
    check_graph(root)
    lines = str(draw_graph(root)).splitlines()
    assert max(map(len, lines)) <= 120, max(lines, key=len)


@pytest.mark.parametrize("reentrant", [False, True])
def test_drawing_a_checkpointed_model_changes_nothing(reentrant):
    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    calls = []
    block.register_forward_hook(lambda *_: calls.append(1))
    y = checkpoint(block, torch.randn(8, 4, requires_grad=True), use_reentrant=reentrant).sum()
    before = (len(calls), block[1].num_batches_tracked.item(), block[1].running_mean.clone())
    graph, drawing = check_graph(y)
    assert (len(calls), block[1].num_batches_tracked.item()) == before[:2]
    assert torch.equal(block[1].running_mean, before[2])
    if not reentrant:
        assert "recomputed in backward (checkpoint)" in str(drawing)


def test_a_value_packed_by_a_user_hook_is_not_unpacked_by_drawing():
    store = {}

    def pack(tensor):
        store[len(store)] = tensor
        return len(store) - 1

    def unpack(key):
        return store.pop(key)            # hands each tensor out once, like an offloading hook

    x = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x.exp() * x).sum()
    drawing = draw_graph(y)
    assert "packed by a saved-tensor hook (as int)" in str(drawing)
    y.backward()                          # still works: drawing consumed nothing
    assert torch.allclose(x.grad, x.exp() * x + x.exp())


def test_a_custom_function_whose_ctx_has_a_variable_is_an_op():
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.variable = "not a leaf"
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = torch.randn(3, requires_grad=True)
    graph, _ = check_graph(Scale.apply(x).sum())
    assert [n.label for n in graph.nodes if n.kind == "op"] == ["SumBackward0", "ScaleBackward"]
    assert graph.count("leaf") == 1


def test_a_custom_function_with_400_saved_tensors_gets_bounded_labels():
    class Many(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(*[a] * 400)
            return a.clone()

        @staticmethod
        def backward(ctx, grad):
            return grad

    _, drawing = check_graph(Many.apply(torch.randn(3, requires_grad=True)).sum())
    assert max(len(line) for line in str(drawing).splitlines()) <= 120
    assert max(len(line) for line in drawing.source.splitlines()) < 600


def test_nested_tensors_strided_and_jagged():
    parts = [torch.randn(2, 3), torch.randn(4, 3)]
    strided = torch.nested.nested_tensor(parts, layout=torch.strided, requires_grad=True)
    _, drawing = check_graph(torch.nested.to_padded_tensor(strided * 2, 0).sum())
    assert "nested, sizes vary" in str(drawing)
    jagged = torch.nested.nested_tensor(parts, layout=torch.jagged, requires_grad=True)
    _, drawing = check_graph((jagged * 2).values().sum())
    assert "shape (2, j" in str(drawing)


def test_a_leaf_passed_with_its_result_is_one_node():
    x = torch.randn(3, requires_grad=True)
    graph = trace_graph([x * 2, x])
    assert graph.count("leaf") == 1 and len(graph.nodes) == 4


def test_negative_integers_read_as_negative():
    x = torch.randn(2, 5, requires_grad=True)
    text = str(draw_graph(torch.softmax(x, dim=-1)[-1].sum()))
    assert "dim: -1" in text and "18446744073709551615" not in text


def test_labels_are_one_line_and_summarise_tensors():
    x = torch.randn(3, 4, requires_grad=True)
    text = str(draw_graph(x[:, torch.tensor([[0, 1], [1, 2]])].sum()))
    assert "tensor([[" not in text and "(None, tensor of shape (2, 2))" in text


def test_a_saved_tensor_modified_in_place_says_so():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    z = y * 1
    y.add_(1)
    text = str(draw_graph(z))
    assert "modified in place since saved (version 0 then, 1 now)" in text


def test_a_wide_row_does_not_crowd_out_the_structure_behind_it():
    x = torch.randn(1000, requires_grad=True)
    graph = trace_graph(list((x * 2).unbind()), max_nodes=300)
    assert graph.count("output") <= 300 // 8
    assert graph.find("UnbindBackward0") and graph.find("MulBackward0") and graph.count("leaf") == 1
    assert graph.omitted == 1000 - graph.count("output")


def test_a_cut_gru_keeps_its_recurrence():
    torch.manual_seed(0)
    cut = trace_graph(REAL["GRU, 3 layers, bidirectional, packed"](), max_nodes=150)
    assert {"SigmoidBackward0", "TanhBackward0", "AddmmBackward0"} <= {n.label for n in cut.nodes}


@pytest.mark.parametrize("build", [*REAL.values(), *(lambda b=b: b()[1] for b in STACKS.values())],
                         ids=[*REAL, *STACKS])
def test_after_a_cut_every_drawn_node_leads_to_an_output(build):
    """A distributions loss at max_nodes=50 once kept 3 inputs whose every consumer the cut dropped."""
    torch.manual_seed(0)
    y = build()
    for max_nodes in (20, 30, 50, 100, 150):
        graph = trace_graph(y, max_nodes=max_nodes)
        assert unconnected(graph) == [], max_nodes
        assert draw_graph(y, max_nodes=max_nodes).graph == graph


# torch.nn's transformer stacks (tools/testkit/real_models.py's STACKS), in train mode.

def _drawings(loss, model):
    """Every way a learner draws a model (cut, whole, rolled, named), and the first's SVG."""
    drawings = [draw_graph(loss), draw_graph(loss, max_nodes=None), draw_graph(loss, roll=True),
                draw_graph(loss, model, max_nodes=None)]
    assert drawings[0].svg().startswith("<svg")
    return drawings


@pytest.mark.parametrize("name", STACKS)
def test_a_stack_matches_an_independent_walk_and_drawing_it_changes_nothing(name):
    model, loss = STACKS[name]()
    calls = []
    for module in model.modules():
        module.register_forward_pre_hook(lambda *_: calls.append("pre"))
        module.register_forward_hook(lambda *_: calls.append("forward"))
    buffers = {n: b.clone() for n, b in model.named_buffers()}
    check_graph(loss)
    helpers.svg._laid_out.cache_clear()         # a cut that ends like another model's would be laid out already
    for drawing, how in zip(_drawings(loss, model), ("cut", "whole", "rolled", "named"), strict=True):
        lines = str(drawing).splitlines()
        assert max(map(len, lines)) <= 120, (how, max(lines, key=len))
    assert calls == []
    assert [n for n, p in model.named_parameters() if p.grad is not None] == []
    assert [n for n, b in model.named_buffers() if not torch.equal(b, buffers[n])] == []
    loss.backward()
    undrawn, undrawn_loss = STACKS[name]()
    undrawn_loss.backward()
    assert torch.equal(loss, undrawn_loss)
    grads = dict(undrawn.named_parameters())
    differ = [n for n, p in model.named_parameters() if not torch.equal(p.grad, grads[n].grad)]
    assert differ == [] and len(grads) > 10


def _drawn_model(name):
    """Weak references to the drawn model, its loss and a parameter (a graph kept alive keeps its parameters)."""
    model, loss = STACKS[name]()
    _drawings(loss, model)
    trace_graph(loss, model)
    return weakref.ref(model), weakref.ref(loss), weakref.ref(next(model.parameters()))


@pytest.mark.parametrize("name", STACKS)
def test_drawing_keeps_no_stack_alive(name):
    kept = _drawn_model(name)
    gc.collect()
    assert [ref() is None for ref in kept] == [True, True, True]


LAYERS = {name: layers for name in STACKS if (layers := int(name.split(", ")[1].split()[0])) >= 4}


@pytest.mark.parametrize("name", [n for n in LAYERS if n.startswith(("TransformerEncoder", "causal"))])
def test_roll_folds_a_layer_stack(name):
    """N layers fold into N - 2 steps of one layer each (the first and last stay drawn)."""
    layers = LAYERS[name]
    _, loss = STACKS[name]()
    full = trace_graph(loss, saved=False)
    smaller = trace_graph(STACKS[name.replace(f"{layers} layers", "2 layers")]()[1], saved=False)
    per_layer = (len(full.nodes) - len(smaller.nodes)) // (layers - 2)
    drawing = draw_graph(loss, roll=True, max_nodes=None)
    groups = [r for r in drawing.graph.rolled if r.steps]
    assert (layers - 2, (layers - 2) * per_layer) in [(r.steps, r.nodes) for r in groups], (per_layer, groups)
    assert f"× {layers - 2} steps" in str(drawing)
    assert len(drawing.graph.nodes) - len(groups) + sum(r.nodes for r in groups) == len(full.nodes)
    assert unconnected(drawing.graph) == []
    cut = draw_graph(loss, roll=True).graph              # the default cut keeps the layers' group
    assert (layers - 2, (layers - 2) * per_layer) in [(r.steps, r.nodes) for r in cut.rolled] and not cut.rolled_out


def test_roll_folds_both_stacks_of_a_transformer():
    """torch.nn.Transformer's encoder and decoder: two stacks of 6 layers, two groups of 4."""
    loss = STACKS["Transformer, 6 layers"]()[1]
    for max_nodes in (None, 300):
        rolled = draw_graph(loss, roll=True, max_nodes=max_nodes).graph
        assert sorted(r.steps for r in rolled.rolled if r.steps >= 4) == [4, 4], max_nodes
