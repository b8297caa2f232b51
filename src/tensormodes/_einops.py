"""einops on tensormodes tensors: a backend einops finds by itself.

einops picks a backend among the subclasses of its ``AbstractBackend`` whose
``framework_name`` is an imported module, so ``rearrange`` / ``reduce`` / ``repeat`` /
``pack`` / ``einsum`` work on tensormodes tensors once this class exists — without
aliasing ``tensormodes`` as ``torch``. It is defined when einops is installed (importing
tensormodes then imports einops); without einops nothing happens. Everything goes through
public ops, so modes, tracers and autograd see einops' calls as the ops they are.
einops' layer classes (``einops.layers.torch``) subclass ``torch.nn.Module`` and are not
covered.
"""

from __future__ import annotations

from ._api import namespace as tm

try:
    from einops._backends import AbstractBackend
except ImportError:  # einops is optional (and an einops without this module is not one we know)
    AbstractBackend = None

__all__: list[str] = []

if AbstractBackend is not None:

    class TensormodesBackend(AbstractBackend):
        """einops' view of tensormodes: the same calls as its PyTorch backend, on tensormodes."""

        framework_name = "tensormodes"

        def is_appropriate_type(self, tensor) -> bool:
            """Tensors of tensormodes (subclasses included) are ours."""
            return isinstance(tensor, tm.Tensor)

        def from_numpy(self, x):
            """A tensor sharing ``x``'s memory; floating ones require grad (as einops' torch backend)."""
            tensor = tm.from_numpy(x)
            if self.is_float_type(tensor):
                tensor.requires_grad = True
            return tensor

        def to_numpy(self, x):
            """The tensor's data as a NumPy array."""
            return x.detach().cpu().numpy()

        def arange(self, start, stop):
            """``arange`` as int64."""
            return tm.arange(start, stop, dtype=tm.int64)

        def reduce(self, x, operation, reduced_axes):
            """min / max / sum / mean over several axes at once; any / all / prod one axis at a time."""
            if operation == "min":
                return x.amin(dim=reduced_axes)
            if operation == "max":
                return x.amax(dim=reduced_axes)
            if operation in ("sum", "mean"):
                return getattr(x, operation)(dim=reduced_axes)
            if operation in ("any", "all", "prod"):
                for axis in sorted(reduced_axes)[::-1]:
                    x = getattr(x, operation)(dim=axis)
                return x
            raise NotImplementedError("Unknown reduction ", operation)

        def transpose(self, x, axes):
            """Axes in the given order."""
            return x.permute(axes)

        def stack_on_zeroth_dimension(self, tensors: list):
            """``stack`` along a new first axis."""
            return tm.stack(tensors)

        def add_axes(self, x, n_axes, pos2len):
            """New axes of the given lengths, as an expanded view."""
            repeats = [-1] * n_axes
            for axis_position, axis_length in pos2len.items():
                x = self.add_axis(x, axis_position)
                repeats[axis_position] = axis_length
            return x.expand(repeats)

        def tile(self, x, repeats):
            """``Tensor.repeat``."""
            return x.repeat(repeats)

        def concat(self, tensors, axis: int):
            """``cat`` along ``axis``."""
            return tm.cat(tensors, dim=axis)

        def add_axis(self, x, new_position):
            """``unsqueeze`` at ``new_position``."""
            return tm.unsqueeze(x, new_position)

        def is_float_type(self, x) -> bool:
            """Whether einops may take a mean: the floating dtypes."""
            return x.dtype in (tm.float16, tm.float32, tm.float64, tm.bfloat16)

        def einsum(self, pattern, *x):
            """``einsum``."""
            return tm.einsum(pattern, *x)
