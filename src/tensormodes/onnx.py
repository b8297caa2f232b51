"""``tensormodes.onnx``: ONNX export is not supported; ``export`` says so and names what there is
instead (``tensormodes.fx.symbolic_trace`` gives a model's graph).

>>> import tensormodes as tm
>>> tm.onnx.is_in_onnx_export()
False
>>> tm.onnx.export(tm.nn.Linear(1, 1), (tm.ones(1, 1),), "model.onnx")  # doctest: +ELLIPSIS
Traceback (most recent call last):
    ...
NotImplementedError: tensormodes.onnx.export: ONNX export is not supported; ...
"""

from __future__ import annotations

__all__ = ["export", "is_in_onnx_export"]


def export(*args, **kwargs):
    """Always raises NotImplementedError: there is no ONNX exporter here."""
    raise NotImplementedError("tensormodes.onnx.export: ONNX export is not supported; use "
                              "tensormodes.fx.symbolic_trace(model) to get the model's graph, or save the weights "
                              "with tensormodes.save and export from PyTorch")


def is_in_onnx_export() -> bool:
    """False: no ONNX export ever runs."""
    return False
