"""What each op's backward node keeps, checked against PyTorch.

A gradient formula that only needs an input's shape or dtype must save just that
(``<param>_shape`` / ``<param>_dtype``), as PyTorch's nodes do (``SumBackward0``
keeps ``self_sym_sizes``, ``AddBackward0`` nothing). Otherwise two things PyTorch
allows break: modifying the input in place between forward and backward, and a
second backward (without ``retain_graph``) through nodes that saved nothing.

For every differentiable op sample (the samples of ``test_gradients``, in float64):
whenever PyTorch's backward succeeds, tensormodes' must succeed too and give the
same gradients. Where PyTorch raises, tensormodes may raise or not.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm

from .op_samples import callable_for
from .test_gradients import TORCH_ORACLE_BUGS, _inputs, _tm_maker, _torch_maker, differentiable_cases

# Where tensormodes cannot yet do what PyTorch does, for a reason outside the op's formula:
# op name (or (op name, sample index)) -> why. Only there may our backward raise PyTorch's
# "modified by an inplace operation" / "backward through the graph a second time" errors
# where PyTorch's succeeds; ``test_allowed_failures_still_happen`` flags entries that are
# no longer needed. Keep it short: a formula that needs only sizes asks for ``<param>_shape``.
_ONE_OPERAND = (
    "einsum of one operand needs only its sizes (PyTorch's composite of diagonal / permute / sum "
    "saves no tensor), of several the other operands' values; but the operands are one tensor-list "
    "parameter (*operands), and a formula taking it saves it on every call: save_only_for relates "
    "whole parameters, so it cannot tell one operand from several")
_OVERLOADS = (
    "one formula serves overloads that need different things: max/min/median(input) need "
    "input's values (PyTorch's MaxBackward1 saves self too), their dim overloads only its "
    "shape and the indices; a formula's parameters are saved for every overload")
_COMPOSITE = (
    "PyTorch implements it as a composite whose nodes save tensors derived from the inputs "
    "(broadcast copies of matmul's operands, matrix_power's inverse, take_along_dim's "
    "adjusted indices, a 0-dim index read as an int, kron's reshaped operands, trapezoid's differences and sums, "
    "ldexp's power of two, ndtr's x / sqrt(2) that its erf node keeps), "
    "not the inputs themselves")
_NO_HISTORY = (
    "intermediates a kernel hands its formula (saves=) carry no history: _cross_entropy_loss's formula gets "
    "log_softmax's result that way, but keeps input too, to recompute it with history for create_graph=True; "
    "PyTorch's composite keeps only that result (a saved output, which has history)")
_GRAD_OUTPUT = (
    "the formula keeps grad_output: for the weight's gradient (beyond PyTorch) and, in "
    "_cross_entropy_loss_backward, for log_probs' gradient; PyTorch's nodes keep none (log_softmax's "
    "double backward keeps the intermediate nll_loss gradient instead, which has history)")
_RECOMPUTED_SVD = (
    "svdvals and norm(p='nuc') keep their input and recompute its SVD in backward (through the public "
    "svd, so that the gradient has history for create_graph=True); PyTorch's composites keep the forward "
    "SVD's factors instead (outputs of LinalgSvdBackward0, which have history). Keeping them here would "
    "need a kernel to hand its formula intermediates with history, which saves= cannot")
_QUANTILE_Q = (
    "a q tensor's gradient needs the input's values, which quantile then saves (save_only_for); PyTorch's "
    "composite keeps the sorted values instead (a copy, which the input's in-place change does not reach)")
ALLOWED_TO_RAISE: dict[str | tuple[str, int], str] = {
    **dict.fromkeys(("quantile", "nanquantile"), _QUANTILE_Q),
    **dict.fromkeys((("einsum", 2), ("einsum", 4)), _ONE_OPERAND),  # "ii", "...ij->...ji"
    **dict.fromkeys(("max", "min", "median", "nanmedian"), _OVERLOADS),
    **dict.fromkeys(("matmul", "matrix_power", "linalg_matrix_power", "take_along_dim", ("getitem", 9), "kron",
                     "trapezoid", "trapz", ("ldexp", 1), ("ldexp", 4), "special_ndtr"), _COMPOSITE),
    "_cross_entropy_loss": _NO_HISTORY,
    "svd": "torch.svd's formula keeps the input too: with compute_uv=False the singular vectors its gradient needs "
           "are recomputed from it (PyTorch computes them in the forward when grad mode is on)",
    **dict.fromkeys(("linalg_svdvals", ("norm", 8), ("norm", 9)), _RECOMPUTED_SVD),  # norm's samples 8, 9: p='nuc'
    "linalg_eigvals": "eigvals keeps its input and recomputes its eigenvectors in backward (through the public eig, "
                      "so that the gradient has history for create_graph=True); PyTorch keeps the forward's",
    # linalg norms' singular-value orders ('nuc', 2, -2): samples 1, 6, 7, 11 and 2, 3
    **dict.fromkeys(tuple(("linalg_matrix_norm", i) for i in (1, 6, 7, 11)) + (("linalg_norm", 2), ("linalg_norm", 3)),
                    _RECOMPUTED_SVD),
    **dict.fromkeys(("_cross_entropy_loss_backward", "_nll_loss_backward"), _GRAD_OUTPUT),
    ("mkldnn_rnn_layer", 1): "the oracle (PyTorch's lstm over the flipped input, op_samples._torch_lstm_layer) saves "
                             "a flipped copy; PyTorch's own op saves the input itself, as ours does",
}

CASES = list(differentiable_cases())


def _tensors(value, found):
    """Every tensor in an argument (lists, tuples and indices looked into), in order."""
    if isinstance(value, (list, tuple)):
        for v in value:
            _tensors(v, found)
    elif hasattr(value, "shape") and hasattr(value, "requires_grad"):
        found.append(value)
    return found


def _replace(value, mapping):
    """``value`` with each tensor in it replaced by ``mapping[id(tensor)]``."""
    if id(value) in mapping:
        return mapping[id(value)]
    if isinstance(value, list):
        return [_replace(v, mapping) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_replace(v, mapping) for v in value)
    return value


def _run(library, opdef, sample, modify=None):
    """Run the op on copies of the sample's inputs that are not leaves, then (``modify``:
    a position among the tensor inputs) bump that input's version in place without
    changing its values; return ``(leaves, differentiable outputs)``."""
    args, kwargs, leaves = _inputs(sample, _tm_maker if library is tm else _torch_maker)
    # A leaf requiring grad cannot be modified in place: its copies can. CloneBackward0
    # saves nothing, so the copies do not decide the outcome themselves.
    mapping = {id(t): t.clone() for t in _tensors(list(args) + list(kwargs.values()), [])}
    args = [_replace(a, mapping) for a in args]
    kwargs = {k: _replace(v, mapping) for k, v in kwargs.items()}
    func = callable_for(opdef, library)
    if opdef.mutates:  # writes into its first argument, which is then the output
        outputs = args[0]
        func(*args, **kwargs)
    else:
        outputs = func(*args, **kwargs)
    if modify is not None:
        with library.no_grad():
            target = _inputs_of(opdef, args, kwargs)[modify]
            target.copy_(target.clone())  # same values, next version
    outputs = [o for o in (outputs if isinstance(outputs, tuple) else (outputs,))
               if hasattr(o, "requires_grad") and o.requires_grad]
    return leaves, outputs


def _inputs_of(opdef, args, kwargs):
    """The tensor inputs to modify: all of them, except the output of an op writing into
    its first argument."""
    return _tensors((list(args[1:]) if opdef.mutates else list(args)) + list(kwargs.values()), [])


def _backward(library, leaves, outputs, times=1):
    rng = np.random.default_rng(1)
    seeds = [library.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype) for o in outputs]
    for _ in range(times):
        grads = library.autograd.grad(outputs, leaves, seeds, allow_unused=True)
    return grads


def _allowed(opdef, index: int) -> str | None:
    return ALLOWED_TO_RAISE.get((opdef.name, index)) or ALLOWED_TO_RAISE.get(opdef.name)


def _check(opdef, sample, index: int, *, modify=None, times=1) -> bool:
    """Compare with PyTorch; True if ours raised where it is allowed to."""
    import torch

    try:
        t_leaves, t_outputs = _run(torch, opdef, sample, modify)
    except RuntimeError as error:
        if "is not differentiable with respect to argument" in str(error):
            return False  # PyTorch has no gradient here
        raise
    if not t_outputs:
        return False
    try:
        theirs = _backward(torch, t_leaves, t_outputs, times)
    except RuntimeError:
        return False  # PyTorch needed what was modified or freed: tensormodes may raise as well
    leaves, outputs = _run(tm, opdef, sample, modify)
    if _allowed(opdef, index) is not None:
        try:
            ours = _backward(tm, leaves, outputs, times)
        except RuntimeError as error:
            assert "modified by an inplace operation" in str(error) or "a second time" in str(error)
            return True
    else:
        ours = _backward(tm, leaves, outputs, times)
    for o, t in zip(ours, theirs, strict=True):
        if t is None:
            assert o is None or not np.any(o.numpy())
            continue
        assert o is not None
        np.testing.assert_allclose(o.numpy(), t.numpy(force=True), rtol=1e-6, atol=1e-8)
    return False


def _check_modified(opdef, sample, index: int) -> bool:
    args, kwargs, _ = _inputs(sample, _tm_maker)
    raised = False
    for position in range(len(_inputs_of(opdef, args, kwargs))):
        raised |= _check(opdef, sample, index, modify=position)
    return raised


def _index(opdef, request) -> int:
    index = int(request.node.callspec.id.rsplit("-", 1)[1])
    if (opdef.name, index) in TORCH_ORACLE_BUGS:
        pytest.skip("PyTorch's own gradient is inconsistent with its forward here (see test_gradients)")
    return index


@pytest.mark.torch
@pytest.mark.parametrize("opdef, sample", CASES)
def test_backward_after_an_input_is_modified_in_place_matches_torch(opdef, sample, request):
    """Each tensor input in turn is modified in place (same values, next version) after the
    forward pass: where PyTorch's backward still works, ours must too, with its gradients."""
    _check_modified(opdef, sample, _index(opdef, request))


