"""The exceptions of ``tm.load`` and ``tm.save`` (re-exported by ``tensormodes.serialization``)."""

from __future__ import annotations

import pickle

__all__ = ["FormatError", "UnsafeFileError", "CallerError"]


class FormatError(ValueError):
    """A file that is not a valid checkpoint (safetensors or PyTorch's), or whose contents fail
    their checksums: it names what was found and where."""


class UnsafeFileError(FormatError, pickle.UnpicklingError):
    """A PyTorch checkpoint whose pickle names a global that is not allowed (``os.system``,
    ``builtins.eval``, an unregistered class): nothing of it was imported or called.

    It is also a ``pickle.UnpicklingError``, the type ``torch.load(weights_only=True)`` raises."""


class CallerError(Exception):
    """Carries an exception raised by the caller's own code during a load (a ``map_location``
    callable) or about what it returned, through the unpickler, which re-raises ``error`` as it
    is instead of reporting an invalid file."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error
