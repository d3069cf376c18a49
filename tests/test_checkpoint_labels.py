"""The label of a value saved under an activation checkpoint is true: a leaf and the checkpoint's input are read
again, never recomputed (with or without a selective policy); a view of a leaf made inside is made again;
what the checkpointed function made is recomputed, or kept as the policy says."""

import gc
import weakref
from functools import partial

import pytest
import torch
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

from helpers import checkpoint_policy, trace_graph
from helpers.checkpoint_policy import (
    EITHER,
    INPUT,
    KEPT,
    LEAF,
    LEAF_VIEW,
    NO_GRAD,
    NO_GRAD_POLICY,
    OUTSIDE,
    RECOMPUTED,
    UNKNOWN,
)
from helpers.saved_values import MAX_TEXT, one_line


def _keep_matmuls(ctx, func, *args, **kwargs):
    matmul = func in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default)
    return CheckpointPolicy.MUST_SAVE if matmul else CheckpointPolicy.PREFER_RECOMPUTE


def _run(block, data, how):
    options = {} if how == "plain" else {"context_fn": partial(create_selective_checkpoint_contexts, _keep_matmuls)}
    return checkpoint(block, data, use_reentrant=False, **options)


def _texts(output):
    return {(node.label, saved.name): saved.text for node in trace_graph(output).nodes for saved in node.saved}


@pytest.fixture
def block():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.LayerNorm(4), torch.nn.Linear(4, 4), torch.nn.Tanh())


@pytest.mark.parametrize("how", ["plain", "policy"])
def test_a_checkpointed_blocks_leaf_weights_are_read_again_and_its_weights_view_recomputed(block, how):
    """LayerNorm saves its weight and bias (leaves); Linear saves weight.t(), a view of a leaf, made again."""
    texts = _texts(_run(block, torch.randn(2, 3, 4, requires_grad=True) * 2, how))
    assert texts[("NativeLayerNormBackward0", "weight")] == LEAF
    assert texts[("NativeLayerNormBackward0", "bias")] == LEAF
    assert texts[("AddmmBackward0", "mat2")] == LEAF_VIEW
    assert texts[("NativeLayerNormBackward0", "input")] == INPUT      # x * 2, made before the checkpoint
    assert texts[("NativeLayerNormBackward0", "result1")] == RECOMPUTED  # the mean: an output of the op
    assert texts[("AddmmBackward0", "mat1")] == RECOMPUTED            # LayerNorm's output, seen through a view
    assert texts[("TanhBackward0", "result")] == RECOMPUTED
    leaf = _texts(_run(block, torch.randn(2, 3, 4, requires_grad=True), how))    # a leaf as the input
    assert leaf[("NativeLayerNormBackward0", "input")] == LEAF


