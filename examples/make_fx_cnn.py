"""``make_fx`` of a small CNN's training step: forward, backward and SGD update in one graph of
core aten ops, traced without data (``tracing_mode="fake"``).

The step computes the loss, asks ``autograd.grad`` for the gradients and returns the updated
parameters. ``make_fx`` records every aten op that runs — the backward's too — while the
tensors are fake (shapes, no data), with the model's real parameters as graph constants
(``_allow_non_fake_inputs=True``). ``core_aten_decompositions()`` lowers ops outside PyTorch's
core ATen set (``t`` -> ``permute``, ``threshold_backward`` -> ``le`` + ``where`` ...). The graph
then runs on real data and gives the eager step's numbers.

Run: python examples/make_fx_cnn.py   (prints the generated code, then a summary)
"""

from collections import Counter

import tensormodes as tm
import tensormodes.nn.functional as F
from tensormodes._decomp import core_aten_decompositions
from tensormodes.fx.experimental.proxy_tensor import make_fx

tm.manual_seed(0)
model = tm.nn.Sequential(
    tm.nn.Conv2d(1, 4, 3, padding=1), tm.nn.ReLU(), tm.nn.MaxPool2d(2),
    tm.nn.Flatten(), tm.nn.Linear(4 * 4 * 4, 10),
)
params = list(model.parameters())


def train_step(images, labels):
    loss = F.cross_entropy(model(images), labels)
    grads = tm.autograd.grad(loss, params)
    return loss, [p.detach() - 0.1 * g for p, g in zip(params, grads)]


images, labels = tm.randn(8, 1, 8, 8), tm.randint(0, 10, (8,))
graph = make_fx(train_step, decomposition_table=core_aten_decompositions(), tracing_mode="fake",
                _allow_non_fake_inputs=True)(images, labels)
print(graph.code)

ops = Counter(str(node.target) for node in graph.graph.nodes if node.op == "call_function")
print(f"{sum(ops.values())} aten calls, {len(ops)} distinct ops; most used: "
      + ", ".join(f"{name} x{count}" for name, count in ops.most_common(3)))
loss, updated = graph(images, labels)
expected_loss, expected_updated = train_step(images, labels)
same = bool(tm.allclose(loss, expected_loss)) and all(
    bool(tm.allclose(a, b, atol=1e-6)) for a, b in zip(updated, expected_updated))
print(f"graph gives the eager step's loss and updated parameters: {same}")
