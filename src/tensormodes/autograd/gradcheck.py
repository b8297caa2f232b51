"""Finite-difference checks of gradients (``gradcheck``) and of second derivatives
(``gradgradcheck``), in float64.

As PyTorch's, they work on the inputs through their public methods and take gradients with the
public ``autograd.grad``, so tensor-likes (objects with ``__torch_function__``) are checked as
tensors are, their handlers seeing each call.

>>> import tensormodes as tm
>>> x = tm.tensor([0.5, -1.0], dtype=tm.float64, requires_grad=True)
>>> tm.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
True
"""

from __future__ import annotations

from .._autograd.grad_mode import no_grad
from ..overrides import is_tensor_like
from . import api

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Analytical and numerical gradients disagree."""


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _check_inputs(inputs: tuple) -> None:
    """PyTorch's check: some tensor-like input requires grad. Tensor-likes are asked through
    the public ``requires_grad`` (an object without one raises ``AttributeError``, as in
    PyTorch), other values are no inputs to check."""
    if not any(_checked(x) for x in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def _checked(x) -> bool:
    """A tensor or tensor-like input that requires grad (asked through its public attribute)."""
    return is_tensor_like(x) and x.requires_grad


def _differentiable_outputs(func, inputs) -> tuple:
    # Every output is asked (a number has no requires_grad: AttributeError, as in PyTorch);
    # None stands for an output not computed (backward ops' masks).
    return tuple(o for o in _as_tuple(func(*inputs)) if o is not None and o.requires_grad)


def _numerical_jacobian(func, inputs, index: int, output_index: int, eps: float) -> list[list]:
    """By central differences: ``columns[k][r]``, the gradient PyTorch's convention gives input
    ``index``'s element ``k`` for a cotangent selecting row ``r`` (see ``_rows``), that is
    ``d part / d real(x[k]) + 1j * d part / d imag(x[k])`` (the imaginary term only for a
    complex input), where ``part`` is row ``r``'s real or imaginary part of an output element."""
    x = inputs[index]
    flat = x.detach().view(-1) if x.is_contiguous() else None
    if flat is None:
        raise GradcheckError("gradcheck expects contiguous inputs")
    directions = (1, 1j) if x.is_complex() else (1,)
    columns = []
    for k in range(x.numel()):
        original = flat.select(0, k).item()
        column = None
        for direction in directions:
            values = []
            for shifted in (original + eps * direction, original - eps * direction):
                with no_grad():
                    flat.select(0, k).fill_(shifted)
                # Evaluated with grad mode as it is: gradgradcheck's function needs it.
                values.append(_as_tuple(func(*inputs))[output_index].detach().reshape(-1).tolist())
            with no_grad():
                flat.select(0, k).fill_(original)
            slopes = [(plus - minus) / (2 * eps) for plus, minus in zip(*values)]
            # d real(out) and d imag(out) along this direction, as rows (see _rows).
            parts = [complex(s).real for s in slopes] + [complex(s).imag for s in slopes]
            contribution = [direction * part for part in parts]
            column = contribution if column is None else [a + b for a, b in zip(column, contribution)]
        columns.append(column)
    return columns


def _rows(output) -> list[tuple[int, object]]:
    """The cotangents the Jacobian is checked with, as (output element, seed): 1 at each element
    (the real part's gradient), then 1j at each (the imaginary part's; zero for a real output)."""
    count = output.numel()
    return [(j, 1.0) for j in range(count)] + [(j, 1j if output.is_complex() else None) for j in range(count)]


def _analytical_jacobian(func, inputs, index: int, output_index: int) -> list[list]:
    """``columns[k][r]``: autograd's gradient of input ``index``'s element ``k`` for row ``r``'s cotangent."""
    output = _differentiable_outputs(func, inputs)[output_index]
    rows = []
    size = inputs[index].numel()
    for j, seed_value in _rows(output):
        if seed_value is None:  # a real output has no imaginary part
            rows.append([0.0] * size)
            continue
        seed = output.new_zeros(output.shape).reshape(-1)
        seed.select(0, j).fill_(seed_value)
        grads = api.grad([output], [inputs[index]], [seed.reshape(output.shape)], retain_graph=True, allow_unused=True)
        grad = grads[0]
        rows.append([0.0] * size if grad is None else grad.reshape(-1).tolist())
    return [list(column) for column in zip(*rows)] if rows else []


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **unused) -> bool:
    """Compare autograd's gradients of ``func`` with central finite differences.

    ``inputs`` is a tensor or tuple; tensors requiring grad are checked (use
    float64 or complex128). Returns True, or raises ``GradcheckError`` (False with
    ``raise_exception=False``) naming the first mismatching input and output.

    Complex inputs and outputs are checked in PyTorch's convention: the gradient of a real
    function ``L`` for a complex input is ``dL/d real + 1j * dL/d imag``, and a complex
    output's cotangent ``g`` stands for ``L = real(conj(g) * output)``.
    """
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    outputs = _differentiable_outputs(func, inputs)
    for i, x in enumerate(inputs):
        if not _checked(x):
            continue
        for o in range(len(outputs)):
            numerical = _numerical_jacobian(func, inputs, i, _output_position(func, inputs, o), eps)
            analytical = _analytical_jacobian(func, inputs, i, o)
            for k, (num_column, ana_column) in enumerate(zip(numerical, analytical)):
                for j, (n, a) in enumerate(zip(num_column, ana_column)):
                    if abs(n - a) > atol + rtol * abs(n):
                        j = j % max(1, len(num_column) // 2)  # row -> output element (see _rows)
                        if not raise_exception:
                            return False
                        raise GradcheckError(
                            f"Jacobian mismatch for output {o} with respect to input {i},\n"
                            f"numerical:{n}\nanalytical:{a}\n(at input element {k}, output element {j})")
    return True


def _output_position(func, inputs, differentiable_index: int) -> int:
    positions = [p for p, o in enumerate(_as_tuple(func(*inputs))) if o is not None and o.requires_grad]
    return positions[differentiable_index]


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True, **unused) -> bool:
    """``gradcheck`` of the gradients of ``func`` (second derivatives, via ``create_graph``)."""
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func, inputs)  # before the inputs' check, as PyTorch's
    _check_inputs(inputs)
    if grad_outputs is None:
        grad_outputs = tuple(o.new_ones(o.shape).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)

    def first_derivatives(*values):
        count = len(inputs)
        values_in, seeds = values[:count], values[count:]
        outs = _differentiable_outputs(func, values_in)
        targets = [x for x in values_in if _checked(x)]
        grads = api.grad(list(outs), targets, list(seeds), retain_graph=True, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else t.new_zeros(t.shape) for g, t in zip(grads, targets))

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
