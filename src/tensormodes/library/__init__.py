"""``tensormodes.library``: custom ops (PyTorch's ``torch.library``).

``custom_op`` turns a Python function into one op of the dispatch level,
``tensormodes.ops.<namespace>.<name>.default``, that modes, tracers, FakeTensorMode, meta
tensors and autograd treat like a built-in op; its fake rule (``register_fake``), gradient
(``register_autograd``), kernels per device (``register_kernel``) and rules for subclasses and
modes (``register_torch_dispatch``) are registered beside it. ``opcheck`` tests the
declaration against real runs. docs/custom-ops.md shows a whole one.

>>> import tensormodes as tm
>>> @tm.library.custom_op("doc::cube", mutates_args=())
... def cube(x: tm.Tensor) -> tm.Tensor:
...     return x * x * x
>>> cube.register_fake(lambda x: tm.empty_like(x))  # doctest: +ELLIPSIS
<function <lambda> at ...>
>>> cube.register_autograd(lambda ctx, grad: grad * 3 * ctx.saved_tensors[0] ** 2,
...                        setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
>>> x = tm.tensor([1.0, 2.0], requires_grad=True)
>>> cube(x).sum().backward(); x.grad
tensor([ 3., 12.])
"""

from __future__ import annotations

from .custom_ops import CustomOpDef, custom_op
from .opcheck import OpCheckError, opcheck
from .registration import (
    Library,
    define,
    impl,
    register_autograd,
    register_fake,
    register_kernel,
    register_torch_dispatch,
)
from .schema import infer_schema

__all__ = ["custom_op", "CustomOpDef", "infer_schema", "register_fake", "register_autograd", "register_kernel",
           "register_torch_dispatch", "opcheck", "OpCheckError", "Library", "define", "impl"]
