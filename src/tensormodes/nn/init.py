"""Parameter initialisation schemes, as in ``torch.nn.init``.

Every function fills its tensor in place, without recording gradients, and
returns it. ``generator=`` draws from a given ``tm.Generator``. As in PyTorch,
``uniform_``, ``normal_``, ``constant_`` and ``kaiming_uniform_`` take part in
``__torch_function__`` (a mode sees a Linear's ``kaiming_uniform_`` as one call);
like PyTorch's, they are not listed by ``get_overridable_functions``.

>>> import tensormodes as tm
>>> w = tm.empty(3, 5)
>>> tm.nn.init.constant_(w, 0.5).sum().item()
7.5
>>> g = tm.Generator().manual_seed(0)
>>> bool(tm.nn.init.kaiming_uniform_(w, a=5 ** 0.5, generator=g).abs().max() <= 1 / 5 ** 0.5)
True
"""

from __future__ import annotations

import math
import warnings

from .. import linalg
from .._api import namespace as tm
from .._api.tensor import Tensor
from ..overrides import handle_torch_function, has_torch_function_variadic

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
           "sparse_"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """Return the recommended gain value for the given nonlinearity function.

    ============ ==========================================
    linear/conv  1
    sigmoid      1
    tanh         5/3
    relu         sqrt(2)
    leaky_relu   sqrt(2 / (1 + negative_slope^2))
    selu         3/4
    ============ ==========================================

    >>> import tensormodes as tm
    >>> tm.nn.init.calculate_gain("leaky_relu", 0.2)
    1.3867504905630728
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        # PyTorch's empirical value (pytorch/pytorch#50664).
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: tm.Generator | None = None) -> Tensor:
    """Fill the input Tensor with values drawn from the uniform distribution U(a, b).

    >>> import tensormodes as tm
    >>> bool((tm.nn.init.uniform_(tm.empty(100), -1, 1).abs() <= 1).all())
    True
    """
    if has_torch_function_variadic(tensor):
        return handle_torch_function(uniform_, (tensor,), tensor=tensor, a=a, b=b, generator=generator)
    with tm.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: tm.Generator | None = None) -> Tensor:
    """Fill the input Tensor with values drawn from the normal distribution N(mean, std^2).

    >>> import tensormodes as tm
    >>> tm.nn.init.normal_(tm.empty(2, 3), std=0.0).tolist()
    [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    if has_torch_function_variadic(tensor):
        return handle_torch_function(normal_, (tensor,), tensor=tensor, mean=mean, std=std, generator=generator)
    with tm.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: tm.Generator | None = None) -> Tensor:
    """Fill the input Tensor with values drawn from a truncated normal distribution.

    Values are drawn from N(mean, std^2) restricted to [a, b] by PyTorch 2.13's
    rejection steps (so a seed gives PyTorch's values): when [a, b] holds more than 30%
    of the mass, normals outside it are redrawn (the whole tensor's worth each round);
    otherwise uniforms on [a, b] are accepted against the density's ratio to its peak.

    >>> import tensormodes as tm
    >>> w = tm.nn.init.trunc_normal_(tm.empty(1000), a=-0.5, b=0.5)
    >>> bool((w.abs() <= 0.5).all())
    True
    """
    if tensor.is_meta:  # no values: nothing is drawn
        return tensor

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    with tm.no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            _trunc_normal_by_redrawing(tensor, mean, std, a, b, generator)
        else:
            _trunc_normal_by_acceptance(tensor, mean, std, a, b, generator)
        return tensor


def _trunc_normal_by_redrawing(tensor: Tensor, mean: float, std: float, a: float, b: float, generator) -> None:
    # the bounds as the tensor's dtype holds them, so the test matches the stored values
    low = tm.tensor(a, dtype=tensor.dtype).item()
    high = tm.tensor(b, dtype=tensor.dtype).item()
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < low) | (result > high)
        if not outside.any():
            break
        result = tm.where(outside, tm.empty_like(result).normal_(mean, std, generator=generator), result)
    if tensor is not result:
        tensor.copy_(result)


