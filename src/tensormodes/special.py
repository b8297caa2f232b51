"""Special functions under ``torch.special``'s names (``erf``, ``expit``, ``gammaln``, ``psi``,
``logit``, ``xlogy`` ...): the ops of the table declared in this namespace, each the same
computation and gradient as the ``tensormodes`` function it names.

>>> import tensormodes as tm
>>> tm.special.erf(tm.tensor([0.0])).tolist(), tm.special.erf(tm.tensor([1.0], requires_grad=True)).grad_fn.name()
([0.0], 'ErfBackward0')
"""

from ._api import build as _build
from ._ops import OPS as _OPS

_FUNCTIONS = [opdef.function for opdef in _OPS.values() if opdef.namespace == __name__ and opdef.function]
globals().update({name: _build.namespace_function(__name__, name) for name in _FUNCTIONS})

__all__ = list(_FUNCTIONS)
