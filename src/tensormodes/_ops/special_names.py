"""``torch.special``'s names for ops declared in their own families: one line each, as PyTorch's
``torch.special.erf`` is an alias whose backward node is ``erf``'s.

>>> import tensormodes as tm
>>> tm.special.expit(tm.tensor([0.0])).tolist(), tm.special.gammaln(tm.tensor([3.0])).tolist()
([0.5], [0.6931471824645996])
"""

from __future__ import annotations

from . import activation, arithmetic, reduction, special, unary_math  # noqa: F401 - they declare the named ops
from .registry import OPS, alias

_SPECIAL = "tensormodes.special"


def _special(function: str, of: str | None = None) -> None:
    """Declare ``tensormodes.special.<function>`` as the op ``of`` (by default the same name)."""
    target = OPS[of or function]
    # torch.special's softmax and log_softmax take dtype by keyword only
    samples = tuple(s for s in target.samples if len(s.args) <= 2) if function.endswith("softmax") else target.samples
    alias(f"special_{function}", of=target.name, function=function, namespace=_SPECIAL, node=target.name,
          samples=samples, doc=f"``tensormodes.{target.function}`` under ``torch.special``'s name.\n\n"
          + target.doc.split("\n\n")[0])


for _function in ("erf", "erfc", "erfinv", "digamma", "polygamma", "i0", "logit", "xlogy", "sinc", "expm1",
                  "log1p", "exp2", "log_softmax", "softmax", "logsumexp"):
    _special(_function)
_special("psi", "digamma")
_special("gammaln", "lgamma")
_special("expit", "sigmoid")
