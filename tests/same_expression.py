"""Run one Python expression against tensormodes and against PyTorch and describe
the outcome the same way for both: values, shapes and dtypes of the resulting
tensors, or the exception's type and message, plus any warnings raised.

Used by the shape and indexing tests: a case is a string, so the *same* code
runs on both libraries (the library is bound to ``L``).
"""

from __future__ import annotations

import warnings


def _normalize_message(text: str) -> str:
    text = text.split("\n")[0]
    text = text.split(" (Triggered internally at")[0]
    return text.replace("torch.", "").replace("tensormodes.", "")


def describe(value, tensor_type):
    """A comparable description of a result (tensors, sequences of them, Python values)."""
    if isinstance(value, tensor_type):
        dtype = str(value.dtype).rsplit(".", 1)[-1]
        return ("tensor", value.tolist(), tuple(value.shape), dtype)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__ if not isinstance(value, tuple) else "tuple",
                [describe(v, tensor_type) for v in value])
    return value


def outcome(library, source: str, names: dict, *, statement: bool = False, result_names=()):
    """What running ``source`` with ``names`` (made for ``library``) produces.

    For a ``statement``, the outcome is the final state of ``result_names``.
    """
    namespace = dict(names)
    namespace["L"] = library
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if statement:
                exec(source, namespace)
                result = ("state", [describe(namespace[n], library.Tensor) for n in result_names])
            else:
                result = ("value", describe(eval(source, namespace), library.Tensor))
        except Exception as error:  # noqa: BLE001 - the exception is the outcome
            result = ("error", type(error).__name__, _normalize_message(str(error)))
    seen = sorted({(w.category.__name__, _normalize_message(str(w.message))) for w in caught})
    return result, seen
