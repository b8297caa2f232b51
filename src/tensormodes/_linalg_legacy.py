"""PyTorch's older linear-algebra functions of ``tensormodes`` itself that are composites over
public ops (handlers of ``__torch_function__`` see the function, the dispatch level the ops it
runs, gradients are theirs): ``adjoint``, the deprecated ``qr``, ``chain_matmul``, ``nuclear_norm``
and ``frobenius_norm`` (each warns once, as PyTorch's ``TORCH_WARN_ONCE``); and the functions
PyTorch removed in 1.9 and keeps as stubs that raise (``matrix_rank``, ``symeig``, ``eig``,
``lstsq``, ``solve``), with its messages. The package face re-exports ``COMPOSITES`` and
``REMOVED``; ``Tensor.adjoint`` and ``Tensor.qr`` call the composites.

>>> import tensormodes as tm
>>> tm.adjoint(tm.tensor([[1j, 2.], [3., 4.]]))
tensor([[0.-1.j, 3.-0.j],
        [2.-0.j, 4.-0.j]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ._api import build
from ._api import namespace as tm
from ._linalg import multi_dot
from ._ops.linalg_lu import LEGACY_QR_RESULT, warn_once
from ._ops.registry import Tensor

COMPOSITES, _public = build.native_composites("tensormodes")
REMOVED: dict[str, Callable] = {}



@_public
def adjoint(input: Tensor):
    """The conjugate transpose of each matrix of ``input`` (its last two dimensions), a view:
    ``input.mH``; a 0-dim tensor is returned conjugated, with a warning.

    >>> import tensormodes as tm
    >>> tm.adjoint(tm.tensor([[1., 2.], [3., 4.]]))
    tensor([[1., 3.],
            [2., 4.]])
    """
    if input.dim() == 0:
        warn_once("adjoint() is deprecated on 0-D tensors. Consider using x.conj().")
        return input.conj()
    if input.dim() == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    transposed = input.transpose(-2, -1)
    return transposed.conj() if input.is_complex() else transposed


_QR = LEGACY_QR_RESULT


@_public
def qr(input: Tensor, some: bool = True, *, out=None):
    """PyTorch's older ``torch.qr`` (deprecated: it warns once): ``linalg.qr(input, 'reduced' if
    some else 'complete')``, as the named tuple ``(Q, R)``.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.qr(tm.tensor([[3., 1.], [4., 2.]], dtype=tm.float64)).R.tolist()
    [[-5.0, -2.2], [0.0, 0.3999999999999999]]
    """
    warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
               "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = "
               "torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else "
               "'complete')")
    Q, R = tm.package().linalg.qr(input, "reduced" if some else "complete")
    if out is not None:
        for target, value in zip(out, (Q, R), strict=True):
            target.resize_(value.shape).copy_(value)
        return _QR(*out)
    return _QR(Q, R)


@_public
def chain_matmul(*matrices: Tensor, out: Tensor | None = None):
    """The product of the given matrices (deprecated: it warns once), as ``linalg.multi_dot``
    computes it (the cheapest order); one matrix is returned as a copy.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.chain_matmul(tm.ones(2, 3), tm.ones(3, 4), tm.ones(4, 1)).tolist()
    [[12.0], [12.0]]
    """
    warn_once("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
               "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
               "parameters.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for matrix in matrices:
        if matrix.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {matrix.dim()}, expected 2 instead.")
    result = matrices[0].clone() if len(matrices) == 1 else multi_dot(list(matrices))
    return result if out is None else out.resize_(result.shape).copy_(result)


@_public
def nuclear_norm(input: Tensor, dim: Sequence[int] | bool | None = None, keepdim: bool = False, *,
                 out: Tensor | None = None):
    """The nuclear norm (the sum of the singular values) of ``input``'s matrices over ``dim``
    (deprecated: it warns once): ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``.
    ``nuclear_norm(input, keepdim)`` takes a matrix.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.nuclear_norm(tm.tensor([[3., 0.], [0., -4.]]))
    tensor(7.)
    """
    warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
               "future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, bool):  # the overload without dim: nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    if dim is None:
        dim = (-2, -1)
    result = tm.package().linalg.matrix_norm(input, "nuc", dim, keepdim)
    return result if out is None else out.resize_(result.shape).copy_(result)


@_public
def frobenius_norm(input: Tensor, dim: Sequence[int] | int, keepdim: bool = False, *, out: Tensor | None = None):
    """The Frobenius norm (the 2-norm of the elements) of ``input`` over ``dim`` (deprecated: it
    warns once): ``norm(input, 2, dim, keepdim)``.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.frobenius_norm(tm.tensor([[3., 0.], [0., -4.]]), (0, 1))
    tensor(5.)
    """
    warn_once("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
               "future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead")
    result = tm.norm(input, 2, dim, keepdim)
    return result if out is None else out.resize_(result.shape).copy_(result)


# -- removed in PyTorch 1.9: stubs that raise --------------------------------------------------------

_REMOVED = "This function was deprecated since version 1.9 and is now removed."


def _removed(func: Callable) -> Callable:
    func.__module__ = "tensormodes"
    REMOVED[func.__name__] = func
    return func


@_removed
def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed (raises): use ``linalg.matrix_rank`` (``symmetric`` is its ``hermitian``)."""
    raise RuntimeError(f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
                       "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


@_removed
def solve(input, A, *, out=None):
    """Removed (raises): use ``linalg.solve(A, input)``."""
    raise RuntimeError(f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` "
                       "has its arguments reversed and does not return the LU factorization.\n\nTo get the LU "
                       "factorization see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\n"
                       "X = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")


@_removed
def lstsq(input, A, *, out=None):
    """Removed (raises): use ``linalg.lstsq(A, input)``."""
    raise RuntimeError(f"{_REMOVED} "
                       "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
                       "reversed arguments and does not return the QR decomposition in the returned tuple (although "
                       "it returns other information about the problem).\n\nTo get the QR decomposition consider "
                       "using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of "
                       "the solution in the last m - n columns of the returned value whenever m > n. In "
                       "torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named "
                       "tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, "
                       "A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


@_removed
def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed (raises): use ``linalg.eigh`` or ``linalg.eigvalsh``."""
    raise RuntimeError(f"{_REMOVED} The default behavior has changed from using the upper triangular portion of the "
                       "matrix by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
                       "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else "
                       "'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
                       "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


@_removed
def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed (raises): use ``linalg.eig`` or ``linalg.eigvals``."""
    raise RuntimeError(f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
                       "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\n"
                       "L_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should "
                       "be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")
