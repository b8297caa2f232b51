"""``Embedding``, a lookup table of fixed-size vectors, and ``EmbeddingBag``, which reduces bags of them.

>>> import tensormodes as tm
>>> emb = tm.nn.Embedding(10, 3, padding_idx=0)
>>> emb(tm.tensor([[0, 2], [4, 0]])).shape, emb.weight[0].tolist()
(tensormodes.Size([2, 2, 3]), [0.0, 0.0, 0.0])
"""

from __future__ import annotations

from ..._api import namespace as tm
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """A simple lookup table that stores embeddings of a fixed dictionary and size.

    ``weight`` (num_embeddings, embedding_dim) is initialised from N(0, 1); the
    ``padding_idx`` row is zero and receives no gradient. ``max_norm`` renormalises
    looked-up rows in place.

    >>> import tensormodes as tm
    >>> tm.nn.Embedding(10, 3, max_norm=1.0)
    Embedding(10, 3, max_norm=1.0)
    """

    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: tm.Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(tm.empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        """Draw ``weight`` from N(0, 1) and zero the ``padding_idx`` row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with tm.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``F.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)``."""
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        """``num_embeddings, embedding_dim`` and the options that differ from their defaults."""
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            text += ", sparse=True"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: tm.Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """Create an Embedding instance from the given 2-dimensional tensor (frozen unless ``freeze=False``).

        >>> import tensormodes as tm
        >>> emb = tm.nn.Embedding.from_pretrained(tm.tensor([[1., 2.], [3., 4.]]))
        >>> emb(tm.tensor([1])).tolist(), emb.weight.requires_grad
        ([[3.0, 4.0]], False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, _freeze=freeze,
                   padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Compute sums or means of 'bags' of embeddings, without instantiating the intermediate embeddings.

    ``weight`` (num_embeddings, embedding_dim) is initialised from N(0, 1) with the
    ``padding_idx`` row zeroed; ``mode`` is 'mean', 'sum' or 'max'. A 2D input is a batch of
    fixed-length bags, a 1D input is cut into bags at ``offsets``; ``per_sample_weights``
    (mode 'sum') scales each looked-up row.

    >>> import tensormodes as tm
    >>> bag = tm.nn.EmbeddingBag(10, 3, mode='sum')
    >>> bag
    EmbeddingBag(10, 3, mode='sum')
    >>> bag(tm.tensor([1, 2, 4, 5, 4]), tm.tensor([0, 2])).shape
    tensormodes.Size([2, 3])
    """

    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode",
                     "sparse", "include_last_offset", "padding_idx"]

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: tm.Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise AssertionError("padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(tm.empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        """Draw ``weight`` from N(0, 1) and zero the ``padding_idx`` row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with tm.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: tm.Tensor, offsets: tm.Tensor | None = None,
                per_sample_weights: tm.Tensor | None = None) -> tm.Tensor:
        """``F.embedding_bag`` with the module's weight and settings: one row per bag."""
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self) -> str:
        """``num_embeddings, embedding_dim``, ``mode`` and the options that differ from their defaults."""
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            text += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx!r}"
        return text

    @classmethod
    def from_pretrained(cls, embeddings: tm.Tensor, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """Create an EmbeddingBag instance from the given 2-dimensional tensor (frozen unless ``freeze=False``).

        >>> import tensormodes as tm
        >>> bag = tm.nn.EmbeddingBag.from_pretrained(tm.tensor([[1., 2.], [3., 4.]]))
        >>> bag(tm.tensor([[0, 1]])).tolist(), bag.weight.requires_grad
        ([[2.0, 3.0]], False)
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
