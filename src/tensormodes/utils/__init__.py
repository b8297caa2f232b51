"""Utilities, at PyTorch's paths: ``data`` (datasets, samplers, ``DataLoader``), ``dlpack``
(exchange with NumPy and other libraries), ``flop_counter`` (``FlopCounterMode``),
``checkpoint`` (activation checkpointing), ``_pytree`` (nested containers flattened and
mapped, as ``torch.utils._pytree``) and ``_python_dispatch`` (dispatch-level modes).

>>> import tensormodes as tm
>>> tm.utils.data.DataLoader.__name__, tm.utils.dlpack.from_dlpack is tm.from_dlpack
('DataLoader', True)
>>> with tm.utils.flop_counter.FlopCounterMode(display=False) as counter:
...     _ = tm.ones(2, 3) @ tm.ones(3, 4)
>>> counter.get_total_flops()
48
"""

from . import _python_dispatch, _pytree, checkpoint, data, dlpack, flop_counter

__all__ = ["_python_dispatch", "_pytree", "checkpoint", "data", "dlpack", "flop_counter"]
