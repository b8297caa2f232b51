"""The kernel-call site: what runs below autograd, written once.

The rule, top to bottom:

1. an op with a meta tensor among its arguments (or ``device="meta"``) runs its meta rule
   (``meta.meta_runner``: PyTorch's device check, then the rule declared next to the kernel);
2. anything else runs the op's NumPy kernel (or, on the generated fast path of a
   ufunc-hinted op, its NumPy ufunc directly).

The ``__torch_dispatch__`` level sits just above this rule: an implementation whose call a
dispatch mode or subclass listens to hands it to ``_api/dispatch_level`` first, and the chain's
end (``python_dispatch.call_overload``) comes back to the same implementation, and so to this
rule, with nobody left listening.

Generated code inlines the rule, so the plain path stays one frame from ``tm.add`` to NumPy:
``codegen`` asks :func:`callee` for the expression to call and binds :func:`kernel_names`.
Hand-written paths call :func:`call`, the same rule as a function.

>>> import numpy as np
>>> from tensormodes._ops import OPS
>>> from tensormodes._meta_array import MetaArray
>>> call(OPS["neg"], np.ones(2, np.float32))
array([-1., -1.], dtype=float32)
>>> call(OPS["neg"], MetaArray((2,), np.dtype(np.float32)))
MetaArray(shape=(2,), dtype=float32, strides=(1,))
"""

from __future__ import annotations

import inspect

from .._device import is_meta_device
from .._meta_array import MetaArray
from .._ops import OpDef
from .._ops.registry import TensorKind
from .._tensor_base import PLAIN
from .meta import meta_runner, on_meta

__all__ = ["kernel_names", "callee", "ufunc_call", "call"]


def kernel_names(opdef: OpDef) -> dict:
    """What the kernel-call sites of ``opdef``'s generated code call, bound here and nowhere
    else: its NumPy kernel, its ufunc hint, its meta runner, and the tests of the rule."""
    return {"_kernel": opdef.kernel, "_ufunc": opdef.ufunc, "_meta": meta_runner(opdef),
            "_on_meta": on_meta, "_meta_device": is_meta_device, "_MetaArray": MetaArray, "_T": PLAIN.tensor}


def _meta_condition(opdef: OpDef, signature: inspect.Signature, fast: bool) -> str | None:
    """Rule 1 as an expression over the generated function's parameters (named by ``signature``,
    parallel to the kernel's): a meta tensor among the arguments, or ``device="meta"``. The
    fast path's tensors are exactly Tensor or Parameter, never meta (meta tensors have classes
    of their own), so there only the device is tested; the slow path tests every tensor
    argument that is not a plain Tensor."""
    terms = []
    for p, name in zip(opdef.signature.parameters.values(), signature.parameters):
        kind = opdef.tensor_params.get(p.name)
        if p.name == "device":
            terms.append(f"({name} is not None and _meta_device({name}))")
        elif kind is None or fast:
            continue
        elif kind in (TensorKind.TENSOR_LIST, TensorKind.INDEX):
            terms.append(f"_on_meta({name})")
        else:
            terms.append(f"(type({name}) is not _T and type(getattr({name}, '_data', None)) is _MetaArray)")
    return " or ".join(terms) or None


def callee(opdef: OpDef, signature: inspect.Signature, fast: bool) -> str:
    """The expression generated code calls with the unwrapped arguments: the rule above."""
    meta = _meta_condition(opdef, signature, fast)
    return f"(_meta if {meta} else _kernel)" if meta else "_kernel"


def ufunc_call(*arrays: str) -> str:
    """Source of the site for a ufunc-hinted op's fast path (see ``registry.op``'s ``ufunc``):
    the op's NumPy ufunc on arrays already known to be plain and floating."""
    return f"_ufunc({', '.join(arrays)})"


def call(opdef: OpDef, *args, **kwargs):
    """Run ``opdef`` below autograd on unwrapped arguments (arrays, Python values): the rule
    above as a function, for paths that are not generated."""
    for value in (*args, *kwargs.values()) if kwargs else args:
        kind = type(value)
        if kind is MetaArray or (kind is list or kind is tuple) and any(type(item) is MetaArray for item in value):
            return meta_runner(opdef)(*args, **kwargs)
    if kwargs and is_meta_device(kwargs.get("device")):
        return meta_runner(opdef)(*args, **kwargs)
    return opdef.kernel(*args, **kwargs)
