"""Ready-made modes: each composes with the others and with your own modes on the stack (all
``TorchFunctionMode``s but the FLOP counter, which pushes a ``TorchDispatchMode``).

* ``LoggingMode``: one line per call, arguments summarized, nested calls indented;
* ``OpCounterMode``: calls per public function;
* ``NanCheckMode``: stops at the first NaN or Inf result, naming your source line;
* ``TimingMode``: wall time per function, inclusive and exclusive;
* ``DefaultDtypeMode``: a default-dtype scope;
* ``FlopCounterMode`` (also at PyTorch's path ``tensormodes.utils.flop_counter``): FLOPs per aten
  op and per module, counted at the dispatch level as PyTorch counts them.

>>> import tensormodes as tm
>>> from tensormodes.modes import OpCounterMode, NanCheckMode
>>> with OpCounterMode() as counter, NanCheckMode():
...     _ = tm.ones(2).exp()
>>> dict(counter.counts)
{'tensormodes.ones': 1, 'tensormodes.Tensor.exp': 1}
"""

from ..utils.flop_counter import FlopCounterMode
from .default_dtype import DefaultDtypeMode
from .logging_mode import LoggingMode
from .nan_check import NanCheckMode
from .op_counter import OpCounterMode
from .timing import OpTime, TimingMode

__all__ = ["LoggingMode", "OpCounterMode", "NanCheckMode", "TimingMode", "OpTime", "DefaultDtypeMode",
           "FlopCounterMode"]
