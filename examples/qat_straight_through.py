"""Quantization-aware training with a straight-through estimator, swapped in by a mode.

The model code calls plain ``round()``; its gradient is zero almost everywhere,
so nothing would learn through it. ``tm.autograd.BackwardOverride`` changes the
gradient rule of ``round`` within a scope — no new arguments anywhere in the
model — so the same code trains as a quantization-aware network.

Run: python examples/qat_straight_through.py
"""

import tensormodes as tm
import tensormodes.nn.functional as F


class StraightThroughRound(tm.autograd.Function):
    """Rounds in the forward pass; passes the gradient through unchanged."""

    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, grad):
        return grad


def fake_quantize(w, scale=0.05):
    """Weights as the int8-like grid would store them."""
    return (w / scale).round().clamp(-127, 127) * scale


def model(x, params):
    w1, b1, w2, b2 = params
    hidden = F.relu(F.linear(x, fake_quantize(w1), b1))
    return F.linear(hidden, fake_quantize(w2), b2)


def train(steps, straight_through):
    tm.manual_seed(0)
    x = tm.randn(64, 8)
    target = (x[:, 0] + x[:, 1] > 0).long()
    params = [tm.randn(16, 8) * 0.3, tm.zeros(16), tm.randn(2, 16) * 0.3, tm.zeros(2)]
    for p in params:
        p.requires_grad_()
    for step in range(steps):
        if straight_through:
            with tm.autograd.BackwardOverride({tm.round: StraightThroughRound.apply}):
                loss = F.cross_entropy(model(x, params), target)
        else:
            loss = F.cross_entropy(model(x, params), target)
        loss.backward()
        with tm.no_grad():
            for p in params:
                p -= 0.5 * p.grad
                p.grad = None
        if step % 20 == 0 or step == steps - 1:
            print(f"  step {step:3d}  loss {loss.item():.4f}")
    accuracy = (model(x, params).argmax(dim=1) == target).float().mean().item()
    return loss.item(), accuracy


print("plain round(): its zero gradient stops the weights behind it from learning")
plain = train(60, straight_through=False)
print("round() with a straight-through gradient, swapped in by BackwardOverride")
ste = train(60, straight_through=True)
print(f"final loss / accuracy: plain {plain[0]:.4f} / {plain[1]:.2f}, straight-through {ste[0]:.4f} / {ste[1]:.2f}")
