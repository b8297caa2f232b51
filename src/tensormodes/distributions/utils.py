"""Helpers of the distributions (``torch.distributions.utils``): broadcasting parameters,
probabilities and logits, and ``lazy_property``.

>>> import tensormodes as tm
>>> from tensormodes.distributions.utils import broadcast_all, probs_to_logits
>>> [t.shape for t in broadcast_all(tm.zeros(2, 1), 3.0)]
[tensormodes.Size([2, 1]), tensormodes.Size([2, 1])]
>>> probs_to_logits(tm.tensor([0.5]), is_binary=True).tolist()
[0.0]
"""

from __future__ import annotations

from functools import update_wrapper
from numbers import Number

from .._api import namespace as tm
from ..nn import functional as F
from ..overrides import is_tensor_like

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs", "lazy_property", "euler_constant",
           "BinaryProbabilities", "expand_probabilities"]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant


def broadcast_all(*values):
    """Broadcast the given values (tensors, or numbers made tensors of the first tensor's dtype,
    else of the default dtype) to one shape."""
    if not all(is_tensor_like(v) or isinstance(v, Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    if not all(is_tensor_like(v) for v in values):
        options = {"dtype": tm.get_default_dtype()}
        for value in values:
            if isinstance(value, tm.Tensor):
                options = {"dtype": value.dtype, "device": value.device}
                break
        values = [v if is_tensor_like(v) else tm.tensor(v, **options) for v in values]
    return tm.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return tm.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim: int):
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary: bool = False):
    """Probabilities from logits: a sigmoid (``is_binary``) or a softmax over the last dim."""
    if is_binary:
        return tm.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """``probs`` clamped into ``[eps, 1 - eps]`` (``eps`` of its dtype)."""
    eps = tm.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary: bool = False):
    """Logits from probabilities (clamped away from 0 and 1)."""
    clamped = clamp_probs(probs)
    if is_binary:
        return tm.log(clamped) - tm.log1p(-clamped)
    return tm.log(clamped)


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first access (with grad mode on) and then stored on the instance."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with tm.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):  # noqa: N801
    """What ``lazy_property`` gives on the class: also a property, for introspection."""

    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


class BinaryProbabilities:
    """A success probability given as ``probs`` or as ``logits``: the other one made on first use
    (``Bernoulli``, ``Binomial``, ``Geometric``; the class's ``__init__`` sets the one given).

    >>> import tensormodes as tm
    >>> tm.distributions.Bernoulli(logits=tm.tensor([0.0])).probs.tolist()
    [0.5]
    """

    @lazy_property
    def logits(self):
        """The log-odds of a success."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of a success."""
        return logits_to_probs(self.logits, is_binary=True)


def expand_probabilities(source, new, shape):
    """For an ``expand``: give ``new`` the ``probs`` and ``logits`` that ``source`` holds (the one it
    was given, and the other if already computed), expanded to ``shape``; returns the last of them,
    the parameter the class keeps as ``_param``.

    >>> import tensormodes as tm
    >>> tm.distributions.Bernoulli(probs=tm.tensor(0.25)).expand((2,)).probs.tolist()
    [0.25, 0.25]
    """
    expanded = None
    for name in ("probs", "logits"):
        if name in source.__dict__:
            expanded = getattr(source, name).expand(shape)
            setattr(new, name, expanded)
    return expanded
