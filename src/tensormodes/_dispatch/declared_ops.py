"""Dispatch modes that declare the ops they handle (``TorchDispatchMode.handled_ops``, beyond
PyTorch): every other op runs as if the mode were not there, and a public call whose op can
reach none of the declared ones takes its plain fast path (no lane, no schema form, no handler).

The override layer's state asks this module once per state (``reaching``) and generated code
asks the answer per op, by name (``state.dispatch_reaching[name]``, a dict filled on first ask).

>>> import tensormodes as tm
>>> reaching(frozenset({tm.ops.aten.mm}))["mm"], reaching(frozenset({tm.ops.aten.mm}))["relu"]
(True, False)
"""

from __future__ import annotations

from . import aten

__all__ = ["of", "reaching", "FORM_FREE", "ReachingOps", "FastSkip"]


def of(mode) -> frozenset | None:
    """A dispatch mode's ``handled_ops`` as a set of ``OpOverloadPacket``s (an overload declared
    counts as its packet), or None: it handles every op."""
    declared = getattr(mode, "handled_ops", None)
    return None if declared is None else frozenset(getattr(op, "overloadpacket", op) for op in declared)


class ReachingOps(dict):
    """For a set of declared ``packets``: op name -> whether a call of it may show the dispatch
    level one of them (``aten.reaches``, decided once per op)."""

    __slots__ = ("packets", "skips")

    def __init__(self, packets: frozenset) -> None:
        super().__init__()
        self.packets = packets
        self.skips: dict[frozenset, FastSkip] = {}

    def __missing__(self, name: str) -> bool:
        reaches = self[name] = aten.reaches(name, self.packets)
        return reaches

    def fast_skip(self, above: frozenset, impls: dict) -> FastSkip:
        """The state's ``fast_skip`` going with these answers and ``above`` (``impls``: public
        callable -> the implementation it calls, where an op's dispatch entry may be)."""
        skip = self.skips.get(above)
        if skip is None:
            skip = self.skips.setdefault(above, FastSkip(above, self, impls))
        return skip


class FastSkip:
    """``fast_skip`` while every dispatch mode declares the ops it handles: the public callables
    that must not take their fast path — those ``above`` (``__torch_function__`` modes' choice)
    and those whose op may reach a declared op; decided per callable once (generated callables
    are made lazily, so they are not listed up front)."""

    __slots__ = ("above", "reaching", "impls", "known")

    def __init__(self, above: frozenset, reaching: ReachingOps, impls: dict) -> None:
        self.above = above
        self.reaching = reaching
        self.impls = impls
        self.known: dict = {}

    def __contains__(self, api) -> bool:
        known = self.known.get(api)
        if known is None:
            entry = self._entry_of(api)
            known = self.known[api] = api in self.above or entry is None or self.reaching[entry[0].name]
        return known

    def _entry_of(self, api) -> list | None:
        """The dispatch entry (``[opdef, kind, ...]``) of an op's public form, or of the
        implementation it calls; None for other callables (they keep off the fast path)."""
        for func in (api, self.impls.get(api)):
            entry = getattr(func, "__globals__", {}).get("_ENTRY")
            if entry is not None:
                return entry
        return None


# Ops no choice between PyTorch's form and a faster one involves (in gradient formulas, autograd's
# seed, accumulation and saved tensors: those forms differ in views, sums and pointwise ops only):
# a mode handling only these sees the same calls of them either way, so autograd keeps its faster
# forms under it (the state's ``dispatch_sees_autograd``).
FORM_FREE = frozenset(f"aten.{name}" for name in (
    "mm", "addmm", "bmm", "baddbmm", "mv", "addmv", "dot", "vdot", "permute", "einsum", "convolution",
    "_convolution", "convolution_backward", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention"))

# packets declared -> their ``ReachingOps`` (a mode entered again finds its answers made)
_REACHING: dict[frozenset, ReachingOps] = {}


def reaching(packets: frozenset) -> ReachingOps:
    """The answers for ``packets`` (made once; a bounded few sets are kept)."""
    found = _REACHING.get(packets)
    if found is None:
        if len(_REACHING) > 64:  # modes declaring ever new sets
            _REACHING.clear()
        found = _REACHING.setdefault(packets, ReachingOps(packets))
    return found
