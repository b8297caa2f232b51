"""``nn.functional.embedding`` (with ``max_norm``) and ``one_hot``.
"""

from __future__ import annotations

from ... import _dtype
from ..._api import namespace as tm
from ..._ops.common import scalar_type_name
from ..._ops.registry import Tensor
from ._common import _builtin, _function, _public, _top_level


@_builtin
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encodings of class indices: a new last dimension of ``num_classes``
    (by default one more than the largest index).

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.one_hot(tm.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if str(tensor.dtype) != "tensormodes.int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    if tensor.numel() and not tensor.is_meta:  # meta indices have no values to check
        if tensor.min().item() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if tensor.max().item() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == _function("arange")(num_classes, device=tensor.device)).long()


# -- embedding -------------------------------------------------------------------------------

def _rows_to_renormalise(weight: Tensor, input: Tensor) -> Tensor:
    """The rows ``max_norm`` renormalises (``input``'s distinct indices, sorted), checked as
    PyTorch's ``embedding_renorm_`` checks them: it selects them one by one in that order, so the
    first that ``select`` rejects is named; negative indices in range pass."""
    used = _function("unique")(input.long())
    count = weight.shape[0]
    if used.numel() and (used[0].item() < -count or used[-1].item() >= count):
        bad = used[(used < -count) | (used >= count)][0].item()
        raise IndexError(f"select(): index {bad} out of range for tensor of size {list(weight.shape)} at "
                         "dimension 0")
    return used


def _renormalise_rows(weight: Tensor, used: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale in place each row ``used`` of ``weight`` whose ``norm_type``-norm exceeds ``max_norm``
    down to ``max_norm`` (PyTorch's ``embedding_renorm_``; not recorded by autograd)."""
    rows = weight.detach()
    norms = rows[used].norm(norm_type, dim=1)
    scale = (max_norm / (norms + 1e-7)).where(norms > max_norm, norms.new_ones(()))
    rows[used] = rows[used] * scale.unsqueeze(-1)


def _embedding_renorm(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """Scale in place each row of ``input`` that ``indices`` names and whose ``norm_type``-norm
    exceeds ``max_norm`` down to ``max_norm`` (``tensormodes.embedding_renorm_``, what
    ``nn.functional.embedding`` runs for ``max_norm``; not recorded by autograd).

    >>> import tensormodes as tm
    >>> w = tm.tensor([[3.0, 4.0], [0.3, 0.4]])
    >>> tm.embedding_renorm_(w, tm.tensor([0, 1]), 1.0, 2.0).tolist() == [[0.6000000238418579, 0.800000011920929],
    ...                                                                   [0.30000001192092896, 0.4000000059604645]]
    True
    """
    checked = "(while checking arguments for embedding_renorm_)"
    if input.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' {checked}")
    if indices.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.type()} instead {checked}")
    if input.requires_grad and input.is_leaf and tm.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    used = _rows_to_renormalise(input, indices)
    if used.numel() and not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{scalar_type_name(input.dtype)} instead.")
    _renormalise_rows(input, used, max_norm, norm_type)
    return input


_top_level(_embedding_renorm, name="embedding_renorm_")


@_public
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer indices ``input``: ``weight[input]``. The row
    ``padding_idx`` gets no gradient; with ``max_norm`` the rows used are first renormalised in
    place; with ``scale_grad_by_freq`` each row's gradient is divided by how often it is used.

    >>> import tensormodes as tm, tensormodes.nn.functional as F
    >>> F.embedding(tm.tensor([2, 0]), tm.tensor([[1., 1.], [2., 2.], [3., 3.]])).tolist()
    [[3.0, 3.0], [1.0, 1.0]]
    """
    rows = weight.shape[0] if weight.dim() else 0
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= rows or padding_idx < 0 and padding_idx < -rows:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= max(rows, 1)
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported")
    if max_norm is not None:
        if weight.dim() != 2:
            raise RuntimeError("'weight' must be 2-D")
        if weight.is_meta or input.is_meta:  # no values to renormalise: the lookup's shape is all there is
            return _function("embedding")(weight, input, -1 if padding_idx is None else padding_idx,
                                          scale_grad_by_freq, sparse)
        used = _rows_to_renormalise(weight, input)
        if used.numel() and used[0].item() < 0:  # checked before the weight changes
            raise IndexError("index out of range in self")
        _renormalise_rows(weight, used, max_norm, norm_type)
    return _function("embedding")(weight, input, -1 if padding_idx is None else padding_idx, scale_grad_by_freq,
                                  sparse)
