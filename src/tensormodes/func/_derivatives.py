"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian``: PyTorch's
function transforms, built on reverse-mode autograd (``autograd.grad``).

A transform's *level* is what PyTorch calls a wrapped tensor: each differentiated input enters
as a new tensor object (``x.view_as(x)`` when ``x`` already requires grad, so gradients reach
the levels outside; else ``x.detach().requires_grad_()``), and the gradient is taken with
respect to that object only, so a transform nested in another (``grad(grad(f))``) or a tensor
captured from outside is never confused with the input. The graph is kept for the levels
outside (``create_graph=True``) exactly when the function's output reaches a tensor that
requires grad outside the transform (a walk of its graph); results that do not are detached,
as PyTorch unwraps them.

Forward mode is not implemented: ``jvp`` uses the double-vjp trick (the vjp ``u -> J^T u`` is
linear in ``u``, so differentiating ``<J^T u, t>`` with respect to ``u`` gives ``J t``), and
``jacfwd`` computes the same Jacobian as ``jacrev``, in reverse mode.

>>> import tensormodes as tm
>>> grad(lambda x: (x ** 3).sum())(tm.tensor([1.0, 2.0])).tolist()
[3.0, 12.0]
>>> grad(grad(lambda x: x ** 3))(tm.tensor(2.0)).item()
12.0
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._api import namespace as tm
from .._autograd.graph import AccumulateGrad
from ..autograd import grad as _autograd_grad
from ..utils._pytree import tree_flatten, tree_map, tree_unflatten, treespec_pprint
from ._vmap import RandomnessGuard, check_randomness

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]


# -- argnums ---------------------------------------------------------------------------------

