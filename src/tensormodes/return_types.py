"""Named tuples returned by ops with several outputs (``max(dim=...)``, ``sort``, ``topk`` ...),
as in ``torch.return_types``.

>>> import tensormodes as tm
>>> result = tm.tensor([[1, 5], [7, 2]]).max(dim=1)
>>> isinstance(result, tm.return_types.max), result.values.tolist(), result.indices.tolist()
(True, [5, 7], [1, 0])
"""

from ._ops.registry import RETURN_TYPES

globals().update(RETURN_TYPES)
__all__ = sorted(RETURN_TYPES)
