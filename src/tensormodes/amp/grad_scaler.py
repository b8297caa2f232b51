"""``GradScaler``: loss scaling for mixed-precision training, as PyTorch 2.13 runs it.

``GradScaler()`` asks for CUDA (PyTorch's default device) and is disabled with PyTorch's
warning; ``GradScaler("cpu")`` scales: ``scale(loss)`` multiplies by the scale (65536 at
first), ``step(optimizer)`` unscales the gradients and skips the step when one is not finite,
``update()`` halves the scale after a skipped step and doubles it after ``growth_interval``
finite ones. A disabled scaler passes everything through.

>>> import tensormodes as tm
>>> scaler = tm.amp.GradScaler("cpu")
>>> scaler.scale(tm.tensor(2.0)), scaler.get_scale()
(tensor(131072.), 65536.0)
"""

from __future__ import annotations

import enum
import math
import warnings

from .._api import namespace as tm

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    """Where an optimizer is in the current iteration: ready, unscaled, or stepped."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    """Scales the loss so that small gradients survive low precision, and undoes it before the
    optimizer steps (see the module docstring).

    >>> import tensormodes as tm
    >>> layer = tm.nn.Linear(2, 1); opt = tm.optim.SGD(layer.parameters(), lr=0.1)
    >>> scaler = tm.amp.GradScaler("cpu")
    >>> scaler.scale(layer(tm.ones(1, 2)).sum()).backward()
    >>> scaler.step(opt); scaler.update()
    >>> layer.weight.grad.tolist(), scaler.get_scale()
    ([[1.0, 1.0]], 65536.0)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if self._enabled and device == "cuda":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if not backoff_factor < 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale = None  # a 0-d float32 tensor once scale() is first called
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker = None
        self._per_optimizer_states: dict = {}

    def _lazy_init(self) -> None:
        if self._scale is None:
            self._scale = tm.full((), self._init_scale, dtype=tm.float32)
            self._growth_tracker = tm.full((), self._init_growth_tracker, dtype=tm.int32)

    def _state_of(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(id(optimizer), {"stage": OptState.READY, "found_inf": None})

    def scale(self, outputs):
        """``outputs`` (a tensor, or nested lists / tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, tm.Tensor):
            self._lazy_init()
            return outputs * self._scale.to(outputs.dtype)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer) -> None:
        """Divides ``optimizer``'s gradients by the scale, in place, noting whether one is not finite."""
        if not self._enabled:
            return
        state = self._state_of(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        if self._scale is None:
            raise AssertionError("Attempted unscale_ but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = False
        with tm.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if param.grad.dtype is tm.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    param.grad.mul_(inv_scale.to(param.grad.dtype))
                    found_inf = found_inf or not bool(tm.isfinite(param.grad).all())
        state["found_inf"] = found_inf
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscales (if ``unscale_`` was not called) and runs ``optimizer.step`` unless a gradient
        is not finite; returns what the step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state_of(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Backs the scale off after a skipped step, grows it after ``growth_interval`` good ones,
        or sets it to ``new_scale``; starts the next iteration."""
        if not self._enabled:
            return
        if self._scale is None:
            raise AssertionError("Attempted update but _scale is None.  This may indicate your script did not use "
                                 "scaler.scale(loss or outputs) earlier in the iteration.")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                if not isinstance(new_scale, tm.Tensor):
                    raise AttributeError(f"'{type(new_scale).__name__}' object has no attribute 'device'")
                self._scale.copy_(new_scale)
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(found):
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker.fill_(0)
            else:
                tracker = int(self._growth_tracker) + 1
                if tracker == self._growth_interval:
                    grown = float(self._scale) * self._growth_factor
                    if math.isfinite(grown):  # PyTorch keeps the scale when growing would overflow
                        self._scale.fill_(grown)
                    tracker = 0
                self._growth_tracker.fill_(tracker)
        self._per_optimizer_states.clear()

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale)

    def get_growth_factor(self) -> float:
        """The factor the scale grows by."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Sets the factor the scale grows by."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The factor the scale backs off by."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Sets the factor the scale backs off by."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """How many finite steps grow the scale."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Sets how many finite steps grow the scale."""
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        """Whether the scaler scales (False for CUDA, which is not here)."""
        return self._enabled

    def state_dict(self) -> dict:
        """The scale and its settings (an empty dict when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._init_growth_tracker if self._growth_tracker is None
                else int(self._growth_tracker)}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restores what ``state_dict`` gave."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
