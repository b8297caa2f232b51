"""Higher-level derivatives of functions of tensors (``torch.autograd.functional``):
``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp``, with PyTorch's arguments,
results and errors.

Everything is computed with reverse mode (``autograd.grad``), as PyTorch does without
``vectorize``: ``jvp`` and ``hvp`` use the double-backward trick. ``vectorize=True`` and
``strategy="forward-mode"`` are accepted and give the same values, computed the same way
(there is no ``vmap`` or forward-mode AD here).

>>> import tensormodes as tm
>>> from tensormodes.autograd.functional import jacobian, hessian
>>> jacobian(lambda x: x ** 2, tm.tensor([1.0, 2.0])).tolist()
[[2.0, 0.0], [0.0, 4.0]]
>>> hessian(lambda x: (x ** 3).sum(), tm.tensor([1.0, 2.0])).tolist()
[[6.0, 0.0], [0.0, 12.0]]
"""

from __future__ import annotations

from collections.abc import Callable

from .._api import namespace as tm
from .._autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from .api import grad as _grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(value, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    """(whether ``value`` was a tuple, ``value`` as a tuple of tensors), with PyTorch's TypeError."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, tm.Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where} has type {type(item)}.")
    return is_tuple, items


def _unpack(result, was_tuple):
    """Undo ``_as_tuple``: ``was_tuple`` is one flag, or (outer, inner) for nested results."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(item[0] for item in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _prepare(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the inputs: a differentiable view when the caller wants a graph
    back to them, else detached (requiring grad if ``need_graph``). Always new objects, so the
    function's own uses of the same tensors (captured) are told apart from the inputs."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in inputs)


def _finish(values: tuple, create_graph: bool) -> tuple:
    """Results without history unless ``create_graph`` (nested tuples too)."""
    if values and isinstance(values[0], tm.Tensor):
        return values if create_graph else tuple(t.detach() for t in values)
    return tuple(_finish(inner, create_graph) for inner in values)


def _validate_v(v: tuple, other: tuple, other_is_tuple: bool) -> None:
    if len(other) != len(v):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


_STRICT_NOT_REQUIRING = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of the input. "
                "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
                "and that the hessian depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect "
                 "to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                 "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                 "would be violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the user-provided "
                    "function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must be computed "
                "in a differentiable manner from the input when running in strict mode."),
}


def _check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not value.requires_grad:
            raise RuntimeError(_STRICT_NOT_REQUIRING[kind].format(i=i))


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph: bool = False,
                   retain_graph: bool | None = None) -> tuple:
    """``autograd.grad`` over the outputs that require grad (None for inputs nothing reaches)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([out for out, _ in pairs], list(inputs), [g for _, g in pairs], allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                   "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                   "mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                    "in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry {i} in the "
                          "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                          "backward trick to replace forward mode AD."),
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Zeros shaped like ``refs[i]`` where no gradient came back (an error when ``strict``)."""
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = tm.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        filled.append(g)
    return tuple(filled)


