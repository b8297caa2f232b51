"""``backward(inputs=...)`` under a dispatch mode: the ops and their order are PyTorch's (issue 24 §3).

PyTorch's engine runs only the nodes leading to the inputs, each formula computes only the
gradients that lead there (``task_should_compute_output``), the leaves' ``AccumulateGrad`` run in
plain ``backward()``'s order (``detach`` for a first gradient, ``add_`` later), and a non-leaf
input keeps its gradient through ``retain_grad()`` (``clone``, then ``add``), also in later passes.
The expected logs are PyTorch 2.13's (its ``TorchDispatchMode``); with torch installed the same
program is run there too.
"""

from __future__ import annotations

import pytest

import tensormodes as tm

_FORWARD = ["ones_like", "expand", "mul.Tensor", "mul.Tensor", "add.Tensor", "expand", "t", "mm"]

# (inputs, the log of a first pass, the log of a second pass, gradient sums of w1, b1, w2 after both)
CASES = {
    "w1, b1": (_FORWARD + ["detach", "threshold_backward", "t", "mm", "t", "sum.dim_IntList", "view", "detach",
                           "t", "add.Tensor", "detach"],
               _FORWARD + ["detach", "threshold_backward", "t", "mm", "t", "sum.dim_IntList", "view", "add_.Tensor",
                           "t", "add.Tensor", "add_.Tensor"], [90.0, 20.0, None]),
    "b1, w1": (_FORWARD + ["detach", "threshold_backward", "t", "mm", "t", "sum.dim_IntList", "view", "detach",
                           "t", "add.Tensor", "detach"],
               _FORWARD + ["detach", "threshold_backward", "t", "mm", "t", "sum.dim_IntList", "view", "add_.Tensor",
                           "t", "add.Tensor", "add_.Tensor"], [90.0, 20.0, None]),
    "w1, w2": (_FORWARD + ["t", "t", "mm", "t", "detach", "detach", "threshold_backward", "t", "mm", "t", "t",
                           "add.Tensor", "detach"],
               _FORWARD + ["t", "t", "mm", "t", "add_.Tensor", "detach", "threshold_backward", "t", "mm", "t", "t",
                           "add.Tensor", "add_.Tensor"], [90.0, None, 120.0]),
    "w2": (["ones_like", "expand", "t", "mm", "t", "t", "detach"],
           ["ones_like", "expand", "t", "mm", "t", "t", "add_.Tensor"], [None, None, 120.0]),
    "h, w1": (_FORWARD + ["clone", "detach", "threshold_backward", "t", "mm", "t", "t", "add.Tensor", "detach"],
              _FORWARD + ["add.Tensor", "detach", "threshold_backward", "t", "mm", "t", "t", "add.Tensor",
                          "add_.Tensor"], [90.0, None, None]),
}


def _logs(library, mode_class, names: str):
    class Log(mode_class):
        def __init__(self):
            super().__init__()
            self.seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(str(func).removeprefix("aten.").removesuffix(".default"))
            return func(*args, **(kwargs or {}))

    F = library.nn.functional
    x = library.ones(4, 3)
    w1 = library.full((5, 3), 0.5, requires_grad=True)
    b1 = library.zeros(5, requires_grad=True)
    w2 = library.full((2, 5), 0.25, requires_grad=True)
    with Log():  # the graph of the ops PyTorch records (its decompositions)
        h = F.linear(x, w1, b1).relu()
        loss = F.linear(h, w2).sum() + (w1 * w1).sum()
    chosen = [{"w1": w1, "b1": b1, "w2": w2, "h": h}[name] for name in names.split(", ")]
    logs = []
    for _ in range(2):
        with Log() as log:
            loss.backward(inputs=chosen, retain_graph=True)
        logs.append(log.seen)
    sums = [None if t.grad is None else t.grad.sum().item() for t in (w1, b1, w2)]
    return logs, sums


@pytest.mark.parametrize("names", list(CASES))
def test_backward_with_inputs_sends_pytorchs_ops_in_its_order(names):
    first, second, sums = CASES[names]
    from tensormodes.utils._python_dispatch import TorchDispatchMode

    logs, grads = _logs(tm, TorchDispatchMode, names)
    assert logs == [first, second]
    assert grads == sums
    try:
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode as TorchMode
    except ImportError:
        return
    assert _logs(torch, TorchMode, names) == ([first, second], sums)


def test_a_non_leaf_input_keeps_its_gradient_in_later_passes():
    # PyTorch calls retain_grad() on a non-leaf input: plain backward() adds into its .grad afterwards
    x = tm.ones(2, requires_grad=True)
    y = x * 3
    (y * y).sum().backward(inputs=[y], retain_graph=True)
    assert y.grad.tolist() == [6.0, 6.0] and x.grad is None
    (y * y).sum().backward()
    assert y.grad.tolist() == [12.0, 12.0] and x.grad.tolist() == [18.0, 18.0]