@pytest.mark.torch
@pytest.mark.parametrize("opdef, sample", CASES)
def test_second_backward_without_retain_graph_matches_torch(opdef, sample, request):
    """Where PyTorch's nodes saved nothing, a second backward works without retain_graph."""
    _check(opdef, sample, _index(opdef, request), times=2)


@pytest.mark.torch
@pytest.mark.parametrize("key", list(ALLOWED_TO_RAISE), ids=str)
def test_allowed_failures_still_happen(key):
    """An entry of ALLOWED_TO_RAISE whose op no longer raises anywhere is to be removed."""
    name, only = (key, None) if isinstance(key, str) else key
    raised = False
    for case in CASES:
        opdef, sample = case.values
        index = int(case.id.rsplit("-", 1)[1])
        if opdef.name != name or (only is not None and index != only) or case.marks \
                or (name, index) in TORCH_ORACLE_BUGS:
            continue
        raised |= _check_modified(opdef, sample, index) | _check(opdef, sample, index, times=2)
    assert raised, f"{key!r} no longer fails where PyTorch succeeds: remove it from ALLOWED_TO_RAISE"


def test_backward_twice_through_nodes_that_saved_nothing():
    """The example of the docs: nodes that saved nothing can be run again."""
    a = tm.ones(2, requires_grad=True)
    s = (a + 1).sum()
    s.backward()
    s.backward()
    assert a.grad.tolist() == [2.0, 2.0]


def test_shape_only_input_can_change_after_the_op():
    a = tm.ones(2, 3, requires_grad=True)
    b = a.clone()
    y = b.sum(0).exp().mean()
    with tm.no_grad():
        b.add_(1)  # values differ now, but sum's and mean's backward need only sizes
    y.backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full((2, 3), np.exp(2.0) / 3))


def test_operand_saved_only_for_the_other_gradient():
    """mul saves an operand only for the other's gradient (save_only_for): ``y[0] * 3`` keeps
    nothing of the view ``y[0]``, so writing into ``y`` afterwards leaves backward intact."""
    x = tm.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y[1].add_(y[0] * 3)
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 1.0]
