"""Finite-difference checks of gradients (``gradcheck``) and of second derivatives
(``gradgradcheck``), in float64.

>>> import tensormodes as tm
>>> x = tm.tensor([0.5, -1.0], dtype=tm.float64, requires_grad=True)
>>> tm.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
True
"""

from __future__ import annotations

from .engine import run_backward
from .grad_mode import no_grad
from .graph import _is_tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Analytical and numerical gradients disagree."""


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _differentiable_outputs(func, inputs) -> tuple:
    return tuple(o for o in _as_tuple(func(*inputs)) if _is_tensor(o) and o._requires_grad)


def _numerical_jacobian(func, inputs, index: int, output_index: int, eps: float):
    """Column by column: d output / d input[index], by central differences."""
    x = inputs[index]
    flat = x.detach().view(-1) if x.is_contiguous() else None
    if flat is None:
        raise GradcheckError("gradcheck expects contiguous inputs")
    columns = []
    for k in range(x.numel()):
        original = flat[k].item()
        values = []
        for shifted in (original + eps, original - eps):
            with no_grad():
                flat[k] = shifted
            # Evaluated with grad mode as it is: gradgradcheck's function needs it.
            values.append(_as_tuple(func(*inputs))[output_index].detach().reshape(-1).clone())
        with no_grad():
            flat[k] = original
        columns.append(((values[0] - values[1]) / (2 * eps)).tolist())
    return columns  # columns[k][j] = d out[j] / d x[k]


def _analytical_jacobian(func, inputs, index: int, output_index: int):
    output = _differentiable_outputs(func, inputs)[output_index]
    rows = []
    flat_size = output.numel()
    for j in range(flat_size):
        seed = output.new_zeros(output.shape).reshape(-1)
        seed[j] = 1.0
        grads = run_backward([output], [seed.reshape(output.shape)], retain_graph=True, create_graph=False,
                             inputs=[inputs[index]], allow_unused=True, accumulate=False)
        grad = grads[0]
        rows.append([0.0] * inputs[index].numel() if grad is None else grad.reshape(-1).tolist())
    return [list(column) for column in zip(*rows)] if rows else []


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **unused) -> bool:
    """Compare autograd's gradients of ``func`` with central finite differences.

    ``inputs`` is a tensor or tuple; tensors requiring grad are checked (use
    float64). Returns True, or raises ``GradcheckError`` (False with
    ``raise_exception=False``) naming the first mismatching input and output.
    """
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func, inputs)
    for i, x in enumerate(inputs):
        if not (_is_tensor(x) and x._requires_grad):
            continue
        for o in range(len(outputs)):
            numerical = _numerical_jacobian(func, inputs, i, _output_position(func, inputs, o), eps)
            analytical = _analytical_jacobian(func, inputs, i, o)
            for k, (num_column, ana_column) in enumerate(zip(numerical, analytical)):
                for j, (n, a) in enumerate(zip(num_column, ana_column)):
                    if abs(n - a) > atol + rtol * abs(n):
                        if not raise_exception:
                            return False
                        raise GradcheckError(
                            f"Jacobian mismatch for output {o} with respect to input {i},\n"
                            f"numerical:{n}\nanalytical:{a}\n(at input element {k}, output element {j})")
    return True


def _output_position(func, inputs, differentiable_index: int) -> int:
    positions = [p for p, o in enumerate(_as_tuple(func(*inputs))) if _is_tensor(o) and o._requires_grad]
    return positions[differentiable_index]


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, **unused) -> bool:
    """``gradcheck`` of the gradients of ``func`` (second derivatives, via ``create_graph``)."""
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(o.new_ones(o.shape).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)

    def first_derivatives(*values):
        count = len(inputs)
        values_in, seeds = values[:count], values[count:]
        outs = _differentiable_outputs(func, values_in)
        targets = [x for x in values_in if _is_tensor(x) and x._requires_grad]
        grads = run_backward(list(outs), list(seeds), retain_graph=True, create_graph=True, inputs=targets,
                             allow_unused=True, accumulate=False)
        return tuple(g if g is not None else t.new_zeros(t.shape) for g, t in zip(grads, targets))

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
