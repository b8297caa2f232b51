"""Per-sample gradients and model ensembles with ``tensormodes.func`` (PyTorch's ``torch.func``).

Trains a small classifier with DP-SGD's step: each example's gradient (``vmap(grad(loss))``
over the batch) is clipped to norm 1, the clipped gradients are averaged and noised. Then
checks one batch's per-sample gradients against a loop of ``autograd.grad``, and runs an
ensemble of five models in one call (``stack_module_state`` + ``vmap``).

    python examples/per_sample_gradients.py [--steps 30]

``vmap`` runs the function once per example here (no batching rules), so the per-sample
gradients cost about what the loop costs; the point is PyTorch's code, unchanged.
"""

from __future__ import annotations

import argparse

import tensormodes as tm
from tensormodes.func import functional_call, grad, stack_module_state, vmap

F = tm.nn.functional


def make_data(n: int = 256):
    """Two noisy, interleaved moons of points in the plane, labelled 0 and 1."""
    angle = tm.rand(n) * 3.14159
    label = (tm.rand(n) < 0.5).long()
    x = tm.stack([angle.cos() + label * 1.0, angle.sin() * (1 - 2 * label) - label * 0.5], dim=1)
    return x + 0.1 * tm.randn(n, 2), label


def main() -> None:
    parser = argparse.ArgumentParser(description="DP-SGD and ensembles with tensormodes.func")
    parser.add_argument("--steps", type=int, default=30)
    options = parser.parse_args()
    tm.manual_seed(0)
    x, y = make_data()
    model = tm.nn.Sequential(tm.nn.Linear(2, 16), tm.nn.Tanh(), tm.nn.Linear(16, 2))

    def sample_loss(params, xi, yi):  # one example's loss, as a function of the parameters
        return F.cross_entropy(functional_call(model, params, (xi.unsqueeze(0),)), yi.unsqueeze(0))

    per_sample_grads = vmap(grad(sample_loss), in_dims=(None, 0, 0))
    clip, noise, lr, batch = 1.0, 0.1, 0.5, 32
    for step in range(options.steps):
        index = tm.randint(0, len(x), (batch,))
        params = {name: p.detach() for name, p in model.named_parameters()}
        grads = per_sample_grads(params, x[index], y[index])
        norms = tm.stack([g.flatten(1).norm(dim=1) for g in grads.values()]).norm(dim=0)
        scale = (clip / (norms + 1e-6)).clamp(max=1.0)
        with tm.no_grad():
            for name, p in model.named_parameters():
                clipped = (grads[name] * scale.view(-1, *[1] * (p.dim()))).sum(0)
                p -= lr * (clipped + noise * clip * tm.randn(p.shape)) / batch
        if step % 10 == 9 or step == options.steps - 1:
            accuracy = (model(x).argmax(1) == y).float().mean().item()
            print(f"step {step + 1:3d}  loss {F.cross_entropy(model(x), y).item():.4f}  accuracy {accuracy:.3f}")

    params = {name: p.detach() for name, p in model.named_parameters()}
    grads = per_sample_grads(params, x[:8], y[:8])
    agrees = all(
        tm.allclose(grads[name][i], g, atol=1e-6)
        for i in range(8)
        for (name, _), g in zip(model.named_parameters(),
                                tm.autograd.grad(F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]),
                                                 list(model.parameters()))))
    print(f"per-sample gradients equal a loop of autograd.grad: {agrees}")

    models = [tm.nn.Sequential(tm.nn.Linear(2, 16), tm.nn.Tanh(), tm.nn.Linear(16, 2)) for _ in range(5)]
    stacked, buffers = stack_module_state(models)
    logits = vmap(lambda p, b, inputs: functional_call(models[0], (p, b), (inputs,)), in_dims=(0, 0, None))(
        stacked, buffers, x)
    print(f"ensemble of {len(models)}: logits {tuple(logits.shape)}, "
          f"same as each model: {all(tm.allclose(logits[i], m(x)) for i, m in enumerate(models))}")


if __name__ == "__main__":
    main()
