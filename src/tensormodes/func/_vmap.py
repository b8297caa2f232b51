"""``vmap``: PyTorch's vectorizing map, as a loop.

PyTorch runs ``func`` once on batched tensors through per-op batching rules. Here ``func``
runs once per batch index on the inputs sliced there (``x.select(in_dim, i)``), and the
results are stacked along ``out_dims``: the same values, shapes and gradients (the slices are
views, so autograd sees through them), at the cost of one call per batch element. What tells
the two apart: ``func``'s Python side effects (a print, an in-place write to a captured tensor)
happen once per element; PyTorch's errors for in-place writes mixing batched and unbatched
tensors are not raised.

Randomness: ``"error"`` raises PyTorch's error when ``func`` draws random numbers (an active
``__torch_function__`` mode, handling the random ops only, sees their calls, in composites'
bodies too); ``"same"`` restores the default generator's state before each element, so every
element draws the same numbers, PyTorch's; ``"different"`` lets each element draw its own, in
turn: PyTorch's numbers when its one batched draw takes them in the same order (a batch of
fewer than 16 numbers, or elements of a multiple of 16 numbers, as its CPU kernels go), other
numbers of the same distribution otherwise.

>>> import tensormodes as tm
>>> vmap(tm.dot)(tm.tensor([[1.0, 2.0], [3.0, 4.0]]), tm.tensor([[1.0, 1.0], [2.0, 2.0]]))
tensor([ 3., 14.])
>>> vmap(lambda x, scale: x * scale, in_dims=(1, None))(tm.ones(2, 3), tm.tensor(2.0)).shape
tensormodes.Size([3, 2])
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._api import namespace as tm
from .._ops import OPS, RANDOM_MODULES
from ..overrides import TorchFunctionMode
from ..utils._pytree import tree_flatten, tree_is_leaf, tree_map_, tree_unflatten

__all__ = ["vmap", "RandomnessGuard", "check_randomness"]


# -- randomness ------------------------------------------------------------------------------

def check_randomness(randomness: str) -> None:
    """PyTorch's RuntimeError for a ``randomness`` other than ``"error"``, ``"different"``, ``"same"``."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


@functools.cache
def _random_functions() -> frozenset:
    """The public callables of the op table's random ops (``tm.randn``, ``Tensor.uniform_`` ...),
    and the initializers of ``nn.init`` that modes see as calls of their own."""
    found = set()
    for opdef in OPS.values():
        if opdef.kernel.__module__ in RANDOM_MODULES:
            if opdef.function:
                namespace = tm.package()  # the package face; op namespaces are its dotted paths
                for part in opdef.namespace.split(".")[1:]:
                    namespace = getattr(namespace, part)
                found.add(getattr(namespace, opdef.function))
            found.update(getattr(tm.Tensor, method) for method in (opdef.method, opdef.inplace) if method)
    # Python-level initializers that hand their call to the modes first (``handle_torch_function``):
    # a mode that skips them runs them below itself, where it would not see their random draws.
    init = tm.package().nn.init
    found.update((init.uniform_, init.normal_, init.kaiming_uniform_))
    return frozenset(found)


class RandomnessGuard(TorchFunctionMode):
    """A mode that raises PyTorch's error at the first random call (``randn``, ``x.uniform_()``,
    and the ones inside composites such as ``F.dropout``): vmap's ``randomness="error"``.

    It declares the random ops as its ``handled_functions``, so every other call skips it on the
    fast path, and a composite's body, which runs with the mode still active, reaches it with
    its random calls (``F.dropout``'s ``bernoulli_``)."""

    def __init__(self) -> None:
        super().__init__()
        self.handled_functions = _random_functions()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in self.handled_functions:
            raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                               "'same' or 'different' randomness flags on vmap or perform the randomness operation "
                               "out of vmap")
        return func(*args, **(kwargs or {}))


# -- in_dims and out_dims --------------------------------------------------------------------

def _name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _broadcast_prefix(prefix, spec) -> list | None:
    """``prefix`` (a tree whose leaves apply to whole subtrees) flattened to one value per leaf
    of ``spec``'s tree, or None when it is not a prefix of that structure (PyTorch's
    ``_broadcast_to_and_flatten``)."""
    if tree_is_leaf(prefix):
        return [prefix] * spec.num_leaves
    children, prefix_spec = tree_flatten(prefix, is_leaf=lambda node: node is not prefix)
    if spec.is_leaf() or prefix_spec.type is not spec.type or prefix_spec.context != spec.context \
            or prefix_spec.num_children != spec.num_children:
        return None
    flat: list = []
    for index, child in enumerate(children):
        part = _broadcast_prefix(child, spec.child(index))
        if part is None:
            return None
        flat.extend(part)
    return flat