def _wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _normalize_argnums(argnums, num_args: int):
    """``argnums`` checked and made non-negative (an int, or a non-empty tuple of distinct ints)."""
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wrapped = tuple(_wrap_argnum(argnum, num_args) for argnum in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


def _slice_argnums(args: tuple, argnums):
    """The differentiated arguments: one argument for an int ``argnums``, else a tuple."""
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replace_argnums(args: tuple, new, argnums) -> tuple:
    if isinstance(argnums, int):
        return tuple(new if i == argnums else arg for i, arg in enumerate(args))
    replacements = dict(zip(argnums, new))
    return tuple(replacements.get(i, arg) for i, arg in enumerate(args))


# -- levels ----------------------------------------------------------------------------------

class _Level:
    """One transform's inputs: the new tensor objects the function receives, and whether the
    levels outside want gradients through the results (grad mode was on when it began)."""

    def __init__(self) -> None:
        self.outer_grad = tm.is_grad_enabled()
        self.own_leaves: set[int] = set()

    def enter(self, value):
        if not isinstance(value, tm.Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(value)}")
        if self.outer_grad and value.requires_grad:
            return value.view_as(value)  # a new object whose gradients flow on to ``value``
        if not (value.is_floating_point() or value.is_complex()):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")  # PyTorch's wording here
        leaf = value.detach().requires_grad_()
        self.own_leaves.add(id(leaf))
        return leaf

    def reaches_outside(self, tensors) -> bool:
        """True if a tensor among ``tensors`` depends on a tensor requiring grad from outside this
        level (an input that required grad, a captured parameter): the levels outside then need
        the graph. Walks the graph iteratively, stopping at the first such leaf."""
        if not self.outer_grad:
            return False
        pending, seen = [], set()
        for tensor in tensors:
            if isinstance(tensor, tm.Tensor) and tensor.requires_grad:
                if tensor.grad_fn is None:
                    if id(tensor) not in self.own_leaves:
                        return True
                else:
                    pending.append(tensor.grad_fn)
        while pending:
            node = pending.pop()
            if node in seen:
                continue
            seen.add(node)
            if type(node) is AccumulateGrad:  # a leaf's sink
                if id(node.variable) not in self.own_leaves:
                    return True
                continue
            pending.extend(child for child, _ in node.next_functions if child is not None)
        return False

    def leave(self, tree):
        """``tree`` (of tensors only, as PyTorch requires of ``aux``) as the levels outside see it:
        tensors that reach nothing outside detached."""
        def unwrap(value):
            if not isinstance(value, tm.Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(value)}")
            if value.requires_grad and not self.reaches_outside([value]):
                return value.detach()
            return value
        return tree_map(unwrap, tree)


def _grads_or_zeros(outputs, inputs, grad_outputs=None, retain_graph=False, create_graph=False) -> tuple:
    """d outputs / d inputs, zeros for an input the outputs do not depend on (PyTorch's
    ``_autograd_grad``); outputs that do not require grad are left out."""
    pairs = [(out, go) for out, go in zip(outputs, grad_outputs or [None] * len(outputs)) if out.requires_grad]
    if not pairs:
        return tuple(tm.zeros_like(inp) for inp in inputs)
    diff_outputs = [out for out, _ in pairs]
    diff_grad_outputs = None if grad_outputs is None else [go for _, go in pairs]
    # A graph kept for the levels outside includes this level's forward graph: retained with it.
    grads = _autograd_grad(diff_outputs, list(inputs), diff_grad_outputs, retain_graph=retain_graph or create_graph,
                           create_graph=create_graph, allow_unused=True)
    return tuple(tm.zeros_like(inp) if g is None else g for g, inp in zip(grads, inputs))


# -- grad ------------------------------------------------------------------------------------

def _grad_and_value(func, argnums, has_aux: bool, args: tuple, kwargs: dict):
    level = _Level()
    with tm.enable_grad():
        argnums = _normalize_argnums(argnums, len(args))
        flat_diff, diff_spec = tree_flatten(_slice_argnums(args, argnums))
        entered = [level.enter(value) for value in flat_diff]
        output = func(*_replace_argnums(args, tree_unflatten(entered, diff_spec), argnums), **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
        if not isinstance(output, tm.Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        outside = level.reaches_outside([output])
        grads = _grads_or_zeros((output,), entered, create_graph=outside)
    grads = tree_unflatten(list(grads), diff_spec)
    value = output if outside else output.detach()
    return (grads, (value, level.leave(aux))) if has_aux else (grads, value)


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """Returns a function to compute a tuple of the gradient and primal, or forward, computation
    (``grad(func)``'s gradient and ``func``'s value, from one forward pass).

    >>> import tensormodes as tm
    >>> g, value = grad_and_value(lambda x: (x ** 2).sum())(tm.tensor([1.0, 2.0]))
    >>> g.tolist(), value.item()
    ([2.0, 4.0], 5.0)
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return _grad_and_value(func, argnums, has_aux, args, kwargs)
    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """``grad`` operator helps computing gradients of ``func`` with respect to the input(s)
    specified by ``argnums`` (an int or a tuple of ints; each may be a pytree of tensors).
    ``func`` must return a scalar tensor (or ``(scalar, aux)`` with ``has_aux=True``); the
    gradient of an input it does not depend on is zeros. Transforms nest: ``grad(grad(f))``.

    >>> import tensormodes as tm
    >>> grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(tm.tensor([1.0]), tm.tensor([3.0]))
    (tensor([3.]), tensor([1.]))
    >>> grad(lambda params: (params["w"] ** 2).sum())({"w": tm.tensor([1.0, 2.0])})
    {'w': tensor([2., 4.])}
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, (_, aux) = _grad_and_value(func, argnums, True, args, kwargs) if has_aux else \
            (_grad_and_value(func, argnums, False, args, kwargs)[0], (None, None))
        return (grads, aux) if has_aux else grads
    return wrapper


# -- vjp -------------------------------------------------------------------------------------

def _check_outputs(flat_outputs: list, api: str) -> None:
    if (len(flat_outputs) == 1 and flat_outputs[0] is None) or not flat_outputs:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = "
                           f"{flat_outputs})")
    for out in flat_outputs:
        if not isinstance(out, tm.Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(out)}")


def _vjp(func, primals: tuple, argnums, has_aux: bool):
    """(outputs, vjp_fn, aux) of ``func(*primals)``, differentiated with respect to ``argnums``
    (every primal if None)."""
    level = _Level()
    with tm.enable_grad():
        if argnums is None:
            flat_diff, diff_spec = tree_flatten(primals)
            entered = [level.enter(value) for value in flat_diff]
            call_args = tree_unflatten(entered, diff_spec)
        else:
            argnums = _normalize_argnums(argnums, len(primals))
            flat_diff, diff_spec = tree_flatten(_slice_argnums(primals, argnums))
            entered = [level.enter(value) for value in flat_diff]
            call_args = _replace_argnums(primals, tree_unflatten(entered, diff_spec), argnums)
        output = func(*call_args)
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            output, aux = output
            aux = level.leave(aux)
        flat_outputs, output_spec = tree_flatten(output)
        _check_outputs(flat_outputs, "vjp(f, *primals)")
        for out in flat_outputs:
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                                   f"Tensor with dtype {out.dtype}")
        outside = level.reaches_outside(flat_outputs)

    def vjp_fn(cotangents, retain_graph: bool = True, create_graph: bool | None = None):
        if create_graph is None:
            create_graph = tm.is_grad_enabled()
        flat_cotangents, cotangent_spec = tree_flatten(cotangents)
        if cotangent_spec != output_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {treespec_pprint(cotangent_spec)}, primal output: "
                               f"{treespec_pprint(output_spec)}")
        # The graph is kept when asked for and someone outside can use it: the primals' own
        # levels, or cotangents that require grad (jvp's double-vjp trick differentiates in them).
        create_graph = create_graph and (outside or any(
            isinstance(c, tm.Tensor) and c.requires_grad for c in flat_cotangents))
        with tm.enable_grad():
            grads = _grads_or_zeros(flat_outputs, entered, flat_cotangents, retain_graph=retain_graph,
                                    create_graph=create_graph)
        if not create_graph:
            grads = tuple(g.detach() for g in grads)
        return tree_unflatten(list(grads), diff_spec)

    results = level.leave(output) if outside else tree_map(lambda t: t.detach(), output)
    return results, vjp_fn, aux


