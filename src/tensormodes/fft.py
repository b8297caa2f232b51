"""Discrete Fourier transforms, as in ``torch.fft``: ``fft``, ``ifft``, ``rfft``, ``irfft``,
``hfft``, ``ihfft``, their 2-D and N-D forms (``fft2``, ``rfftn`` ...), the sample frequencies
``fftfreq`` and ``rfftfreq``, and ``fftshift`` / ``ifftshift``; every transform differentiable.

The functions are the ops declared with ``namespace="tensormodes.fft"`` (in ``_ops/fft.py``);
this module binds each under its public name.

>>> import tensormodes as tm
>>> x = tm.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
>>> spectrum = tm.fft.rfft(x)
>>> spectrum
tensor([10.+0.j, -2.+2.j, -2.+0.j], grad_fn=<FftR2CBackward0>)
>>> spectrum.abs().sum().backward(); x.grad.shape
tensormodes.Size([4])
"""

from ._api import build as _build
from ._ops import OPS as _OPS

_FUNCTIONS = [opdef.function for opdef in _OPS.values() if opdef.namespace == __name__ and opdef.function]
globals().update({name: _build.namespace_function(__name__, name) for name in _FUNCTIONS})

__all__ = list(_FUNCTIONS)
