"""One check for a layer against PyTorch's with the same weights, for layers whose inputs and
outputs may be nested (recurrent states, attention weights) and whose forward takes keywords.

``check_layer("L.nn.LSTM(3, 4)", [x, (h0, c0)])`` builds the layer in both libraries (``L`` is
the library), compares their ``repr`` and state-dict keys, shapes and dtypes, loads PyTorch's
weights into ours, runs both forward on the same NumPy inputs (floating arrays among the
positional inputs require grad), then backward with the same seeded output gradients, and
compares every output, input gradient and parameter gradient.
"""

from __future__ import annotations

import warnings

import numpy as np

import tensormodes as tm


def _as_torch_repr(text: str) -> str:
    return text.replace("tensormodes.", "torch.")


def _convert(library, value, differentiable: bool, leaves: list):
    if isinstance(value, np.ndarray):
        tensor = library.from_numpy(value.copy())
        if differentiable and value.dtype.kind == "f":
            tensor.requires_grad_(True)
            leaves.append(tensor)
        return tensor
    if isinstance(value, (tuple, list)):
        return type(value)(_convert(library, v, differentiable, leaves) for v in value)
    return value


def _flatten(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _close(ours, theirs, what: str, rtol: float, atol: float) -> None:
    assert (ours is None) == (theirs is None), f"{what}: {ours} vs {theirs}"
    if theirs is None:
        return
    mine, reference = ours.detach().numpy(), theirs.detach().numpy()
    assert mine.dtype == reference.dtype, f"{what}: dtype {mine.dtype} != {reference.dtype}"
    assert mine.shape == reference.shape, f"{what}: shape {mine.shape} != {reference.shape}"
    np.testing.assert_allclose(mine, reference, rtol=rtol, atol=atol, err_msg=what)


def build_pair(torch, expression: str, namespace: dict | None = None):
    """The layer ``expression`` built by both libraries, ours holding PyTorch's weights."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = eval(expression, {"L": torch, **(namespace or {})})
        ours = eval(expression, {"L": tm, **(namespace or {})})
    assert _as_torch_repr(repr(ours)) == repr(theirs)
    their_state = theirs.state_dict()
    assert [(k, tuple(v.shape), _as_torch_repr(str(v.dtype))) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape), str(v.dtype)) for k, v in their_state.items()]
    result = ours.load_state_dict({k: tm.from_numpy(v.detach().numpy().copy()) for k, v in their_state.items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    return ours, theirs


def check_layer(torch, expression: str, inputs: list, kwargs: dict | None = None, *, train: bool = False,
                rtol: float = 1e-5, atol: float = 1e-5, namespace: dict | None = None) -> None:
    """Compare the layer ``expression`` (over ``L``) in both libraries on ``inputs`` (see the module
    docstring); ``kwargs`` (arrays or plain values) are passed to forward without gradients."""
    ours, theirs = build_pair(torch, expression, namespace)
    ours.train(train)
    theirs.train(train)
    results = []
    for library, module in ((tm, ours), (torch, theirs)):
        leaves: list = []
        args = _convert(library, list(inputs), True, leaves)
        keywords = {k: _convert(library, v, False, []) for k, v in (kwargs or {}).items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            output = module(*args, **keywords)
        results.append((leaves, output))
    (our_leaves, our_out), (their_leaves, their_out) = results
    our_flat, their_flat = _flatten(our_out), _flatten(their_out)
    assert len(our_flat) == len(their_flat), f"{expression}: {len(our_flat)} outputs vs {len(their_flat)}"
    seeds = np.random.default_rng(7)
    our_loss, their_loss = 0, 0
    for i, (mine, reference) in enumerate(zip(our_flat, their_flat)):
        _close(mine, reference, f"{expression}: output {i}", rtol, atol)
        if reference is not None and reference.requires_grad:
            seed = seeds.standard_normal(tuple(reference.shape)).astype(np.float32)
            our_loss = our_loss + (mine * tm.from_numpy(seed.copy())).sum()
            their_loss = their_loss + (reference * torch.from_numpy(seed)).sum()
    if isinstance(their_loss, int):
        return
    our_loss.backward()
    their_loss.backward()
    for i, (mine, reference) in enumerate(zip(our_leaves, their_leaves)):
        _close(mine.grad, reference.grad, f"{expression}: grad of input {i}", rtol * 10, atol * 10)
    their_params = dict(theirs.named_parameters())
    for name, param in ours.named_parameters():
        _close(param.grad, their_params[name].grad, f"{expression}: grad of {name}", rtol * 10, atol * 10)