def test_a_view_of_a_leaf_is_made_again_from_the_leaf_as_it_is_in_backward():
    """weight.t() is recomputed in backward (one more t() per Linear): a weight changed in place after the forward
    raises in the plain model but is used silently, new values and all, under the checkpoint."""
    calls = []

    class CountT(torch.utils._python_dispatch.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            calls.append(func is torch.ops.aten.t.default)
            return func(*args, **(kwargs or {}))

    torch.manual_seed(0)
    x = torch.randn(5, 3)
    grads = {}
    for how in ("plain", "checkpoint", "fresh"):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
        if how == "fresh":
            with torch.no_grad():
                model[2].weight.mul_(2)
        with CountT():
            loss = (checkpoint(model, x, use_reentrant=False) if how == "checkpoint" else model(x)).sum()
            if how != "fresh":
                with torch.no_grad():
                    model[2].weight.mul_(2)
            if how == "plain":
                with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                    loss.backward()
            else:
                loss.backward()
                grads[how] = model[0].weight.grad
        grads[how + " t() calls"] = sum(calls)
        calls.clear()
    assert torch.equal(grads["checkpoint"], grads["fresh"])
    assert grads["checkpoint t() calls"] == grads["fresh t() calls"] + 2
    w = torch.randn(4, 4, requires_grad=True)
    y = checkpoint(lambda a, b: a @ b, torch.randn(3, 4, requires_grad=True), w.t(), use_reentrant=False)
    assert _texts(y)[("MmBackward0", "mat2")] == INPUT


def test_what_the_policy_kept_says_kept():
    torch.manual_seed(0)
    w = torch.randn(4, 4, requires_grad=True)
    context = partial(create_selective_checkpoint_contexts, _keep_matmuls)
    y = checkpoint(lambda x: (x @ w).sin(), torch.randn(3, 4) * 1, use_reentrant=False, context_fn=context)
    texts = _texts(y)
    assert texts[("SinBackward0", "self")] == KEPT
    assert texts[("MmBackward0", "self")] == NO_GRAD_POLICY           # needs no grad: not told apart


def test_the_labels_say_what_the_checkpoint_holds():
    """Measured: the input is held, what the function made is freed after forward, a no-grad tensor kept if passed."""
    torch.manual_seed(0)
    w = torch.randn(4, 4, requires_grad=True)
    made = {}

    def function(x, mask):
        inner = x @ w
        made["inner"], made["ones"] = weakref.ref(inner), weakref.ref(ones := torch.ones(3, 4))
        return (inner.sin() * mask * ones).sum()

    x, mask = torch.randn(3, 4, requires_grad=True).exp(), torch.rand(3, 4)
    kept_x, kept_mask = weakref.ref(x), weakref.ref(mask)
    y = checkpoint(function, x, mask, use_reentrant=False)
    texts = _texts(y)
    del x, mask
    gc.collect()
    assert texts[("MmBackward0", "self")] == INPUT and kept_x() is not None
    assert texts[("SinBackward0", "self")] == RECOMPUTED and made["inner"]() is None
    assert texts[("MulBackward0", "other")] == NO_GRAD
    assert kept_mask() is not None and made["ones"]() is None
    y.backward()


def test_a_per_call_policy_still_says_either():
    torch.manual_seed(0)
    w, calls = torch.randn(4, 4, requires_grad=True), []

    def first_mm_only(ctx, func, *args, **kwargs):
        calls.append(func)
        keep = func == torch.ops.aten.mm.default and len(calls) == 1
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

    context = partial(create_selective_checkpoint_contexts, first_mm_only)
    x = torch.randn(3, 4, requires_grad=True)
    y = checkpoint(lambda x: ((x @ w).sin() @ w).tanh(), x, use_reentrant=False, context_fn=context)
    before = len(calls)
    assert _texts(y)[("SinBackward0", "self")] == EITHER
    assert len(calls) == before                         # drawing calls no policy and unpacks nothing
    y.sum().backward()
    assert torch.allclose(x.grad, torch.autograd.grad(((x @ w).sin() @ w).tanh().sum(), x)[0])


def test_inputs_autograd_takes_no_gradient_for_and_inputs_it_cannot_place():
    """Running statistics and attention's mask have no next_functions entry; an embedding's indices cannot be placed
    from the schema, so their label says what they could be rather than "recomputed"."""
    torch.manual_seed(0)
    norm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    texts = _texts(checkpoint(norm, torch.randn(2, 3, 6, 6), use_reentrant=False).sum())
    assert texts[("NativeBatchNormBackward0", "running_mean")] == NO_GRAD
    assert texts[("NativeBatchNormBackward0", "weight")] == LEAF
    assert texts[("NativeBatchNormBackward0", "input")] == RECOMPUTED
    q = torch.randn(1, 2, 4, 8, requires_grad=True)
    texts = _texts(checkpoint(lambda a: torch.nn.functional.scaled_dot_product_attention(a * 2, a, a),
                              q, use_reentrant=False).sum())
    attention = next(label for label, _ in texts if label.startswith("ScaledDotProduct"))
    assert (texts[(attention, "query")], texts[(attention, "key")]) == (RECOMPUTED, LEAF)
    assert texts[(attention, "output")] == RECOMPUTED
    embedding = torch.nn.Embedding(10, 4)
    texts = _texts(checkpoint(lambda i: embedding(i).tanh(), torch.randint(0, 10, (3,)), use_reentrant=False).sum())
    assert texts[("EmbeddingBackward0", "indices")] == UNKNOWN


@pytest.mark.parametrize("how", ["plain", "policy"])
def test_a_tensor_read_from_outside_the_checkpoint_is_read_again(how):
    """A closure's tensor, made before the checkpoint and not passed to it."""
    torch.manual_seed(0)
    scale = torch.randn(4, requires_grad=True).exp()          # ExpBackward0 saves its result, without a hook
    block = torch.nn.Sequential(torch.nn.Linear(4, 4))
    texts = _texts(_run(lambda x: (block(x) * scale).sin(), torch.randn(2, 4, requires_grad=True), how))
    assert texts[("MulBackward0", "other")] == OUTSIDE
    assert texts[("SinBackward0", "self")] == RECOMPUTED


def test_every_label_is_a_saved_values_bounded_line():
    labels = [value for name, value in vars(checkpoint_policy).items() if name.isupper() and isinstance(value, str)
              and not name.startswith("_")]
    assert len(labels) == 12
    assert all(one_line(label) == label and len(label) <= MAX_TEXT for label in labels)