def _trunc_normal_by_acceptance(tensor: Tensor, mean: float, std: float, a: float, b: float, generator) -> None:
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    candidates = tm.empty_like(tensor)
    accept = tm.empty_like(tensor)
    tensor.uniform_(a, b, generator=generator)
    candidates.copy_(tensor)
    candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)  # the log density over its peak
    pending = accept.uniform_(generator=generator).log_().gt(candidates)
    if not pending.any():
        return
    result = tensor
    while True:
        candidates.uniform_(a, b, generator=generator)
        result = tm.where(pending, candidates, result)
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = tm.where(pending, accept.uniform_(generator=generator).log_().gt(candidates), pending)
        if not pending.any():
            break
    tensor.copy_(result)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill the input Tensor with the value ``val``.

    >>> import tensormodes as tm
    >>> tm.nn.init.constant_(tm.empty(2), 0.3).tolist()
    [0.30000001192092896, 0.30000001192092896]
    """
    if has_torch_function_variadic(tensor):
        return handle_torch_function(constant_, (tensor,), tensor=tensor, val=val)
    with tm.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill the input Tensor with the scalar value 1.

    >>> import tensormodes as tm
    >>> tm.nn.init.ones_(tm.empty(2)).tolist()
    [1.0, 1.0]
    """
    with tm.no_grad():
        return tensor.fill_(1)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill the input Tensor with the scalar value 0.

    >>> import tensormodes as tm
    >>> tm.nn.init.zeros_(tm.empty(2)).tolist()
    [0.0, 0.0]
    """
    with tm.no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill the 2-dimensional input Tensor with the identity matrix.

    >>> import tensormodes as tm
    >>> tm.nn.init.eye_(tm.empty(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with tm.no_grad():
        return tensor.copy_(tm.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill the {3, 4, 5}-dimensional input Tensor with the Dirac delta function.

    Preserves the identity of the inputs in Convolutional layers, where as
    many input channels are preserved as possible; with ``groups > 1`` each
    group of channels preserves identity.

    >>> import tensormodes as tm
    >>> tm.nn.init.dirac_(tm.empty(2, 2, 3))[:, :, 1].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    dimensions = tensor.ndim
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with tm.no_grad():
        tensor.zero_()
        centre = tuple(size // 2 for size in sizes[2:])
        # One vectorised write: (group * out_per_group + d, d, centre...) for every group and d < min_dim.
        d = tm.arange(min_dim, device=tensor.device)
        rows = (tm.arange(groups, device=tensor.device).unsqueeze(1) * out_per_group + d).reshape(-1)
        cols = d.repeat(groups)
        tensor[(rows, cols) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = math.prod(tensor.shape[2:])
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: tm.Generator | None = None) -> Tensor:
    """Fill the input Tensor using the Xavier (Glorot) uniform scheme.

    Values come from U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).

    >>> import tensormodes as tm
    >>> bool((tm.nn.init.xavier_uniform_(tm.empty(3, 5)).abs() <= (6 / 8) ** 0.5).all())
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: tm.Generator | None = None) -> Tensor:
    """Fill the input Tensor using the Xavier (Glorot) normal scheme.

    Values come from N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> import tensormodes as tm
    >>> tm.nn.init.xavier_normal_(tm.empty(3, 5)).shape
    tensormodes.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: tm.Generator | None = None) -> Tensor:
    """Fill the input Tensor using the Kaiming (He) uniform scheme.

    Values come from U(-bound, bound) with bound = gain * sqrt(3 / fan_mode).

    >>> import tensormodes as tm
    >>> w = tm.nn.init.kaiming_uniform_(tm.empty(4, 6), mode="fan_in", nonlinearity="relu")
    >>> bool((w.abs() <= 1.0).all())
    True
    """
    if has_torch_function_variadic(tensor):
        return handle_torch_function(kaiming_uniform_, (tensor,), tensor=tensor, a=a, mode=mode,
                                     nonlinearity=nonlinearity, generator=generator)
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: tm.Generator | None = None) -> Tensor:
    """Fill the input Tensor using the Kaiming (He) normal scheme.

    Values come from N(0, std^2) with std = gain / sqrt(fan_mode).

    >>> import tensormodes as tm
    >>> tm.nn.init.kaiming_normal_(tm.empty(3, 5), mode="fan_out").shape
    tensormodes.Size([3, 5])
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(fan), generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: tm.Generator | None = None) -> Tensor:
    """Fill the input Tensor with a (semi) orthogonal matrix (Saxe et al. 2013), scaled by ``gain``.

    Dimensions beyond the first are flattened.

    >>> import tensormodes as tm
    >>> w = tm.nn.init.orthogonal_(tm.empty(3, 5))
    >>> tm.allclose(w @ w.T, tm.eye(3), atol=1e-5)
    True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with tm.no_grad():
        flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if rows < cols:
            flattened = flattened.T
        q, r = linalg.qr(flattened)
        # Signs from R's diagonal make Q uniformly distributed (Mezzadri, arXiv:math-ph/0609050).
        q = q * tm.diagonal(r, 0).sign()
        if rows < cols:
            q = q.T
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: tm.Generator | None = None) -> Tensor:
    """Fill the 2D input Tensor as a sparse matrix (Martens 2010): values from N(0, std^2), then
    in each column ``ceil(sparsity * rows)`` rows, chosen at random, set to zero.

    As PyTorch's, the rows are chosen with the default generator even when ``generator`` is
    given (it draws the values), so a seed gives PyTorch's matrix.

    >>> import tensormodes as tm
    >>> w = tm.nn.init.sparse_(tm.empty(10, 4), sparsity=0.3)
    >>> (w == 0).sum(0).tolist()
    [3, 3, 3, 3]
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with tm.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):  # one permutation per column, as PyTorch draws them
            tensor[tm.randperm(rows)[:num_zeros], col] = 0
    return tensor


def _deprecated(initializer):
    """PyTorch's old name of ``initializer`` (without the trailing underscore): a FutureWarning, then
    the same call."""
    new_name = initializer.__name__
    old_name = new_name[:-1]

    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return initializer(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = old_name
    deprecated.__doc__ = f"""``{old_name}(...)``: deprecated, ``{new_name}`` with a ``FutureWarning``.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.nn.init.constant(tm.empty(2), 0.5).tolist()
    [0.5, 0.5]
    """
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
__all__ += ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
            "kaiming_normal", "orthogonal", "sparse"]
