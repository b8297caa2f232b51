"""``tensormodes.backends``: PyTorch's backend switches (``torch.backends``), with PyTorch's
defaults and validation. None of cuDNN, CUDA or MPS is here, so the flags are recorded
and change no computation; the ``is_available()`` answers are honest (False).

>>> import tensormodes as tm
>>> tm.backends.cudnn.benchmark = True
>>> tm.backends.cudnn.benchmark, tm.backends.cudnn.is_available(), tm.backends.mps.is_available()
(True, False, False)
>>> tm.backends.cudnn.benchmark = False
"""

from __future__ import annotations

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
