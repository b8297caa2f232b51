"""PyTorch's ``torch.fx.experimental.symbolic_shapes``, reduced to unbacked symbols: the
``ShapeEnv`` that numbers them and ``GuardOnDataDependentSymNode``, raised when Python needs the
concrete value of one (see ``tensormodes._symbolic``).

>>> import tensormodes as tm
>>> from tensormodes.fx.experimental.proxy_tensor import make_fx
>>> def f(x):
...     if x.sum().item() > 0:
...         return x
...     return -x
>>> try:
...     make_fx(f, tracing_mode="fake")(tm.ones(2))
... except GuardOnDataDependentSymNode as e:
...     print(str(e).splitlines()[0])
Could not guard on data-dependent expression zuf0 > 0 (unhinted: zuf0 > 0).  (Size-like symbols: none)
"""

from ..._symbolic import GuardOnDataDependentSymNode, ShapeEnv

__all__ = ["GuardOnDataDependentSymNode", "ShapeEnv"]