def _batched_inputs(func, in_dims, args: tuple) -> tuple[int, list, list, Any]:
    """(batch size, one in_dim per flat argument (non-negative or None), flat arguments, spec)."""
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = _broadcast_prefix(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure {args_spec}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError(f"{where}: Got in_dim={in_dim} for an input but in_dim must be either an integer "
                             "dimension or None.")
        if isinstance(in_dim, int) and not isinstance(arg, tm.Tensor):
            raise ValueError(f"{where}: Got in_dim={in_dim} for an input but the input is of type {type(arg)}. We "
                             "cannot vmap over non-Tensor arguments, please use None as the respective in_dim")
        if in_dim is not None and not -arg.dim() <= in_dim < arg.dim():
            raise ValueError(f"{where}: Got in_dim={in_dim} for some input, but that input is a Tensor of "
                             f"dimensionality {arg.dim()} so expected in_dim to satisfy -{arg.dim()} <= in_dim < "
                             f"{arg.dim()}.")
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    sizes = [arg.size(in_dim) for in_dim, arg in zip(flat_in_dims, flat_args) if in_dim is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != sizes[0] for size in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, args_spec


def _check_out_dims(out_dims, func) -> None:
    def check(value):
        if value is not None and not isinstance(value, int):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                             "python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")
    if not isinstance(out_dims, int):
        tree_map_(check, out_dims)


def _flat_out_dims(output, output_spec, out_dims, func) -> list:
    flat = None
    if isinstance(output, tm.Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat = list(out_dims)
    else:
        flat = _broadcast_prefix(out_dims, output_spec)
    if flat is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                         f"has structure {output_spec}.")
    return flat


# -- the loop --------------------------------------------------------------------------------

def _run_each(func, batch_size: int, flat_in_dims: list, flat_args: list, args_spec, randomness: str,
              kwargs: dict) -> list:
    """``func``'s output for each batch index, in order."""
    if randomness == "error":
        with RandomnessGuard():  # entered once: entering a mode builds the protocol's state
            return _run_each(func, batch_size, flat_in_dims, flat_args, args_spec, "different", kwargs)
    state = tm.get_rng_state() if randomness == "same" else None
    outputs = []
    for index in range(batch_size):
        if state is not None:
            tm.set_rng_state(state)
        sliced = [arg if in_dim is None else arg.select(in_dim, index) for arg, in_dim in zip(flat_args, flat_in_dims)]
        outputs.append(func(*tree_unflatten(sliced, args_spec), **kwargs))
    return outputs


def _stack(func, outputs: list, out_dims, batch_size: int):
    """The per-element outputs as one output: each tensor leaf stacked along its out_dim."""
    flat_first, output_spec = tree_flatten(outputs[0])
    flat_out_dims = _flat_out_dims(outputs[0], output_spec, out_dims, func)
    flat_each = [tree_flatten(output)[0] for output in outputs]
    stacked = []
    for position, out_dim in enumerate(flat_out_dims):
        if out_dim is None:
            stacked.append(flat_first[position])
            continue
        if not isinstance(flat_first[position], tm.Tensor):
            name = _name(func)
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(flat_first[position])}. Did you mean to set out_dims= to None for output?")
        values = [flat[position] for flat in flat_each]
        if batch_size == 0:  # the shapes come from one call on zeros (see ``_empty_batch``)
            shape = list(values[0].shape)
            shape.insert(out_dim % (len(shape) + 1), 0)
            stacked.append(values[0].new_empty(shape))
        else:
            stacked.append(tm.stack(values, dim=out_dim))
    return tree_unflatten(stacked, output_spec)


def _vmap_call(func, in_dims, out_dims, randomness: str, args: tuple, kwargs: dict):
    _check_out_dims(out_dims, func)
    batch_size, flat_in_dims, flat_args, args_spec = _batched_inputs(func, in_dims, args)
    if batch_size == 0:
        # No element to run: one call on zeros gives the outputs' shapes, batched with size 0.
        zeros = [arg if in_dim is None else arg.new_zeros(arg.shape[:in_dim] + arg.shape[in_dim + 1:])
                 for arg, in_dim in zip(flat_args, flat_in_dims)]
        outputs = _run_each(func, 1, [None] * len(zeros), zeros, args_spec, randomness, kwargs)
    else:
        outputs = _run_each(func, batch_size, flat_in_dims, flat_args, args_spec, randomness, kwargs)
    return _stack(func, outputs, out_dims, batch_size)


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size: int | None = None
         ) -> Callable:
    """vmap is the vectorizing map; ``vmap(func)`` returns a new function that maps ``func`` over
    some dimension of the inputs (``in_dims``: an int, None for an unbatched input, or a nested
    tuple matching the inputs' structure; negative dims count from the end) and stacks the
    results along ``out_dims``. Here it runs ``func`` once per batch element (see the module's
    docstring); ``chunk_size`` is checked and changes nothing.

    >>> import tensormodes as tm
    >>> from tensormodes.func import grad
    >>> w, x = tm.tensor([1.0, 2.0]), tm.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> vmap(grad(lambda w, x: (w * x).sum() ** 2), in_dims=(None, 0))(w, x)  # per-sample gradients
    tensor([[2., 0.],
            [0., 4.]])
    """
    check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)
    return wrapped