def vjp(func: Callable, *primals, has_aux: bool = False):
    """Standing for the vector-Jacobian product, returns a tuple containing the results of
    ``func`` applied to ``primals`` and a function that, when given ``cotangents`` (the outputs'
    structure), computes the reverse-mode Jacobian of ``func`` with respect to ``primals`` times
    ``cotangents`` (``(output, vjp_fn, aux)`` with ``has_aux=True``).

    >>> import tensormodes as tm
    >>> out, vjp_fn = vjp(lambda x: x ** 2, tm.tensor([1.0, 2.0]))
    >>> vjp_fn(tm.ones(2))
    (tensor([2., 4.]),)
    """
    output, vjp_fn, aux = _vjp(func, primals, None, has_aux)
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


# -- jvp -------------------------------------------------------------------------------------

_JVP = "jvp(f, primals, tangents)"


def _check_tensors(flat: list, argname: str) -> None:
    if not flat:
        raise RuntimeError(f"{_JVP}: Expected {argname} to contain at least one Tensor.")
    for value in flat:
        if not isinstance(value, tm.Tensor):
            raise RuntimeError(f"{_JVP}: Expected {argname} to only contain Tensors, got {type(value)}")


def _jvp_from_vjp(output, vjp_fn, flat_tangents: list):
    """J t from the vjp of the same function (the double-vjp trick): ``vjp_fn(u) = J^T u`` is
    linear in ``u``, so d <J^T u, t> / du = J t. Two backward passes, no forward pass."""
    flat_outputs, output_spec = tree_flatten(output)
    with tm.enable_grad():
        dummies = [tm.zeros_like(out).requires_grad_() for out in flat_outputs]
        transposed = tree_flatten(vjp_fn(tree_unflatten(dummies, output_spec), create_graph=True))[0]
        outside = any(out.requires_grad for out in flat_outputs)  # still attached: levels outside use it
        # Retained: linearize's jvp_fn runs again through the same forward graph.
        tangents_out = _grads_or_zeros(transposed, dummies, flat_tangents, retain_graph=True, create_graph=outside)
    if not outside:
        tangents_out = tuple(t.detach() for t in tangents_out)
    return tree_unflatten(list(tangents_out), output_spec)


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False, has_aux: bool = False):
    """Standing for the Jacobian-vector product, returns a tuple containing the output of
    ``func(*primals)`` and the "Jacobian of ``func`` evaluated at ``primals``" times
    ``tangents``. Computed with the double-vjp trick (two reverse passes), not forward-mode AD:
    the output tangents have the outputs' dtypes (PyTorch's forward mode keeps a wider tangent's).

    >>> import tensormodes as tm
    >>> out, tangent = jvp(lambda x: x ** 2, (tm.tensor([1.0, 2.0]),), (tm.tensor([1.0, 1.0]),))
    >>> out.tolist(), tangent.tolist()
    ([1.0, 4.0], [2.0, 4.0])
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_primals, primals_spec = tree_flatten(primals)
    flat_tangents, tangents_spec = tree_flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           f"if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{primals_spec} and tangents with structure {tangents_spec}")
    _check_tensors(flat_primals, "primals")
    _check_tensors(flat_tangents, "tangents")
    for primal, tangent in zip(flat_primals, flat_tangents):  # PyTorch's make_dual checks, in its order
        for kind, value in (("primal", primal), ("tangent", tangent)):
            if not (value.is_floating_point() or value.is_complex()):
                raise ValueError(f"Expected {kind} to be floating point or complex, but got: {value.dtype}")
        if tangent.shape != primal.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(primal.shape)} while the given "
                               f"forward gradient is of size {list(tangent.shape)}.")
    try:
        output, vjp_fn, aux = _vjp(func, primals, None, has_aux)
    except RuntimeError as error:  # the checks of vjp, in jvp's words
        message = str(error).replace("vjp(f, *primals)", _JVP).replace("vjp(f, ...)", _JVP)
        raise RuntimeError(message) from None
    tangents_out = _jvp_from_vjp(output, vjp_fn, flat_tangents)
    return (output, tangents_out, aux) if has_aux else (output, tangents_out)


def linearize(func: Callable, *primals) -> tuple:
    """Returns the value of ``func`` at ``primals`` and a function computing its Jacobian-vector
    product there (``jvp_fn(*tangents)``), from one forward pass: each ``jvp_fn`` call is two
    backward passes through the graph kept from it (the double-vjp trick of ``jvp``).

    >>> import tensormodes as tm
    >>> out, jvp_fn = linearize(lambda x: x ** 2, tm.tensor([1.0, 3.0]))
    >>> out.tolist(), jvp_fn(tm.ones(2)).tolist()
    ([1.0, 9.0], [2.0, 6.0])
    """
    output, vjp_fn, _ = _vjp(func, primals, None, False)
    flat_primals, primals_spec = tree_flatten(primals)

    def jvp_fn(*tangents):
        flat_tangents, tangents_spec = tree_flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec} to have the same argspec as the primals "
                               f"{primals_spec}")
        for index, (tangent, primal) in enumerate(zip(flat_tangents, flat_primals)):
            for what in ("shape", "device", "dtype"):
                if getattr(tangent, what) != getattr(primal, what):
                    raise RuntimeError(f"tangent:{index} with {what} {getattr(tangent, what)} in flattened pytree "
                                       f"doesn't match the {what} {getattr(primal, what)} of the corresponding primal.")
        return _jvp_from_vjp(output, vjp_fn, flat_tangents)
    return output, jvp_fn


# -- Jacobians -------------------------------------------------------------------------------

def _check_real(values, func_name: str, is_input: bool) -> None:
    for index, value in enumerate(tree_flatten(values)[0]):
        if isinstance(value, tm.Tensor) and value.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{func_name}: Expected all {kind} to be real but received complex tensor at "
                               f"flattened input idx: {index}")


def _jacobian(func, args: tuple, argnums, has_aux: bool, name: str):
    """The Jacobian of every output with respect to every differentiated input (PyTorch's
    layout: ``jac[output][input]`` of shape ``output.shape + input.shape``), one backward pass
    per output element."""
    _check_real(args, name, is_input=True)
    output, vjp_fn, aux = _vjp(func, args, argnums, has_aux)
    flat_outputs, output_spec = tree_flatten(output)
    _check_real(flat_outputs, name, is_input=False)
    argnums = _normalize_argnums(argnums, len(args))
    flat_primals, primals_spec = tree_flatten((args[argnums],) if isinstance(argnums, int) else
                                              _slice_argnums(args, argnums))
    per_output = []
    for index, out in enumerate(flat_outputs):
        rows = []
        for element in range(out.numel()):
            basis = [tm.zeros_like(other) for other in flat_outputs]
            basis[index].view(-1)[element] = 1
            rows.append(tree_flatten(vjp_fn(tree_unflatten(basis, output_spec)))[0])
        per_input = [tm.stack([row[i] for row in rows]).view(out.shape + primal.shape) if rows
                     else primal.new_zeros(out.shape + primal.shape) for i, primal in enumerate(flat_primals)]
        jac_in = tree_unflatten(per_input, primals_spec)
        per_output.append(jac_in[0] if isinstance(argnums, int) else jac_in)
    jacobian = tree_unflatten(per_output, output_spec)
    return (jacobian, aux) if has_aux else jacobian


def jacrev(func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False) -> Callable:
    """Computes the Jacobian of ``func`` with respect to the arg(s) at index ``argnum`` using
    reverse mode autodiff (one backward pass per output element; ``chunk_size`` is checked and
    changes nothing).

    >>> import tensormodes as tm
    >>> jacrev(lambda x: x.sin())(tm.tensor([0.0, 0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        return _jacobian(func, args, argnums, has_aux, "jacrev")
    return wrapper


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error") -> Callable:
    """Computes the Jacobian of ``func`` with respect to the arg(s) at index ``argnum``: PyTorch
    uses forward mode; here it is the same Jacobian as ``jacrev``'s, computed in reverse mode.
    A random call in ``func`` raises unless ``randomness`` is ``"same"`` or ``"different"``,
    as PyTorch's ``vmap`` over the basis does.

    >>> import tensormodes as tm
    >>> jacfwd(lambda x, y: x * y, argnums=(0, 1))(tm.tensor([2.0]), tm.tensor([3.0]))
    (tensor([[3.]]), tensor([[2.]]))
    """
    check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args):
        if randomness != "error":
            return _jacobian(func, args, argnums, has_aux, "jacfwd")
        with RandomnessGuard():
            return _jacobian(func, args, argnums, has_aux, "jacfwd")
    return wrapper


def hessian(func: Callable, argnums=0) -> Callable:
    """Computes the Hessian of ``func`` with respect to the arg(s) at index ``argnum``
    (``jacfwd(jacrev(func, argnums), argnums)``, as PyTorch composes it).

    >>> import tensormodes as tm
    >>> hessian(lambda x: (x ** 3).sum())(tm.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
