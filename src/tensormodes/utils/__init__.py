"""Utilities, at PyTorch's paths: ``data`` (datasets, samplers, ``DataLoader``), ``dlpack``
(exchange with NumPy and other libraries), ``flop_counter`` (``FlopCounterMode``),
``checkpoint`` (activation checkpointing), ``_pytree`` (nested containers flattened and
mapped, as ``torch.utils._pytree``), ``_python_dispatch`` (dispatch-level modes) and
``_debug_mode`` (``DebugMode``, also here as ``tensormodes.utils.DebugMode`` for the layers
that may not import from a private module, such as the ``trace`` command).

>>> import tensormodes as tm
>>> tm.utils.data.DataLoader.__name__, tm.utils.dlpack.from_dlpack is tm.from_dlpack
('DataLoader', True)
>>> with tm.utils.flop_counter.FlopCounterMode(display=False) as counter:
...     _ = tm.ones(2, 3) @ tm.ones(3, 4)
>>> counter.get_total_flops()
48
"""

from . import _debug_mode, _python_dispatch, _pytree, checkpoint, data, dlpack, flop_counter
from ._debug_mode import DebugMode

__all__ = ["_debug_mode", "_python_dispatch", "_pytree", "checkpoint", "data", "dlpack", "flop_counter", "DebugMode"]
