"""PyTorch's own operator catalogue (op_db, the sample inputs PyTorch's
tests use): every differentiable operator's graph is traced and drawn,
matches an independent walk of next_functions, and nothing raises."""

import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from itertools import islice

import torch
from graph_check import check_graph
from torch.testing._internal.common_methods_invocations import op_db

SAMPLES_PER_OP = 2


def _tensors(result):
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [t for item in result for t in _tensors(item)]
    return []


def _run(op, sample):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op(sample.input, *sample.args, **sample.kwargs)


def _samples(op):
    return list(islice(op.sample_inputs("cpu", torch.float32, requires_grad=True), SAMPLES_PER_OP))


def test_every_differentiable_operator_draws(timings):
    counts, problems = Counter(), []
    # Samples are made in a thread of their own: sample_inputs reads the
    # caller's stack with inspect.stack(), source lines included, which under
    # pytest's deep stack took nine tenths of this test's time.
    shallow = ThreadPoolExecutor(max_workers=1)
    for op in (op for op in op_db if op.supports_autograd):
        counts["operators"] += 1
        try:
            samples = shallow.submit(_samples, op).result()
        except Exception:            # some operators have no float32 samples on the CPU
            counts["operators without CPU float32 samples"] += 1
            continue
        for sample in samples:
            counts["samples"] += 1
            try:
                roots = [t for t in _tensors(_run(op, sample)) if t.grad_fn is not None]
            except Exception:
                counts["samples the operator itself rejected"] += 1
                continue
            if not roots:
                continue
            counts["graphs"] += 1
            try:
                check_graph(*roots)
            except Exception as error:
                problems.append(f"{op.name}: {type(error).__name__}: {str(error)[:200]}")
    shallow.shutdown()
    timings.append("operator sweep: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    assert counts["graphs"] > 500
    assert problems == []
