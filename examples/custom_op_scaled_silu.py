"""A custom op in one declaration: a fused "scaled SiLU", ``scale * x * sigmoid(x)``, with its
NumPy kernel, fake rule and gradient side by side; then used in a small model that is traced,
FLOP-counted, traced with its backward by ``make_fx``, run on fake and meta tensors, checked with
``opcheck`` and trained.

Run: ``python examples/custom_op_scaled_silu.py``
"""

from __future__ import annotations

import numpy as np

import tensormodes as tm
import tensormodes.nn as nn
from tensormodes._subclasses.fake_tensor import FakeTensorMode
from tensormodes.fx.experimental.proxy_tensor import make_fx
from tensormodes.utils.flop_counter import FlopCounterMode, register_flop_formula

# -- the op: kernel, fake rule, gradient ------------------------------------------------------------

@tm.library.custom_op("examples::scaled_silu", mutates_args=())
def scaled_silu(x: tm.Tensor, scale: float = 1.0) -> tm.Tensor:
    """``scale * x * sigmoid(x)`` in one NumPy pass (the kernel: real data, CPU)."""
    a = x.numpy()
    out = scale * a / (1.0 + np.exp(-a))
    return tm.from_numpy(out.astype(a.dtype, copy=False))


@scaled_silu.register_fake
def _(x, scale=1.0):
    # Metadata only: what FakeTensorMode, meta tensors and tracers without data run.
    return tm.empty_like(x)


def _setup_context(ctx, inputs, output):
    x, scale = inputs
    ctx.save_for_backward(x)
    ctx.scale = scale


def _backward(ctx, grad):
    # d/dx scale * x * s(x) = scale * s * (1 + x * (1 - s)), written with public ops so that
    # modes see it and create_graph=True differentiates it again.
    (x,) = ctx.saved_tensors
    s = x.sigmoid()
    return grad * ctx.scale * s * (1 + x * (1 - s)), None


scaled_silu.register_autograd(_backward, setup_context=_setup_context)


@register_flop_formula(tm.ops.examples.scaled_silu)
def _scaled_silu_flop(x_shape, *args, out_shape=None, **kwargs) -> int:
    return 4 * int(np.prod(x_shape))  # exp, add, divide, multiply per element


# -- a model using it -----------------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(scaled_silu(self.fc1(x), 1.5))


def main() -> dict:
    tm.manual_seed(0)
    model = MLP()
    x = tm.randn(32, 4)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh()

    traced = tm.fx.symbolic_trace(model)
    targets = [str(node.target) for node in traced.graph.nodes if node.op == "call_function"]
    print(traced.code.strip())

    with FlopCounterMode(display=False) as counter:
        model(x).sum().backward()
    model.zero_grad()

    def step(inputs):  # forward and backward: one straight aten graph (a joint graph)
        return tm.autograd.grad(model(inputs).sum(), list(model.parameters()))

    joint = make_fx(step)(x)
    joint_ops = [str(node.target) for node in joint.graph.nodes if node.op == "call_function"]

    meta_out = MLP().to("meta")(tm.empty(8, 4, device="meta"))  # shapes only: the fake rule runs
    with FakeTensorMode(allow_non_fake_inputs=True) as fake:  # a million rows, no data
        fake_out = model(fake.from_tensor(tm.empty(10**6, 4)))
    checks = tm.library.opcheck(scaled_silu, (tm.randn(3, 5, requires_grad=True), 1.5))

    optimizer = tm.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(20):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(f"traced ops: {targets}")
    print(f"joint graph: {len(joint_ops)} ops, the custom op {joint_ops.count('examples.scaled_silu.default')} time(s)")
    print(f"FLOPs: {counter.get_total_flops()}, meta output: {tuple(meta_out.shape)} on {meta_out.device}, "
          f"fake output: {tuple(fake_out.shape)} ({type(fake_out).__name__})")
    print(f"opcheck: {checks}")
    print(f"loss: {losses[0]:.4f} -> {losses[-1]:.4f}")
    return {"targets": targets, "flops": counter.get_total_flops(), "meta_shape": tuple(meta_out.shape),
            "joint": joint, "joint_ops": joint_ops, "fake_out": fake_out,
            "checks": checks, "losses": losses, "traced": traced, "model": model, "x": x}


if __name__ == "__main__":
    main()
