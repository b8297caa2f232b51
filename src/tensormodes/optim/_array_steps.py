"""Adam's per-parameter step on the arrays themselves, for when nothing can see its ops.

``Adam._update_group`` runs PyTorch's single-tensor loop as ten public calls a parameter
(``add_``, ``mul_``, ``lerp_``, ``addcmul_``, ``item``, ``sqrt``, ``div``, ``add_``,
``addcdiv_``), so that a mode sees a step as PyTorch's. When no mode of either kind is active
and every tensor is a plain ``Tensor`` or ``Parameter`` on NumPy arrays of one float dtype and
shape, nothing can see those calls: this runs the same ops' kernels (``OPS[name].kernel``, the
one declaration of each) in the same order on the same operands — so the same values, bit for
bit — and writes each in-place result as the in-place op does (a copy into the tensor's array,
then its version counter bumped), without the ten dispatches (~4 us each).
"""

from __future__ import annotations

import math

import numpy as np

from .._api.tensor import Tensor
from .._autograd.nodes import bump_version
from .._ops import OPS
from .._ops.common import FLOAT_MAX, quiet
from .._ops.common import dtype_of as _dtype_of
from .._state import STATE
from ..nn.parameter import Parameter

_ADD, _MUL, _LERP, _ADDCMUL, _SQRT, _DIV, _ADDCDIV = (
    OPS[name].kernel for name in ("add", "mul", "lerp", "addcmul", "sqrt", "div", "addcdiv"))
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def idle() -> bool:
    """Whether no ``__torch_function__`` or dispatch mode is active (nor anything disabled)."""
    return STATE.get() is None


def _plain(t) -> bool:
    return (type(t) is Tensor or type(t) is Parameter) and type(t._data) is np.ndarray


def _write(t, result: np.ndarray) -> None:
    """What an in-place op does with its kernel's result of the target's dtype and shape."""
    np.copyto(t._data, result)
    bump_version(t)


def adam_step(param, grad, exp_avg, exp_avg_sq, step_t, lr: float, beta1: float, beta2: float, eps: float,
              weight_decay: float, decoupled: bool) -> bool:
    """One parameter's Adam step (no amsgrad, no maximize, real dtypes) on its arrays; False, with
    nothing changed, when the tensors are not all plain arrays of one float dtype and shape (the
    caller then runs the public ops). The caller checks ``idle()``."""
    if not (_plain(param) and _plain(grad) and _plain(exp_avg) and _plain(exp_avg_sq) and _plain(step_t)):
        return False
    p, g, m, v = param._data, grad._data, exp_avg._data, exp_avg_sq._data
    if p.dtype not in _FLOATS or not (p.dtype is g.dtype is m.dtype is v.dtype) \
            or not (p.shape == g.shape == m.shape == v.shape) or step_t._data.dtype not in _FLOATS:
        return False
    if type(lr) is float and type(beta1) is float and type(beta2) is float and type(eps) is float \
            and type(weight_decay) in (float, int) and (decoupled or weight_decay == 0) \
            and _fits(1 - beta1, p) and _fits(1 - beta2, p):  # else lerp's or addcmul's error below
        _fused_adam_step(param, grad, exp_avg, exp_avg_sq, step_t, lr, beta1, beta2, eps, weight_decay)
        return True
    # the public ops of Adam._update_group, one for one (each kernel checks its own operands)
    _write(step_t, _ADD(step_t._data, 1))
    if weight_decay != 0:
        if decoupled:
            _write(param, _MUL(p, 1 - lr * weight_decay))
        else:
            g = _ADD(g, p, alpha=weight_decay)
    _write(exp_avg, _LERP(m, g, 1 - beta1))
    _write(exp_avg_sq, _MUL(v, beta2))
    _write(exp_avg_sq, _ADDCMUL(v, g, g, value=1 - beta2))
    step = step_t._data.item()
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    denom = _ADD(_DIV(_SQRT(v), bias_correction2_sqrt), eps)
    _write(param, _ADDCDIV(p, m, denom, value=-step_size))
    return True


def _fits(number: float, array: np.ndarray) -> bool:
    """Whether the kernels' check that a number converts to the array's dtype passes."""
    return not math.isfinite(number) or abs(number) <= FLOAT_MAX[_dtype_of(array)]


def _fused_adam_step(param, grad, exp_avg, exp_avg_sq, step_t, lr: float, beta1: float, beta2: float, eps: float,
                     weight_decay: float) -> None:
    """``adam_step`` for Python-float hyperparameters (decoupled or no weight decay): the steps of
    the kernels it calls (``mul``, ``lerp``, ``addcmul``, ``sqrt``, ``div``, ``addcdiv`` on float
    arrays and a number: one ufunc each, the number weak, so in the arrays' dtype) in their order,
    each in-place op's last step written straight into its target with ``out=`` instead of into a
    new array then copied: the same values, bit for bit, and the same version bumps, with two
    scratch arrays instead of a dozen temporaries."""
    p, g, m, v, s = param._data, grad._data, exp_avg._data, exp_avg_sq._data, step_t._data
    weight, value = 1 - beta1, 1 - beta2
    with quiet():
        np.add(s, 1, out=s)
        bump_version(step_t)
        if weight_decay != 0:
            np.multiply(p, 1 - lr * weight_decay, out=p)
            bump_version(param)
        scratch = np.subtract(g, m, out=np.empty_like(m))  # lerp(m, g, weight), exact at both ends
        if abs(weight) < 0.5:
            np.multiply(weight, scratch, out=scratch)
            np.add(m, scratch, out=m)
        else:
            np.multiply(scratch, 1 - weight, out=scratch)
            np.subtract(g, scratch, out=m)
        bump_version(exp_avg)
        np.multiply(v, beta2, out=v)
        bump_version(exp_avg_sq)
        np.multiply(value, g, out=scratch)  # addcmul(v, g, g, value)
        np.multiply(scratch, g, out=scratch)
        np.add(v, scratch, out=v)
        bump_version(exp_avg_sq)
        step = s.item()
        step_size = lr / (1 - beta1 ** step)
        denominator = np.sqrt(v, out=np.empty_like(v))
        np.true_divide(denominator, (1 - beta2 ** step) ** 0.5, out=denominator)
        np.add(denominator, eps, out=denominator)
        if not _fits(-step_size, p):
            _ADDCDIV(p, m, denominator, value=-step_size)  # raises addcdiv's error, as the ops do here
        np.multiply(-step_size, m, out=scratch)  # addcdiv(p, m, denominator, -step_size)
        np.true_divide(scratch, denominator, out=scratch)
        np.add(p, scratch, out=p)
        bump_version(param)
