"""Rearrangements of images in ``nn.functional``: ``pixel_shuffle``, ``pixel_unshuffle``,
``channel_shuffle`` and ``native_channel_shuffle`` — ``tensormodes``' own functions (declared in
``_ops/shuffling.py``), as PyTorch's ``F.pixel_shuffle`` is ``torch.pixel_shuffle``.
"""

from __future__ import annotations

from ._common import _reexport

pixel_shuffle = _reexport("pixel_shuffle")
pixel_unshuffle = _reexport("pixel_unshuffle")
channel_shuffle = _reexport("channel_shuffle")
native_channel_shuffle = _reexport("native_channel_shuffle")
