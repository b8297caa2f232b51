"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. for large vocabularies —
frequent classes in a head, the rest in tail clusters reached through the head's cluster entries,
each cluster projected to a smaller width (``in_features / div_value**k``)."""

from __future__ import annotations

import itertools
from collections import namedtuple
from collections.abc import Sequence

from ..._api import namespace as tm
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation: ``forward(input, target)`` gives each target's
    log-probability (``output``) and their mean negative (``loss``); ``log_prob`` gives every
    class's, ``predict`` the most likely class. ``cutoffs`` split the classes (sorted by
    frequency) into the head's shortlist and the tail clusters.

    >>> import tensormodes as tm
    >>> asm = tm.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8], div_value=2.0)
    >>> out = asm(tm.randn(3, 8), tm.tensor([1, 5, 9]))
    >>> out.output.shape, out.loss.shape, asm.log_prob(tm.randn(3, 8)).shape
    (tensormodes.Size([3]), tensormodes.Size([]), tensormodes.Size([3, 10]))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                                        Linear(hidden, self.cutoffs[i + 1] - self.cutoffs[i], bias=False,
                                               device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        """Initialise the head and every cluster's projections again."""
        self.head.reset_parameters()
        for to_hidden, to_cluster in self.tail:
            to_hidden.reset_parameters()
            to_cluster.reset_parameters()

    def forward(self, input_, target_):
        """``(output, loss)``: each target's log-probability, and their mean negative."""
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        used_rows, batch_size = 0, target.size(0)
        output = input.new_zeros(batch_size)
        gather_indices = target.new_empty(batch_size)
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(itertools.pairwise(bounds)):
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:  # the shortlist: the head's own entries
                gather_indices.index_copy_(0, rows, target[mask])
            else:  # a cluster: the head's cluster entry plus the log-probability within the cluster
                cluster_output = self.tail[i - 1](input.index_select(0, rows))
                gather_indices.index_fill_(0, rows, self.shortlist_size + i - 1)
                within = F.log_softmax(cluster_output, dim=1).gather(1, (target[mask] - low).unsqueeze(1))
                output.index_copy_(0, rows, within.squeeze(1))
            used_rows += rows.numel()
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, gather_indices.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """Every class's log-probability, ``(batch, n_classes)``.

        >>> import tensormodes as tm
        >>> asm = tm.nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[3])
        >>> round(asm.log_prob(tm.randn(2, 4)).exp().sum(1).tolist()[0], 5)
        1.0
        """
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row (the full distribution computed only for rows whose
        head prefers a cluster).

        >>> import tensormodes as tm
        >>> tm.nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[3]).predict(tm.randn(5, 4)).shape
        tensormodes.Size([5])
        """
        head_output = self.head(input)
        output = tm.argmax(head_output, dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not not_in_shortlist.any():
            return output
        if not_in_shortlist.all():
            return tm.argmax(self._get_full_log_prob(input, head_output), dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist], head_output[not_in_shortlist])
        output[not_in_shortlist] = tm.argmax(log_prob, dim=1)
        return output