def _v_or_default(v, against: tuple, against_is_tuple: bool, create_graph: bool, fn_name: str, message: str):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _validate_v(v, against, against_is_tuple)
        return v
    if len(against) != 1 or against[0].nelement() != 1:
        raise RuntimeError(message)
    return None


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """Compute the dot product between a vector ``v`` and the Jacobian of the given function at
    the point given by the inputs. Returns ``(func_output, vjp)``.

    >>> import tensormodes as tm
    >>> from tensormodes.autograd.functional import vjp
    >>> out, grads = vjp(lambda x, y: x * y, (tm.tensor([1.0, 2.0]), tm.tensor([3.0, 4.0])), tm.ones(2))
    >>> out.tolist(), [g.tolist() for g in grads]
    ([3.0, 8.0], [[3.0, 4.0], [1.0, 2.0]])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _v_or_default(v, outputs, outputs_tuple, create_graph, "vjp",
                          "The vector v can only be None if the user-provided function returns a single Tensor "
                          "with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """Compute the dot product between the Jacobian of the given function at the point given by
    the inputs and a vector ``v`` (the double-backward trick). Returns ``(func_output, jvp)``.

    >>> import tensormodes as tm
    >>> from tensormodes.autograd.functional import jvp
    >>> out, product = jvp(lambda x: x ** 2, tm.tensor([1.0, 3.0]), tm.tensor([1.0, 1.0]))
    >>> out.tolist(), product.tolist()
    ([1.0, 9.0], [2.0, 6.0])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_default(v, inputs, inputs_tuple, create_graph, "jvp",
                          "The vector v can only be None if the input to the user-provided function is a single "
                          "Tensor with a single element.")
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # backward is linear in its grad_outputs, so their value does not matter: zeros, with history
        grad_outputs = tuple(tm.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), outputs_tuple))


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """Compute the Jacobian of a given function: for one input and one output a tensor of shape
    ``output.shape + input.shape``; for tuples, a tuple (per output) of tuples (per input).

    >>> import tensormodes as tm
    >>> from tensormodes.autograd.functional import jacobian
    >>> jx, jy = jacobian(lambda x, y: x * y, (tm.tensor([1.0, 2.0]), tm.tensor([3.0, 4.0])))
    >>> jx.tolist(), jy.tolist()
    ([[3.0, 0.0], [0.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
                               "are not supported together (yet). Please either set `strict=False` or "
                               "`strategy=\"reverse-mode\"`.")
        _as_tuple(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        per_output = tuple(_jacobian_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
        return _unpack(_finish(per_output, create_graph), (outputs_tuple, inputs_tuple))


def _jacobian_rows(i: int, out, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """The Jacobian of output ``i`` with respect to each input: one ``autograd.grad`` per element."""
    rows: tuple[list, ...] = tuple([] for _ in inputs)
    flat = out.reshape(-1)
    for j in range(out.nelement()):
        grads = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
        for k, (g, inp) in enumerate(zip(grads, inputs)):
            if g is not None:
                if strict and create_graph and not g.requires_grad:
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode when create_graph=True.")
                rows[k].append(g)
            else:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {k}. "
                                       "This is not allowed in strict mode.")
                rows[k].append(tm.zeros_like(inp))
    return tuple(_stack_rows(rows[k], out.size() + inp.size(), inp) for k, inp in enumerate(inputs))


def _stack_rows(rows: list, shape, inp):
    if not rows:  # an output with no elements
        return tm.zeros(shape, dtype=inp.dtype)
    return tm.stack(rows, dim=0).view(shape)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """Compute the Hessian of a given scalar function: for one input a tensor of shape
    ``input.shape + input.shape``; for a tuple of inputs, a tuple of tuples.

    >>> import tensormodes as tm
    >>> from tensormodes.autograd.functional import hessian
    >>> h = hessian(lambda x, y: (2 * x ** 2 + 3 * y ** 2).sum(), (tm.ones(2), tm.ones(2)))
    >>> h[0][0].tolist(), h[1][1].tolist(), h[0][1].tolist()
    ([[4.0, 0.0], [0.0, 4.0]], [[6.0, 0.0], [0.0, 6.0]], [[0.0, 0.0], [0.0, 0.0]])
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if out_tuple or not isinstance(out, tm.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return _unpack(result, (inputs_tuple, inputs_tuple))


def _scalar_function_grad(func, inputs, v, create_graph, strict, fn_name):
    """Shared start of ``vhp`` and ``hvp``: the prepared inputs and ``v``, the single-element
    output and its gradient with a graph."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _v_or_default(v, inputs, inputs_tuple, create_graph, fn_name,
                      "The vector v can only be None if the input to the user-provided function is a single "
                      "Tensor with a single element.")
    outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if outputs_tuple or not isinstance(outputs[0], tm.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs_tuple, outputs, jac


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """Compute the dot product between vector ``v`` and the Hessian of a given scalar function at
    a specified point. Returns ``(func_output, vhp)``.

    >>> import tensormodes as tm
    >>> from tensormodes.autograd.functional import vhp
    >>> out, product = vhp(lambda x: (x ** 3).sum(), tm.tensor([1.0, 2.0]), tm.tensor([1.0, 1.0]))
    >>> out.item(), product.tolist()
    (9.0, [6.0, 12.0])
    """
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _scalar_function_grad(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """Compute the dot product between the scalar function's Hessian and a vector ``v`` at a
    specified point (the double-backward trick). Returns ``(func_output, hvp)``.

    >>> import tensormodes as tm
    >>> from tensormodes.autograd.functional import hvp
    >>> out, product = hvp(lambda x: (x ** 3).sum(), tm.tensor([1.0, 2.0]), tm.tensor([1.0, 0.0]))
    >>> out.item(), product.tolist()
    (9.0, [6.0, 0.0])
    """
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _scalar_function_grad(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(tm.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))
