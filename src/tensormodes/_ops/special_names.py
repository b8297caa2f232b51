"""``torch.special``'s names for ops declared in their own families: one line each, as PyTorch's
``torch.special.erf`` is an alias whose backward node is ``erf``'s.

>>> import tensormodes as tm
>>> tm.special.expit(tm.tensor([0.0])).tolist(), tm.special.gammaln(tm.tensor([3.0])).tolist()
([0.5], [0.6931471824645996])
"""

from __future__ import annotations

from . import activation, arithmetic, reduction, special, special_elementwise, unary_math  # noqa: F401 - they declare the named ops
from .common import dtype_of, not_implemented
from .registry import OPS, alias

_SPECIAL = "tensormodes.special"


def _special(function: str, of: str | None = None, *, kernel=None, node: str | None = None) -> None:
    """Declare ``tensormodes.special.<function>`` as the op ``of`` (by default the same name);
    ``kernel`` and ``node`` as ``alias``'s."""
    target = OPS[of or function]
    # torch.special's softmax and log_softmax take dtype by keyword only
    samples = tuple(s for s in target.samples if len(s.args) <= 2) if function.endswith("softmax") else target.samples
    if kernel is not None:  # (its own errors: the samples it refuses are left out)
        samples = tuple(s for s in samples if not _refused(kernel, s))
    alias(f"special_{function}", of=target.name, function=function, namespace=_SPECIAL,
          node=node or target.node or target.name, samples=samples, kernel=kernel,
          doc=f"``tensormodes.{target.function}`` under ``torch.special``'s name.\n\n" + target.doc.split("\n\n")[0])


def _refused(kernel, sample) -> bool:
    spec = sample.args[0]
    return getattr(spec, "dtype", "float32").startswith(("int", "uint", "bool"))


def _special_round(input, *, decimals: int = 0):
    # torch.special.round always passes decimals (round.decimals), whose kernel has no integer types
    if input.dtype.kind in "biu":
        raise not_implemented("round_vml_cpu", dtype_of(input))
    return OPS["round"].kernel(input, decimals=decimals)


for _function in ("erf", "erfc", "erfinv", "digamma", "polygamma", "i0", "logit", "xlogy", "sinc", "expm1",
                  "log1p", "exp2", "log_softmax", "softmax", "logsumexp"):
    _special(_function)
_special("psi", "digamma")
_special("gammaln", "lgamma")
_special("expit", "sigmoid")
_special("round", kernel=_special_round, node="round#1")
_special("multigammaln", "mvlgamma")
_special("gammainc", "igamma")
_special("gammaincc", "igammac")
